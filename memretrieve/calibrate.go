package memretrieve

import (
	"crypto/sha256"
	"math"
	"slices"

	"github.com/forgemem/forgemem/memretrieve/internal/index"
)

// The relevance gate lets a memory into a turn's injection only on evidence
// that it is relevant: a score well above what unrelated text scores
// against this collection. What unrelated text scores is measured, not
// assumed: at each index build that changed the indexed memories, the
// probe texts (probes.txt: sentences and passages of three domains) are
// scored against the collection like a turn's queries — their best cosine
// similarity with any memory, with the embedder in use, and their best
// lexical evidence (index.Lex.Information) — and a null model is fitted
// to each: per domain, the mean score as a line in the logarithm of the
// text's length, and one spread, the pooled standard deviation of the
// domains' residuals. The collection is unrelated to at least one domain
// (a coding collection to everyday life, a personal one to code): the
// gate's mean for a query of a length is the lowest of the domains'. The
// model is a few numbers, kept in the on-disk cache beside the vectors (see
// gatecache.go), so a new process does not compute it again, and computed
// again for another embedding model.

// calibration is the relevance gate's null model of a collection.
type calibration struct {
	// Vector is the model of the best cosine similarity of unrelated text
	// with a memory; nil when the probes have no vectors (the embedder
	// has not given them yet) or the index none.
	Vector *nullModel `json:"vector,omitempty"`
	// Lexical is the model of the best lexical evidence of unrelated
	// text (index.Lex.Information); nil with the lexical index off.
	Lexical *nullModel `json:"lexical,omitempty"`
}

// nullModel is the distribution of a best score of unrelated text against
// a collection: per probe domain, its mean as A + B·ln(tokens), and one
// standard deviation. MinTokens is the length of the shortest probe it was
// fitted on: a shorter text is judged as one of that length, since the
// line, drawn out below what was measured, would fall to means no text
// scores (a one-word search would find every memory "above chance").
type nullModel struct {
	Domains   []lineFit `json:"domains"`
	SD        float64   `json:"sd"`
	MinTokens int       `json:"min_tokens"`
}

// lineFit is a least-squares line y = A + B·x.
type lineFit struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

// minSD bounds a null model's spread from below, so that a collection on
// which every probe scores the same (one memory, or none sharing a word)
// still has a finite threshold; minLexicalSD is the bound of the lexical
// side, in IDF units: with few memories, one shared word is no evidence on
// its own, as a common word's IDF is about 0.3 and a rare one's several.
const (
	minSD        = 0.01
	minLexicalSD = 0.5
)

// mean is the model's mean score of unrelated text of tokens tokens (at
// least MinTokens): the lowest of its domains'.
func (m *nullModel) mean(tokens int) float64 {
	x := math.Log(float64(max(tokens, m.MinTokens, 1)))
	mean := math.Inf(1)
	for _, d := range m.Domains {
		mean = min(mean, d.A+d.B*x)
	}
	return mean
}

// threshold is the score a text of tokens tokens must reach to be z
// standard deviations above the model's mean.
func (m *nullModel) threshold(tokens int, z float64) float64 {
	return m.mean(tokens) + z*m.SD
}

// z is how many standard deviations score is above the model's mean for a
// text of tokens tokens.
func (m *nullModel) z(score float64, tokens int) float64 {
	return (score - m.mean(tokens)) / m.SD
}

// probeScore is a probe's best score against a collection.
type probeScore struct {
	domain, tokens int
	score          float64
}

// fitNull fits the null model to the probes' scores: a line per domain,
// the pooled standard deviation of the residuals, at least minSpread, and
// the shortest probe's length. It returns nil without scores.
func fitNull(scores []probeScore, minSpread float64) *nullModel {
	byDomain := make([][]probeScore, len(theProbes().domains))
	for _, s := range scores {
		byDomain[s.domain] = append(byDomain[s.domain], s)
	}
	m := &nullModel{MinTokens: math.MaxInt}
	var sq float64
	var n int
	for _, ss := range byDomain {
		if len(ss) < 3 {
			continue
		}
		f := fitLine(ss)
		m.Domains = append(m.Domains, f)
		for _, s := range ss {
			m.MinTokens = min(m.MinTokens, max(s.tokens, 1))
			r := s.score - (f.A + f.B*math.Log(float64(max(s.tokens, 1))))
			sq += r * r
		}
		n += len(ss) - 2 // two parameters per line
	}
	if len(m.Domains) == 0 {
		return nil
	}
	m.SD = max(math.Sqrt(sq/float64(n)), minSpread)
	return m
}

