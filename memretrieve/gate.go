package memretrieve

import (
	"fmt"
	"math"

	"github.com/forgemem/forgemem/memcore"
)

// A turn's relevance gate weighs the evidence that each ranked memory is
// relevant to the turn, from each side that found it, against the
// calibration of the collection (calibrate.go):
//
//   - vector: the memory's cosine similarity with a vector query, against
//     the calibrated best similarity of unrelated text of that query's
//     length;
//   - lexical: the IDF of the words the memory shares with the latest user
//     message or the latest exchange (index.Lex.Information), against the
//     calibrated best of unrelated text of that length.
//     The whole window is left out: a long text shares some rare word with
//     almost any memory.
//
// Each comparison is a test; a memory passes when one of its scores is z
// standard deviations above the null mean, z = Φ⁻¹(1 − GateChance/tests),
// so that all the turn's tests together let unrelated text through about
// GateChance of the time (Bonferroni).

// lexicalGateTexts is how many of the turn's focused queries the lexical
// side of the gate weighs: the latest user message and the latest
// exchange.
const lexicalGateTexts = 2

// lexicalMinRows is the fewest memories the lexical evidence counts a
// collection as holding: in a collection of a few memories every word is
// in one of the few, and would weigh nothing (index.Lex.Information).
const lexicalMinRows = 100

// gateOn reports whether the relevance gate is on.
func (e *Engine) gateOn() bool { return e.cfg.GateChance < 1 }

// Evidence is what a ranked memory's relevance to the turn rests on, and
// what the relevance gate made of it.
type Evidence struct {
	// Vector is the cosine similarity of the memory (its best version) with
	// the vector query it matched best against the gate — the latest user
	// message, the latest exchange, the window, or a hypothesis — and
	// VectorNeeded what that query needed to pass the gate; both 0 when
	// the vector search did not find the memory, VectorNeeded 0 with the
	// gate off or not calibrated.
	Vector, VectorNeeded float64
	// Lexical is the evidence of the words the memory shares with the
	// latest user message or the latest exchange (the better of the two):
	// the sum of the shared terms' IDF, ln(1 + (N − df + 0.5)/(df + 0.5))
	// for a term df of the N memories hold (N counted as at least 100),
	// the weight BM25 gives each term. LexicalTerms counts the shared
	// terms, and LexicalNeeded is what the gate needed; all 0 when the
	// memory shares no word with them.
	Lexical, LexicalNeeded float64
	LexicalTerms           int
	// Relevance is the gate's confidence that the memory is relevant, from
	// 0 to 1: one less the chance that unrelated text scores as high on
	// the turn's tests. The gate lets in memories of at least 1 −
	// Config.GateChance. 0 with the gate off or not calibrated.
	Relevance float64
	// Cleared says on which side the memory's evidence cleared the gate's
	// threshold by itself (Vector ≥ VectorNeeded, Lexical ≥
	// LexicalNeeded): FoundVector, FoundLexical, FoundBoth, or 0. 0 with
	// the gate off or not calibrated.
	Cleared Found
	// Passed says on which side the memory's evidence admitted it into
	// the injection: FoundVector, FoundLexical, FoundBoth, or 0 when it was
	// not admitted. A memory is admitted when one of the turn's first
	// memories cleared the gate's thresholds and its own evidence stands
	// above chance, near the best hit's (see the package documentation),
	// so a side may be in Passed and not in Cleared: its evidence
	// supports a turn another memory's evidence let in. With the gate off
	// it is what found the memory.
	Passed Found
	// zVector and zLexical are how far the evidence of each side stands
	// above chance, in standard deviations above the null mean; the
	// cut-off compares them with the best hit's of the same side.
	zVector, zLexical float64
}

// Strong reports whether the gate admitted the memory.
func (ev Evidence) Strong() bool { return ev.Passed != 0 }

// DropReason says why a ranked memory is not in the injection.
type DropReason uint8

// The reasons a ranked memory is left out.
const (
	// DropNone: the memory is in the injection.
	DropNone DropReason = iota
	// DropBelowGate: none of the turn's first memories passed the relevance
	// gate's thresholds (Evidence.VectorNeeded, Evidence.LexicalNeeded), so
	// the turn gets none; or this one's evidence is no better than chance.
	DropBelowGate
	// DropCliff: the turn passed the gate, but this memory's evidence
	// stands more than five standard deviations under the best hit's: the
	// evidence falls away there.
	DropCliff
	// DropLimit: it passed, but Config.MaxMemories memories came first.
	DropLimit
	// DropBudget: it passed, but the block would not fit in
	// Config.InjectionTokenBudget with it (counted in Result.Omitted).
	DropBudget
	// DropStale: it passed, but Config.StaleCheck found it outdated and
	// Config.Stale is StaleDrop (counted in Result.StaleDropped).
	DropStale
	// DropHeld: it passed, but Config.HoldCheck holds it for a person's
	// review.
	DropHeld
)

