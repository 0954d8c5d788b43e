package embedtest

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/forgemem/forgemem/conformance/internal/conform"
	"github.com/forgemem/forgemem/memcore"
)

// maxDeclaredBatch is the largest Capabilities.MaxBatch: the suite embeds
// twice as many texts in one call.
const maxDeclaredBatch = 100_000

// nearCosine is the cosine similarity above which two vectors count as the
// same text's, for nondeterministic embedders and across batches.
const nearCosine = 0.99

// Run runs the conformance suite for [memcore.Embedder] as subtests of t,
// each against embedders from a fresh [Harness]:
//
//	Embed/OneVectorPerInputInOrder       a batch gives one vector per text, in input order
//	Embed/ZeroInputsGiveZeroVectors      no texts give no vectors and no error
//	Embed/ZeroInputsMakeNoCall           and make no call (needs CallCounter)
//	Embed/ConsistentDimension            every vector has the same (declared) length
//	Embed/FiniteNonZeroVectors           no NaN, no infinity, no zero vector
//	Embed/UnitLength                     vectors have length 1 (unless NotNormalized)
//	Embed/IdenticalTextsIdenticalVectors within and across calls (near-identical if Nondeterministic)
//	Embed/RelatedTextsScoreHigher        a paraphrase is closer than an unrelated text
//	Embed/BatchLargerThanMax             more texts than MaxBatch still work, in order
//	Embed/BatchLargerThanMax/SplitIntoCalls  by splitting them (needs CallCounter and MaxBatch)
//	Model/NonEmptyAndStable              Model is not empty and does not change
//	Model/SameModelSameVectors           embedders reporting the same Model agree
//	Context/CanceledBeforeCall           a canceled context fails promptly with context.Canceled
//	Context/DeadlineExpiredBeforeCall    an expired deadline fails promptly with context.DeadlineExceeded
//	Context/CanceledInFlight             so does cancelling a call in flight (needs SlowHarness)
//	Context/DeadlineExpiresInFlight      and a deadline passing in flight (needs SlowHarness)
//	Errors/<Kind>                        an embedder made to fail as <Kind> returns an error
//	Errors/<Kind>/MatchesKind            which matches <Kind>'s sentinel and no other, and
//	                                     memcore.IsTransient agrees with the kind
//	Errors/<Kind>/NativeErrorReachable   and keeps the native error reachable (needs NativeErrorHarness)
//	ConcurrentCalls                      simultaneous calls each get their own vectors
//
// Failure messages state the rule that was broken. A field of cfg out of
// range fails t at once (t.Fatalf), naming every such field and the values
// it accepts, and no case runs.
func Run(t *testing.T, newHarness HarnessMaker, cfg Config) {
	t.Helper()
	conform.FailNow(t, cfg.Validate())
	s := &suite{newHarness: newHarness, cfg: conform.Config(cfg).WithDefaults()}
	t.Run("Embed", func(t *testing.T) {
		t.Run("OneVectorPerInputInOrder", s.testOrder)
		t.Run("ZeroInputsGiveZeroVectors", s.testZeroInputs)
		t.Run("ZeroInputsMakeNoCall", s.testZeroInputsNoCall)
		t.Run("ConsistentDimension", s.testDimension)
		t.Run("FiniteNonZeroVectors", s.testFiniteNonZero)
		t.Run("UnitLength", s.testUnitLength)
		t.Run("IdenticalTextsIdenticalVectors", s.testIdentical)
		t.Run("RelatedTextsScoreHigher", s.testRelated)
		t.Run("BatchLargerThanMax", s.testLargeBatch)
	})
	t.Run("Model", func(t *testing.T) {
		t.Run("NonEmptyAndStable", s.testModelStable)
		t.Run("SameModelSameVectors", s.testSameModel)
	})
	t.Run("Context", func(t *testing.T) { conform.RunContextCases(t, s.subject()) })
	t.Run("Errors", func(t *testing.T) { conform.RunFailureCases(t, s.subject()) })
	t.Run("ConcurrentCalls", s.testConcurrentCalls)
}