// fitLine is the least-squares line of score over ln(tokens).
func fitLine(ss []probeScore) lineFit {
	var sx, sy float64
	for _, s := range ss {
		sx += math.Log(float64(max(s.tokens, 1)))
		sy += s.score
	}
	n := float64(len(ss))
	mx, my := sx/n, sy/n
	var sxx, sxy float64
	for _, s := range ss {
		dx := math.Log(float64(max(s.tokens, 1))) - mx
		sxx += dx * dx
		sxy += dx * (s.score - my)
	}
	b := 0.0
	if sxx > 0 {
		b = sxy / sxx
	}
	return lineFit{A: my - b*mx, B: b}
}

// calibrateFrom measures the null models of a snapshot's indexes: the
// vector one from the probes' vectors in vecs (nil, or any missing: no
// vector model), the lexical one from lex (nil: none). Given, when prev is
// not nil, the probes' best vector scores over the rows of idx but newRows
// (the rows the last calibration searched), it searches only newRows. It
// returns the probes' best vector scores over every row of idx (nil when
// there are none), for the next call.
func calibrateFrom(idx *index.Flat, lex *index.Lex, vecs [][]float32, par int, prev *probeBest, newRows []int) (*calibration, *probeBest) {
	c := &calibration{}
	var best *probeBest
	if idx.Len() > 0 && len(vecs) == len(theProbes().all) {
		best = bestOfProbes(idx, vecs, par, prev, newRows)
		scores := make([]probeScore, 0, len(theProbes().all))
		for i, p := range theProbes().all {
			if best.found[i] {
				scores = append(scores, probeScore{domain: p.domain, tokens: p.tokens, score: float64(best.score[i])})
			}
		}
		c.Vector = fitNull(scores, minSD)
	}
	if lex.Len() > 0 {
		scores := make([]probeScore, len(theProbes().all))
		for i, p := range theProbes().all {
			scores[i] = probeScore{domain: p.domain, tokens: p.tokens, score: lex.BestInformation(lex.KnownTerms(probeTerms()[i]), lexicalMinRows)}
		}
		c.Lexical = fitNull(scores, minLexicalSD)
	}
	return c, best
}

// probeBest is each probe's best cosine similarity with a row of an index
// of rows rows; found is false for a probe no row scored (none can, when
// the index has rows).
type probeBest struct {
	rows  int
	score []float32
	found []bool
}

// bestOfProbes returns the probes' best scores over idx: searched in
// full, or, given prev (over every row but newRows), only over newRows, the
// best of the two kept. A best score is the best of any set of rows'
// scores, whatever their order; only the score counts here.
func bestOfProbes(idx *index.Flat, vecs [][]float32, par int, prev *probeBest, newRows []int) *probeBest {
	part := idx
	if prev == nil || len(prev.score) != len(vecs) {
		prev = nil
	} else {
		part = &index.Flat{Dim: idx.Dim, IDs: make([]string, len(newRows)), Vecs: make([]float32, 0, len(newRows)*idx.Dim)}
		for j, r := range newRows {
			part.IDs[j] = idx.IDs[r]
			part.Vecs = append(part.Vecs, idx.Vecs[r*idx.Dim:(r+1)*idx.Dim]...)
		}
	}
	hits, _ := part.Search(vecs, 1, par)
	best := &probeBest{rows: idx.Len(), score: make([]float32, len(vecs)), found: make([]bool, len(vecs))}
	for i := range vecs {
		if prev != nil {
			best.score[i], best.found[i] = prev.score[i], prev.found[i]
		}
		if len(hits[i]) > 0 && (!best.found[i] || hits[i][0].Score > best.score[i]) {
			best.score[i], best.found[i] = hits[i][0].Score, true
		}
	}
	return best
}

// calibrationKey identifies what a calibration was measured on: the probe
// set, the embedding model and dimension, the texts of the lexical index
// (lexKeys) and of the vector index (vecKeys), each sorted (see keySet). A
// text that several memories hold counts as many times: the lexical
// index's statistics (how many rows, how many hold a word) count it so.
func calibrationKey(model string, dim int, lexKeys, vecKeys []contentKey) [32]byte {
	f := fingerprinter{h: sha256.New()}
	f.str(theProbes().version)
	f.str(model)
	f.int(dim)
	for _, keys := range [][]contentKey{lexKeys, vecKeys} {
		f.int(len(keys))
		for _, k := range keys {
			f.h.Write(k[:])
		}
	}
	var key [32]byte
	f.h.Sum(key[:0])
	return key
}