// String says why, in words.
func (r DropReason) String() string {
	switch r {
	case DropNone:
		return ""
	case DropBelowGate:
		return "below the relevance gate"
	case DropCliff:
		return "far below the best hit's evidence"
	case DropLimit:
		return "over MaxMemories"
	case DropBudget:
		return "over the token budget"
	case DropHeld:
		return "held for review"
	case DropStale:
		return "outdated"
	}
	return fmt.Sprintf("DropReason(%d)", int(r))
}

// MarshalText writes the String form, so that DropReason reads well in
// JSON.
func (r DropReason) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// Dropped is a memory the turn's search ranked but left out of the
// injection, with why.
type Dropped struct {
	// ID is the id of the head of the memory's chain.
	ID string
	// Score is its score in the turn's ranking (Candidate.Score).
	Score float64
	// Evidence is what its relevance rests on, with the gate's thresholds.
	Evidence Evidence
	Reason   DropReason
}

// turnGate is the relevance gate of one turn: its calibration, its tests
// and the standard deviations a score must stand above the null mean.
type turnGate struct {
	on  bool
	cal *calibration
	// vtokens holds the length of each vector query, in the order of the
	// search's results; lterms and ltokens the terms and length of each
	// text the lexical side weighs.
	vtokens []int
	lterms  [][]string
	ltokens []int
	tests   int
	z       float64
}

// newGate returns the gate of a turn whose vector queries searched are of
// vtokens tokens (none when the vector search did not run) and whose
// focused queries are focused, over snap.
func (e *Engine) newGate(snap *snapshot, vtokens []int, focused []string) *turnGate {
	g := &turnGate{on: e.gateOn(), cal: snap.cal}
	if !g.on || g.cal == nil {
		return g
	}
	if g.cal.Vector != nil {
		g.vtokens = vtokens
	}
	if g.cal.Lexical != nil && snap.lex != nil {
		for _, text := range focused[:min(lexicalGateTexts, len(focused))] {
			g.lterms = append(g.lterms, snap.lex.Terms(text))
			g.ltokens = append(g.ltokens, memcore.EstimateTokens(text))
		}
	}
	g.tests = len(g.vtokens) + len(g.lterms)
	if g.tests > 0 {
		g.z = math.Sqrt2 * math.Erfinv(1-2*e.cfg.GateChance/float64(g.tests))
	}
	return g
}

// vectorEvidence records on c the evidence of a vector hit of query q with
// cosine similarity score when it stands more standard deviations above the
// null mean than *zBest, c's best so far (−Inf for none), which it updates.
func (g *turnGate) vectorEvidence(c *Candidate, q int, score float64, zBest *float64) {
	if !g.on || g.cal == nil || g.cal.Vector == nil || q >= len(g.vtokens) {
		if score > c.Evidence.Vector {
			c.Evidence.Vector = score
		}
		return
	}
	z := g.cal.Vector.z(score, g.vtokens[q])
	if z > *zBest {
		*zBest = z
		c.Evidence.Vector = score
		c.Evidence.VectorNeeded = g.cal.Vector.threshold(g.vtokens[q], g.z)
	}
}

// lexicalEvidence records on c the lexical evidence of the rows of the
// memory's chain (its head's, and the versions the lexical search found),
// and returns its standard deviations above the null mean.
func (g *turnGate) lexicalEvidence(snap *snapshot, c *Candidate, rows []int) float64 {
	best := math.Inf(-1)
	for i, terms := range g.lterms {
		for _, row := range rows {
			info, matched := snap.lex.Information(row, terms, lexicalMinRows)
			if matched == 0 {
				continue
			}
			z := g.cal.Lexical.z(info, g.ltokens[i])
			if z > best {
				best = z
				c.Evidence.Lexical, c.Evidence.LexicalTerms = info, matched
				c.Evidence.LexicalNeeded = g.cal.Lexical.threshold(g.ltokens[i], g.z)
			}
		}
	}
	return best
}