type suite struct {
	newHarness HarnessMaker
	cfg        conform.Config
}

// result is the outcome of one Embed call.
type result struct {
	vecs [][]float32
	err  error
}

func (s *suite) harness(t *testing.T) Harness {
	t.Helper()
	h, err := s.newHarness(t.Context(), t)
	if err != nil {
		t.Fatalf("embedtest: making the harness: %v", err)
	}
	if h == nil {
		t.Fatal("embedtest: the HarnessMaker returned a nil Harness and no error")
	}
	t.Cleanup(h.Close)
	return h
}

func (s *suite) embedder(t *testing.T, h Harness) memcore.Embedder {
	t.Helper()
	e, err := h.NewEmbedder(t.Context())
	if err != nil {
		t.Fatalf("embedtest: Harness.NewEmbedder: %v", err)
	}
	return e
}

// call runs e.Embed(ctx, texts) and waits at most limit for it.
func call(ctx context.Context, e memcore.Embedder, texts []string, limit time.Duration) (result, bool) {
	return conform.Within(limit, func() result {
		vecs, err := e.Embed(ctx, texts)
		return result{vecs, err}
	})
}

// embed makes an ordinary call that must succeed with one vector per text.
// It reports a failure and returns nil when it does not.
func (s *suite) embed(t *testing.T, e memcore.Embedder, texts []string) [][]float32 {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), s.cfg.CallTimeout)
	defer cancel()
	res, ok := call(ctx, e, texts, s.cfg.CallTimeout+s.cfg.CancelGrace)
	switch {
	case !ok:
		t.Errorf("Embed must honour its context: still running %v after its %v deadline",
			s.cfg.CancelGrace, s.cfg.CallTimeout)
		return nil
	case res.err != nil:
		t.Errorf("Embed of %d texts must succeed on a working embedder; got %v", len(texts), res.err)
		return nil
	case len(res.vecs) != len(texts):
		t.Errorf("Embed must return one vector per input: sent %d texts, got %d vectors", len(texts), len(res.vecs))
		return nil
	}
	return res.vecs
}

// embedEach embeds every text in a call of its own.
func (s *suite) embedEach(t *testing.T, e memcore.Embedder, texts []string) [][]float32 {
	t.Helper()
	out := make([][]float32, len(texts))
	for i, text := range texts {
		v := s.embed(t, e, []string{text})
		if v == nil {
			return nil
		}
		out[i] = v[0]
	}
	return out
}

// sameVectors reports whether a and b are the vectors of the same text from
// the same embedder: identical, or near-identical for a nondeterministic
// one.
func sameVectors(a, b []float32, caps Capabilities) bool {
	if caps.Nondeterministic != "" {
		return cosine(a, b) >= nearCosine
	}
	return slices.Equal(a, b)
}

// sameRule states the rule sameVectors checks, for messages.
func sameRule(caps Capabilities) string {
	if caps.Nondeterministic != "" {
		return fmt.Sprintf("near-identical (cosine ≥ %v, declared nondeterministic: %s)", nearCosine, caps.Nondeterministic)
	}
	return "identical"
}