// keySet returns keys sorted, in a new slice.
func keySet(keys []contentKey) []contentKey {
	sorted := slices.Clone(keys)
	slices.SortFunc(sorted, compareKeys)
	return sorted
}

// withKeys returns set (sorted) with keys added, in a new slice.
func withKeys(set, keys []contentKey) []contentKey {
	out := slices.Clone(set)
	for _, k := range keys {
		i, _ := slices.BinarySearchFunc(out, k, compareKeys)
		out = slices.Insert(out, i, k)
	}
	return out
}

func compareKeys(a, b contentKey) int { return slices.Compare(a[:], b[:]) }

// calibration returns the relevance gate's calibration of a snapshot's
// indexes — idx, the vector index of the items at rows, and lex, the
// lexical index of every item —: the engine's latest when nothing it was
// measured on changed, else the one kept in the cache folder for them,
// else a new one (keepCalibration keeps it there at the end of the build).
// Nil with the gate off. Callers hold buildMu.
func (e *Engine) calibration(idx *index.Flat, lex *index.Lex, items []item, rows []int, ext *extension) *calibration {
	if !e.gateOn() {
		return nil
	}
	lexKeys, vecKeys := e.calibrationSets(lex != nil, items, rows, ext)
	vecs := e.probeVectors()
	dim := e.cache.dim
	if vecs == nil {
		dim = 0 // no vector model: the key says so
	}
	key := calibrationKey(e.cache.model, dim, lexKeys, vecKeys)
	e.calSets = &calibrationSets{lex: lexKeys, vec: vecKeys}
	if e.cal != nil && key == e.calKey {
		return e.cal
	}
	cal := e.cache.loadCalibration(key)
	e.calKept = cal != nil
	if cal == nil {
		// The probes' best scores over the rows the last build searched
		// stand, when this index extends that one.
		var prev *probeBest
		var newRows []int
		if ext != nil && e.probeBest != nil && e.probeBest.rows+len(ext.newRows) == idx.Len() && idx.Quant == nil {
			prev, newRows = e.probeBest, ext.newRows
		}
		cal, e.probeBest = calibrateFrom(idx, lex, vecs, e.cfg.Parallelism, prev, newRows)
		e.calibrations.Add(1)
	} else {
		e.probeBest = nil
	}
	e.cal, e.calKey = cal, key
	return cal
}

// keepCalibration keeps the latest calibration in the cache folder, once,
// at the end of a build that ran to its end, unless it lacks the vector
// model while the index has vectors (the probes could not be embedded):
// that one is measured again. Callers hold buildMu.
func (e *Engine) keepCalibration() {
	if e.cal == nil || e.calKept {
		return
	}
	if s := e.snap.Load(); e.cal.Vector == nil && s != nil && s.idx.Len() > 0 {
		return
	}
	e.cache.storeCalibration(e.calKey, e.cal)
	e.calKept = true
}

// calibrationSets are the sets of content keys a calibration key was made
// of (see calibrationKey).
type calibrationSets struct{ lex, vec []contentKey }

// calibrationSets returns the sets of content keys of the lexical index
// (empty without one) and of the vector index of items at rows: those of
// the last calibration with the new items and rows added, when the indexes
// extend the last ones (ext), else made anew.
func (e *Engine) calibrationSets(hasLex bool, items []item, rows []int, ext *extension) (lexKeys, vecKeys []contentKey) {
	if ext == nil || e.calSets == nil {
		var lex, vec []contentKey
		if hasLex {
			lex = mapSlice(items, func(it item) contentKey { return it.key })
		}
		vec = mapSlice(rows, func(i int) contentKey { return items[i].key })
		return keySet(lex), keySet(vec)
	}
	var newLex []contentKey
	if hasLex {
		newLex = mapSlice(ext.newItems, func(i int) contentKey { return items[i].key })
	}
	newVec := mapSlice(ext.newRows, func(j int) contentKey { return items[rows[j]].key })
	return withKeys(e.calSets.lex, newLex), withKeys(e.calSets.vec, newVec)
}