// judge decides on which sides c clears the gate (Evidence.Cleared), from
// its best standard deviations above the null means on each side, and sets
// its Relevance.
func (g *turnGate) judge(c *Candidate, zVector, zLexical float64) {
	ev := &c.Evidence
	if !g.on {
		ev.Passed = c.Found()
		return
	}
	if g.tests == 0 {
		return
	}
	if c.VectorRank > 0 && !math.IsInf(zVector, -1) && zVector >= g.z {
		ev.Cleared |= FoundVector
	}
	if ev.LexicalTerms > 0 && zLexical >= g.z {
		ev.Cleared |= FoundLexical
	}
	ev.Passed = ev.Cleared // until admit decides the turn's memories
	ev.zVector, ev.zLexical = zVector, zLexical
	// One less the chance of an unrelated text scoring as high on one of
	// the tests (Bonferroni), in [0, 1].
	tail := 0.5 * math.Erfc(max(zVector, zLexical)/math.Sqrt2)
	ev.Relevance = 1 - min(1, float64(g.tests)*tail)
}

// chainRows returns the lexical rows of c's chain to weigh: its head's and
// those of the versions the lexical search found (hit).
func chainRows(snap *snapshot, c *Candidate, hit []int) []int {
	rows := hit
	if r, ok := snap.lexRows[c.ID]; ok {
		rows = append([]int{r}, hit...)
	}
	return rows
}

// gateRanked weighs the lexical evidence of every candidate of the ranking
// and judges each (its vector evidence is recorded as the hits are
// credited, see fuse), then admits the turn's memories (see admit): the
// first window of the ranking. lexHits holds, by head id, the lexical rows
// the search found of each chain; zVector the best vector standard
// deviations of each.
func (g *turnGate) gateRanked(snap *snapshot, ranked []Candidate, lexHits map[string][]int, zVector map[string]float64, window int) {
	for i := range ranked {
		c := &ranked[i]
		zl := math.Inf(-1)
		if g.on && len(g.lterms) > 0 {
			zl = g.lexicalEvidence(snap, c, chainRows(snap, c, lexHits[c.ID]))
		}
		zv, ok := zVector[c.ID]
		if !ok {
			zv = math.Inf(-1)
		}
		g.judge(c, zv, zl)
	}
	if g.on && g.tests > 0 {
		admit(ranked, window)
	}
}

// A memory's evidence may stand supportMargin standard deviations under
// the turn's best hit's, or down to supportShare of it, whichever is lower,
// and still come along: further down, the evidence has fallen away. (The
// share serves a collection whose scores stand many deviations above
// chance, the margin one whose scores stand a few.)
const (
	supportMargin = 5
	supportShare  = 0.25
)

// admit decides the turn's memories from the gate's verdict on each of the
// first window candidates of the ranking (those the injection can hold,
// Config.MaxMemories), which judge set: when none cleared the gate, the
// turn is about nothing the memories hold, and none is admitted; when one
// did, the ranking is to be trusted there, and each of them whose evidence
// stands above chance on a side (z ≥ 0: more than unrelated text gets on
// average) and near the best hit's on that side (supportFloor) comes
// along, that side marked passed. A candidate past the window is never
// admitted. The one test of the turn keeps the share of unrelated turns
// that get any memory at about Config.GateChance, whatever the window.
func admit(ranked []Candidate, window int) {
	window = min(window, len(ranked))
	passed := false
	bestV, bestL := math.Inf(-1), math.Inf(-1)
	for _, c := range ranked[:window] {
		passed = passed || c.Evidence.Cleared != 0
		bestV, bestL = max(bestV, c.Evidence.zVector), max(bestL, c.Evidence.zLexical)
	}
	floorV, floorL := supportFloor(bestV), supportFloor(bestL)
	for i := range ranked {
		ev := &ranked[i].Evidence
		ev.Passed = 0
		if !passed || i >= window {
			continue
		}
		if ranked[i].VectorRank > 0 && ev.zVector >= floorV {
			ev.Passed |= FoundVector
		}
		if ev.LexicalTerms > 0 && ev.zLexical >= floorL {
			ev.Passed |= FoundLexical
		}
	}
}

// supportFloor is the least evidence, in standard deviations above chance,
// a memory needs on a side whose best hit of the turn stands best above it:
// above chance (0), and near the best (supportMargin, supportShare).
func supportFloor(best float64) float64 {
	return max(0, min(best-supportMargin, best*supportShare))
}