// cosine is the cosine similarity of a and b; 0 when their lengths differ
// or either is zero.
func cosine(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// reporter reports failures of one rule on t, the first maxReports of them
// in full and the rest as a count, so that a broken batch of thousands
// does not bury the message.
type reporter struct {
	t    *testing.T
	rule string
	bad  int
}

const maxReports = 5

func (r *reporter) errorf(format string, args ...any) {
	r.t.Helper()
	if r.bad++; r.bad <= maxReports {
		r.t.Errorf(r.rule+": "+format, args...)
	}
}

func (r *reporter) done() {
	r.t.Helper()
	if r.bad > maxReports {
		r.t.Errorf("%s: %d failures in all, %d not shown", r.rule, r.bad, r.bad-maxReports)
	}
}

// checkMatches reports, on t, each vector of got that is not the vector of
// the text at the same index of want: near-identical to it, and closer to it
// than to the vectors of the other texts (of the neighbouring texts only,
// when neighboursOnly).
func checkMatches(t *testing.T, rule string, got, want [][]float32, neighboursOnly bool) {
	t.Helper()
	r := &reporter{t: t, rule: rule}
	defer r.done()
	for i := range got {
		self := cosine(got[i], want[i])
		if self < nearCosine {
			r.errorf("vector %d does not match input %d's (cosine %.4f < %v)", i, i, self, nearCosine)
			continue
		}
		others := []int{i - 1, i + 1}
		if !neighboursOnly {
			others = others[:0]
			for j := range want {
				others = append(others, j)
			}
		}
		for _, j := range others {
			if j >= 0 && j < len(want) && j != i && cosine(got[i], want[j]) > self {
				r.errorf("vector %d is closer to input %d's than to input %d's", i, j, i)
			}
		}
	}
}

// distinctTexts are sentences on unrelated subjects.
var distinctTexts = []string{
	"The quick brown fox jumps over the lazy dog.",
	"Go modules are versioned with semantic import paths.",
	"Preheat the oven to 200 degrees before baking the bread.",
	"The stock market closed higher on Friday after strong earnings.",
	"Photosynthesis converts sunlight into chemical energy in plants.",
}

func (s *suite) testOrder(t *testing.T) {
	e := s.embedder(t, s.harness(t))
	batch := s.embed(t, e, distinctTexts)
	singles := s.embedEach(t, e, distinctTexts)
	if batch == nil || singles == nil {
		return
	}
	checkMatches(t, "a batch must give one vector per input, in input order, matching the input's vector from a call of its own",
		batch, singles, false)
}

func (s *suite) testZeroInputs(t *testing.T) {
	e := s.embedder(t, s.harness(t))
	for _, texts := range [][]string{nil, {}} {
		ctx, cancel := context.WithTimeout(t.Context(), s.cfg.CallTimeout)
		res, ok := call(ctx, e, texts, s.cfg.CallTimeout+s.cfg.CancelGrace)
		cancel()
		switch {
		case !ok:
			t.Errorf("zero inputs must give zero vectors at once; Embed(%#v) had not returned after %v",
				texts, s.cfg.CallTimeout+s.cfg.CancelGrace)
		case res.err != nil:
			t.Errorf("zero inputs must give zero vectors and no error; Embed(%#v) failed: %v", texts, res.err)
		case len(res.vecs) != 0:
			t.Errorf("zero inputs must give zero vectors; Embed(%#v) gave %d", texts, len(res.vecs))
		}
	}
}

func (s *suite) testZeroInputsNoCall(t *testing.T) {
	h := s.harness(t)
	cc, ok := h.(CallCounter)
	if !ok {
		t.Skip("the harness does not implement embedtest.CallCounter, so calls cannot be counted")
	}
	e := s.embedder(t, h)
	before := cc.Calls()
	s.embed(t, e, nil)
	s.embed(t, e, []string{})
	if after := cc.Calls(); after != before {
		t.Errorf("zero inputs must make no call; embedding nothing made %d", after-before)
	}
	// Prove that the counter counts, or the check above proves nothing.
	if s.embed(t, e, []string{"one text"}) != nil && cc.Calls() == before {
		t.Error("CallCounter.Calls must count calls: embedding one text left it unchanged")
	}
}

// mixedTexts differ in length and script, to show that the dimension does
// not depend on the text.
var mixedTexts = []string{
	"ok",
	"A somewhat longer sentence about configuring continuous integration for a monorepo with several Go modules.",
	"Ünïcödé, 日本語のテキスト, and emoji 🚀 in one line.",
}

func (s *suite) testDimension(t *testing.T) {
	h := s.harness(t)
	e := s.embedder(t, h)
	want := h.Capabilities().Dimension
	if want < 0 {
		t.Fatalf("embedtest: the harness declares Capabilities.Dimension %d, want at least 0 (0 means not declared)", want)
	}
	batch := s.embed(t, e, mixedTexts)
	single := s.embed(t, e, mixedTexts[:1])
	if batch == nil || single == nil {
		return
	}
	rule := fmt.Sprintf("vectors must have the declared Capabilities.Dimension, %d", want)
	if want == 0 {
		want = len(batch[0])
		rule = fmt.Sprintf("every vector must have the same length as the first, %d", want)
	}
	if want == 0 {
		t.Error("vectors must not be empty; the first has length 0")
		return
	}
	r := &reporter{t: t, rule: rule}
	defer r.done()
	for i, v := range append(batch, single...) {
		if len(v) != want {
			r.errorf("vector %d has %d", i, len(v))
		}
	}
}

func (s *suite) testFiniteNonZero(t *testing.T) {
	e := s.embedder(t, s.harness(t))
	vecs := s.embed(t, e, append(slices.Clone(distinctTexts), mixedTexts...))
	for i, v := range vecs {
		nonZero := false
		for j, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Errorf("vectors must be finite; vector %d has %v at %d", i, x, j)
				break
			}
			nonZero = nonZero || x != 0
		}
		if !nonZero {
			t.Errorf("vectors must not be zero (a zero vector has no direction to compare); vector %d is", i)
		}
	}
}

func (s *suite) testUnitLength(t *testing.T) {
	h := s.harness(t)
	if reason := h.Capabilities().NotNormalized; reason != "" {
		t.Skipf("the embedder's vectors are not normalised: %s", reason)
	}
	const tolerance = 1e-3
	e := s.embedder(t, h)
	for i, v := range s.embed(t, e, append(slices.Clone(distinctTexts), mixedTexts...)) {
		var sum float64
		for _, x := range v {
			sum += float64(x) * float64(x)
		}
		if norm := math.Sqrt(sum); math.Abs(norm-1) > tolerance {
			t.Errorf("vectors must have unit length (±%v) unless Capabilities.NotNormalized says why not; vector %d has %.6f",
				tolerance, i, norm)
		}
	}
}

func (s *suite) testIdentical(t *testing.T) {
	h := s.harness(t)
	caps := h.Capabilities()
	e := s.embedder(t, h)
	text := distinctTexts[1]
	both := s.embed(t, e, []string{text, text})
	first := s.embed(t, e, []string{text})
	second := s.embed(t, e, []string{text})
	if both == nil || first == nil || second == nil {
		return
	}
	rule := "identical texts must give " + sameRule(caps) + " vectors"
	if !sameVectors(both[0], both[1], caps) {
		t.Errorf("%s: the two copies of one text in a batch differ (cosine %.6f)", rule, cosine(both[0], both[1]))
	}
	if !sameVectors(first[0], second[0], caps) {
		t.Errorf("%s: one text embedded in two calls gives different vectors (cosine %.6f)", rule, cosine(first[0], second[0]))
	}
}

// relatedTexts are (anchor, paraphrase, unrelated) triples: any embedder
// worth the name places the paraphrase closer to the anchor.
var relatedTexts = [][3]string{
	{
		"The database connection pool is exhausted under heavy load.",
		"Under heavy load the database runs out of pooled connections.",
		"My grandmother bakes an apple pie every Sunday afternoon.",
	},
	{
		"Always run gofmt before committing Go code.",
		"Format Go source files with gofmt prior to each commit.",
		"The hiking trail follows the river up to the waterfall.",
	},
	{
		"The user prefers tabs over spaces for indentation.",
		"Indent code with tabs, not spaces, as the user likes.",
		"Interest rates rose sharply in the last quarter.",
	},
}

func (s *suite) testRelated(t *testing.T) {
	e := s.embedder(t, s.harness(t))
	for _, triple := range relatedTexts {
		// One call per text, so that this case does not depend on order.
		v := s.embedEach(t, e, triple[:])
		if v == nil {
			return
		}
		related, unrelated := cosine(v[0], v[1]), cosine(v[0], v[2])
		if related <= unrelated {
			t.Errorf("related texts must score higher than unrelated ones: %q must be closer to its paraphrase %q "+
				"(cosine %.4f) than to the unrelated %q (cosine %.4f)", triple[0], triple[1], related, triple[2], unrelated)
		}
	}
}

// Word lists of numberedTexts; their lengths are pairwise coprime, so the
// first 12×11×13 texts are distinct even without their numbers.
var (
	subjects = []string{"The gardener", "A pilot", "The compiler", "Our accountant", "The violinist", "A glacier",
		"The librarian", "A submarine", "The baker", "A satellite", "The referee", "A beekeeper"}
	verbs = []string{"repaired", "painted", "measured", "translated", "photographed", "auctioned",
		"catalogued", "smuggled", "polished", "recycled", "inspected"}
	objects = []string{"an old lighthouse", "seven copper kettles", "the quarterly budget", "a broken telescope",
		"the wedding cake", "a pile of maps", "the jazz records", "a rusty bicycle", "the vaccine samples",
		"a marble statue", "the chess trophies", "a crate of lemons", "the mountain cabin"}
)

// numberedTexts returns n distinct sentences, starting with number first.
func numberedTexts(first, n int) []string {
	out := make([]string, n)
	for k := range out {
		i := first + k
		out[k] = fmt.Sprintf("%s %s %s (note %d).",
			subjects[i%len(subjects)], verbs[i%len(verbs)], objects[i%len(objects)], i)
	}
	return out
}

func (s *suite) testLargeBatch(t *testing.T) {
	h := s.harness(t)
	maxBatch := h.Capabilities().MaxBatch
	if maxBatch < 0 || maxBatch > maxDeclaredBatch {
		t.Fatalf("embedtest: the harness declares Capabilities.MaxBatch %d, want 0–%d (0 means no limit)", maxBatch, maxDeclaredBatch)
	}
	n, chunk := 100, 10
	if maxBatch > 0 {
		n, chunk = 2*maxBatch+1, maxBatch
	}
	e := s.embedder(t, h)
	texts := numberedTexts(0, n)
	cc, counting := h.(CallCounter)
	var before int
	if counting {
		before = cc.Calls()
	}
	large := s.embed(t, e, texts)
	if large == nil {
		return
	}
	calls := 0
	if counting {
		calls = cc.Calls() - before
	}
	// The reference: the same texts in batches within the limit, whose
	// order OneVectorPerInputInOrder checks.
	var ref [][]float32
	for start := 0; start < n; start += chunk {
		part := s.embed(t, e, texts[start:min(start+chunk, n)])
		if part == nil {
			return
		}
		ref = append(ref, part...)
	}
	checkMatches(t, fmt.Sprintf("a batch of %d texts (MaxBatch %d) must give one vector per input, in input order", n, maxBatch),
		large, ref, true)

	t.Run("SplitIntoCalls", func(t *testing.T) {
		switch {
		case maxBatch == 0:
			t.Skip("Capabilities.MaxBatch is 0 (no limit), so there is nothing to split")
		case !counting:
			t.Skip("the harness does not implement embedtest.CallCounter, so calls cannot be counted")
		}
		if want := (n + maxBatch - 1) / maxBatch; calls < want {
			t.Errorf("inputs larger than MaxBatch must be split into calls of at most MaxBatch texts: "+
				"%d texts with MaxBatch %d need at least %d calls, got %d", n, maxBatch, want, calls)
		}
	})
}

func (s *suite) testModelStable(t *testing.T) {
	e := s.embedder(t, s.harness(t))
	before := e.Model()
	if before == "" {
		t.Error("Model must not be empty: it keys cached vectors")
	}
	s.embed(t, e, distinctTexts[:2])
	if after := e.Model(); after != before {
		t.Errorf("Model must not change: %q before embedding, %q after", before, after)
	}
}

func (s *suite) testSameModel(t *testing.T) {
	h := s.harness(t)
	caps := h.Capabilities()
	e1, e2 := s.embedder(t, h), s.embedder(t, h)
	if e1.Model() != e2.Model() {
		t.Skipf("the harness's embedders report different models (%q, %q), so their vectors need not agree",
			e1.Model(), e2.Model())
	}
	v1 := s.embed(t, e1, distinctTexts[:1])
	v2 := s.embed(t, e2, distinctTexts[:1])
	if v1 != nil && v2 != nil && !sameVectors(v1[0], v2[0], caps) {
		t.Errorf("embedders reporting the same Model (%q) must give %s vectors for a text (cosine %.6f): "+
			"Model keys cached vectors", e1.Model(), sameRule(caps), cosine(v1[0], v2[0]))
	}
}

var helloTexts = []string{"hello world"}

// slowEmbedder returns an embedder from the harness's SlowHarness, or skips
// the test saying why there is none.
func (s *suite) slowEmbedder(t *testing.T) memcore.Embedder {
	t.Helper()
	sh, ok := s.harness(t).(SlowHarness)
	if !ok {
		t.Skip("the harness does not implement embedtest.SlowHarness, so no call can be held in flight")
	}
	e, err := sh.NewSlowEmbedder(t.Context())
	if reason := conform.UnsupportedReason(err); reason != "" {
		t.Skipf("the harness cannot make a slow embedder: %s", reason)
	}
	if err != nil {
		t.Fatalf("embedtest: SlowHarness.NewSlowEmbedder: %v", err)
	}
	return e
}

// subject is what the shared Context and Errors cases need of this suite.
func (s *suite) subject() conform.Subject[memcore.Embedder] {
	return conform.Subject[memcore.Embedder]{
		Suite: "embedtest", Noun: "embedder", Config: s.cfg,
		New:  func(t *testing.T) memcore.Embedder { return s.embedder(t, s.harness(t)) },
		Slow: s.slowEmbedder,
		Failing: func(t *testing.T, kind error) (memcore.Embedder, any, error) {
			h := s.harness(t)
			p, err := h.NewFailingEmbedder(t.Context(), kind)
			return p, h, err
		},
		Call: func(ctx context.Context, p memcore.Embedder) error {
			_, err := p.Embed(ctx, helloTexts)
			return err
		},
	}
}

func (s *suite) testConcurrentCalls(t *testing.T) {
	h := s.harness(t)
	caps := h.Capabilities()
	e := s.embedder(t, h)
	const perCall = 3
	n := s.cfg.Concurrency
	texts := make([][]string, n)
	want := make([][][]float32, n)
	for i := range n {
		texts[i] = numberedTexts(i*perCall, perCall)
		if want[i] = s.embed(t, e, texts[i]); want[i] == nil {
			return
		}
	}

	results := make([]result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(t.Context(), s.cfg.CallTimeout)
			defer cancel()
			vecs, err := e.Embed(ctx, texts[i])
			results[i] = result{vecs, err}
		}()
	}
	_, ok := conform.Within(s.cfg.CallTimeout+s.cfg.CancelGrace, func() struct{} {
		wg.Wait()
		return struct{}{}
	})
	if !ok {
		t.Errorf("%d concurrent calls must all return; some were still running %v after their %v deadline",
			n, s.cfg.CancelGrace, s.cfg.CallTimeout)
		return
	}
	r := &reporter{t: t, rule: fmt.Sprintf("each of %d concurrent calls must succeed and get its own vectors, "+
		"%s to those of the same texts embedded alone", n, sameRule(caps))}
	defer r.done()
	for i, res := range results {
		switch {
		case res.err != nil:
			r.errorf("call %d failed: %v", i, res.err)
		case len(res.vecs) != perCall:
			r.errorf("call %d sent %d texts and got %d vectors", i, perCall, len(res.vecs))
		default:
			for k := range perCall {
				if !sameVectors(res.vecs[k], want[i][k], caps) {
					r.errorf("call %d, vector %d differs (cosine %.6f)", i, k, cosine(res.vecs[k], want[i][k]))
				}
			}
		}
	}
}
