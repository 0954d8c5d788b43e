package embedtest_test

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode"

	"github.com/forgemem/forgemem/conformance/embedtest"
	"github.com/forgemem/forgemem/conformance/internal/conform"
	"github.com/forgemem/forgemem/memcore"
)

// The suite must pass a correct embedder and fail a broken one on exactly
// the rules it breaks. Run takes a *testing.T, so TestSuiteJudgesEmbedders
// runs the suite in a subprocess — this test binary, running
// TestHelperRunSuite with caseEnv naming a case — and reads which subtests
// failed.

const caseEnv = "FORGEMEM_EMBEDTEST_CASE"

// defects make testEmbedder break rules.
type defects struct {
	wrongOrder    bool // reverses the vectors of a batch
	callOnEmpty   bool // makes a call for zero texts
	noSplit       bool // sends more than MaxBatch texts in one call
	truncate      bool // returns the vectors of the first MaxBatch texts only
	notNormalized bool // vectors of length 3
	noisy         bool // adds random noise to every vector
	ignoreMeaning bool // hashes the whole text, so that no two texts are alike
	ignoreContext bool // neither checks nor watches ctx
	stringErrors  bool // reports failures as bare strings
	sharedResult  bool // simultaneous calls all get the first one's vectors
}

// testAPIError is testEmbedder's native error.
type testAPIError struct{ status int }

func (e *testAPIError) Error() string { return fmt.Sprintf("test api: status %d", e.status) }

const testDimension = 256

// testEmbedder hashes words into testDimension dimensions, except where its
// defects say otherwise.
type testEmbedder struct {
	defects
	maxBatch int
	calls    *atomic.Int64
	slow     bool  // calls last until ctx ends
	fail     error // every call fails with this
	shared   *sharedResult
}

// sharedResult is the state of the sharedResult defect.
type sharedResult struct {
	mu       sync.Mutex
	inFlight int
	vecs     [][]float32
}

func (e *testEmbedder) Model() string { return fmt.Sprintf("test-words-%d", testDimension) }

func (e *testEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if !e.ignoreContext {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	if e.slow {
		if e.ignoreContext {
			time.Sleep(time.Hour) // the defect: a call that cannot be stopped
		}
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if len(texts) == 0 {
		if e.callOnEmpty {
			e.calls.Add(1)
		}
		return nil, nil
	}
	if e.fail != nil {
		e.calls.Add(1)
		return nil, e.fail
	}
	batch := e.maxBatch
	if batch == 0 || e.noSplit {
		batch = len(texts)
	}
	var out [][]float32
	for start := 0; start < len(texts); start += batch {
		e.calls.Add(1)
		for _, text := range texts[start:min(start+batch, len(texts))] {
			out = append(out, e.vector(text))
		}
	}
	if e.truncate && e.maxBatch > 0 && len(out) > e.maxBatch {
		out = out[:e.maxBatch]
	}
	if e.wrongOrder {
		slices.Reverse(out)
	}
	if e.sharedResult {
		out = e.shareResult(out)
	}
	return out, nil
}

// shareResult returns the vectors of the first of the calls in flight. The
// calls last a while, so that simultaneous calls do overlap.
func (e *testEmbedder) shareResult(vecs [][]float32) [][]float32 {
	s := e.shared
	s.mu.Lock()
	if s.inFlight == 0 {
		s.vecs = vecs
	}
	s.inFlight++
	vecs = s.vecs
	s.mu.Unlock()
	time.Sleep(50 * time.Millisecond) // the defect needs calls to overlap
	s.mu.Lock()
	s.inFlight--
	s.mu.Unlock()
	return vecs
}

func (e *testEmbedder) vector(text string) []float32 {
	v := make([]float32, testDimension)
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	if e.ignoreMeaning {
		words = []string{text}
	}
	for _, w := range words {
		h := fnv.New64a()
		h.Write([]byte(w))
		sum := h.Sum64()
		if sum>>63 == 0 {
			v[sum%testDimension]++
		} else {
			v[sum%testDimension]--
		}
	}
	if e.noisy {
		for i := range v {
			v[i] += float32(rand.NormFloat64() * 1e-3)
		}
	}
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	if norm == 0 {
		v[0], norm = 1, 1
	}
	scale := float32(1 / math.Sqrt(norm))
	if e.notNormalized {
		scale *= 3
	}
	for i := range v {
		v[i] *= scale
	}
	return v
}

var statusOf = map[error]int{
	memcore.ErrRateLimited:     429,
	memcore.ErrUnauthenticated: 401,
	memcore.ErrUnavailable:     503,
	memcore.ErrInputTooLarge:   413,
	memcore.ErrInvalidRequest:  400,
	memcore.ErrInvalidResponse: 200,
}

// testHarness makes testEmbedders with its defects, and implements every
// optional harness interface.
type testHarness struct {
	defects
	caps   embedtest.Capabilities
	calls  atomic.Int64
	shared sharedResult
}

func (h *testHarness) embedder() *testEmbedder {
	return &testEmbedder{defects: h.defects, maxBatch: h.caps.MaxBatch, calls: &h.calls, shared: &h.shared}
}

func (h *testHarness) NewEmbedder(context.Context) (memcore.Embedder, error) {
	return h.embedder(), nil
}

func (h *testHarness) NewFailingEmbedder(_ context.Context, kind error) (memcore.Embedder, error) {
	e := h.embedder()
	if h.stringErrors {
		e.fail = errors.New("test api: " + kind.Error())
	} else {
		e.fail = fmt.Errorf("testembedder: %w: %w", kind, &testAPIError{statusOf[kind]})
	}
	return e, nil
}

func (h *testHarness) NewSlowEmbedder(context.Context) (memcore.Embedder, error) {
	e := h.embedder()
	e.slow = true
	return e, nil
}

func (h *testHarness) AsNative(err error) bool {
	var native *testAPIError
	return errors.As(err, &native)
}

func (h *testHarness) Calls() int                           { return int(h.calls.Load()) }
func (h *testHarness) Capabilities() embedtest.Capabilities { return h.caps }
func (h *testHarness) Close()                               {}

// minimalHarness hides testHarness's optional interfaces.
type minimalHarness struct{ h *testHarness }

func (m minimalHarness) NewEmbedder(ctx context.Context) (memcore.Embedder, error) {
	return m.h.NewEmbedder(ctx)
}

func (m minimalHarness) NewFailingEmbedder(ctx context.Context, kind error) (memcore.Embedder, error) {
	return m.h.NewFailingEmbedder(ctx, kind)
}

func (m minimalHarness) Capabilities() embedtest.Capabilities { return m.h.caps }
func (m minimalHarness) Close()                               {}

var allKinds = []string{"RateLimited", "Unauthenticated", "Unavailable", "InputTooLarge", "InvalidRequest", "InvalidResponse"}

// perKind returns "Errors/<kind>/<suffix>" for each kind.
func perKind(suffix string) []string {
	var out []string
	for _, k := range allKinds {
		out = append(out, "Errors/"+k+"/"+suffix)
	}
	return out
}

// batched declares a batch limit, so that the batch cases have work to do.
var batched = embedtest.Capabilities{MaxBatch: 4, Dimension: testDimension}

// suiteCase is a harness and what the suite must say about it.
type suiteCase struct {
	name        string
	harness     func() embedtest.Harness
	wantFailed  []string // leaf subtests
	wantSkipped []string // checked when not nil
	// cancelGrace, when set, replaces the generous default grace that keeps
	// the correct cases from failing on a busy machine (the cases run in
	// parallel subprocesses, maybe under -race). A provider that ignores
	// cancellation never returns, so a short grace catches it as surely.
	cancelGrace time.Duration
}

func (c suiteCase) grace() time.Duration {
	if c.cancelGrace == 0 {
		return 30 * time.Second
	}
	return c.cancelGrace
}

// misdeclared is a correct harness that declares caps instead of its own
// capabilities.
type misdeclared struct {
	*testHarness
	caps embedtest.Capabilities
}

func (m misdeclared) Capabilities() embedtest.Capabilities { return m.caps }

var suiteCases = []suiteCase{
	{
		name:        "Correct",
		harness:     func() embedtest.Harness { return &testHarness{caps: batched} },
		wantSkipped: []string{},
	},
	{
		name:    "CorrectMinimalHarness",
		harness: func() embedtest.Harness { return minimalHarness{&testHarness{}} },
		wantSkipped: append(perKind("NativeErrorReachable"),
			"Context/CanceledInFlight",
			"Context/DeadlineExpiresInFlight",
			"Embed/BatchLargerThanMax/SplitIntoCalls",
			"Embed/ZeroInputsMakeNoCall",
		),
	},
	{
		name: "CorrectWithDeclaredLimitations",
		harness: func() embedtest.Harness {
			return &testHarness{defects: defects{noisy: true, notNormalized: true}, caps: embedtest.Capabilities{
				MaxBatch: 4, Nondeterministic: "noisy on purpose", NotNormalized: "length 3 on purpose"}}
		},
		wantSkipped: []string{"Embed/UnitLength"},
	},
	{
		name:       "WrongOrder",
		harness:    func() embedtest.Harness { return &testHarness{defects: defects{wrongOrder: true}, caps: batched} },
		wantFailed: []string{"Embed/BatchLargerThanMax", "Embed/OneVectorPerInputInOrder"},
	},
	{
		name:       "CallsOnZeroInputs",
		harness:    func() embedtest.Harness { return &testHarness{defects: defects{callOnEmpty: true}, caps: batched} },
		wantFailed: []string{"Embed/ZeroInputsMakeNoCall"},
	},
	{
		name:       "DoesNotSplit",
		harness:    func() embedtest.Harness { return &testHarness{defects: defects{noSplit: true}, caps: batched} },
		wantFailed: []string{"Embed/BatchLargerThanMax/SplitIntoCalls"},
	},
	{
		name:    "TruncatesLargeBatches",
		harness: func() embedtest.Harness { return &testHarness{defects: defects{truncate: true}, caps: batched} },
		// Every case that embeds more than MaxBatch texts at once.
		wantFailed: []string{
			"Embed/BatchLargerThanMax",
			"Embed/FiniteNonZeroVectors",
			"Embed/OneVectorPerInputInOrder",
			"Embed/UnitLength",
		},
	},
	{
		name:       "NotNormalized",
		harness:    func() embedtest.Harness { return &testHarness{defects: defects{notNormalized: true}, caps: batched} },
		wantFailed: []string{"Embed/UnitLength"},
	},
	{
		name:    "UndeclaredNondeterminism",
		harness: func() embedtest.Harness { return &testHarness{defects: defects{noisy: true}, caps: batched} },
		wantFailed: []string{
			"ConcurrentCalls",
			"Embed/IdenticalTextsIdenticalVectors",
			"Model/SameModelSameVectors",
		},
	},
	{
		name: "WrongDeclaredDimension",
		harness: func() embedtest.Harness {
			return &testHarness{caps: embedtest.Capabilities{MaxBatch: 4, Dimension: testDimension / 2}}
		},
		wantFailed: []string{"Embed/ConsistentDimension"},
	},
	{
		name: "DeclaresNegativeMaxBatch",
		harness: func() embedtest.Harness {
			return misdeclared{&testHarness{caps: batched}, embedtest.Capabilities{MaxBatch: -1, Dimension: testDimension}}
		},
		wantFailed: []string{"Embed/BatchLargerThanMax"},
	},
	{
		name: "DeclaresNegativeDimension",
		harness: func() embedtest.Harness {
			return misdeclared{&testHarness{caps: batched}, embedtest.Capabilities{MaxBatch: 4, Dimension: -1}}
		},
		wantFailed: []string{"Embed/ConsistentDimension"},
	},
	{
		name:       "IgnoresMeaning",
		harness:    func() embedtest.Harness { return &testHarness{defects: defects{ignoreMeaning: true}, caps: batched} },
		wantFailed: []string{"Embed/RelatedTextsScoreHigher"},
	},
	{
		name:        "IgnoresCancellation",
		harness:     func() embedtest.Harness { return &testHarness{defects: defects{ignoreContext: true}, caps: batched} },
		cancelGrace: time.Second,
		wantFailed: []string{
			"Context/CanceledBeforeCall",
			"Context/CanceledInFlight",
			"Context/DeadlineExpiredBeforeCall",
			"Context/DeadlineExpiresInFlight",
		},
	},
	{
		name:       "StringErrors",
		harness:    func() embedtest.Harness { return &testHarness{defects: defects{stringErrors: true}, caps: batched} },
		wantFailed: append(perKind("MatchesKind"), perKind("NativeErrorReachable")...),
	},
	{
		name:       "SharesResultsBetweenCalls",
		harness:    func() embedtest.Harness { return &testHarness{defects: defects{sharedResult: true}, caps: batched} },
		wantFailed: []string{"ConcurrentCalls"},
	},
}

// TestHelperRunSuite runs the suite against the case named by caseEnv. It
// does nothing in a normal test run.
func TestHelperRunSuite(t *testing.T) {
	name := os.Getenv(caseEnv)
	if name == "" {
		t.Skip("runs only as the subprocess of TestSuiteJudgesEmbedders")
	}
	for _, c := range suiteCases {
		if c.name == name {
			embedtest.Run(t, func(context.Context, *testing.T) (embedtest.Harness, error) { return c.harness(), nil },
				embedtest.Config{CancelGrace: c.grace(), CallTimeout: 10 * time.Second})
			return
		}
	}
	t.Fatalf("no suite case named %q", name)
}

func TestSuiteJudgesEmbedders(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary once per case")
	}
	for _, c := range suiteCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			conform.CheckSuiteRun(t, "TestHelperRunSuite", c.wantFailed, c.wantSkipped, caseEnv+"="+c.name)
		})
	}
}

// TestSkipsSayWhy checks that every skip of a minimal harness, and every
// declared limitation, gives its reason.
func TestSkipsSayWhy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary")
	}
	for name, reasons := range map[string][]string{
		"CorrectMinimalHarness": {
			"does not implement embedtest.CallCounter",
			"does not implement embedtest.SlowHarness",
			"does not implement embedtest.NativeErrorHarness",
			"MaxBatch is 0",
		},
		"CorrectWithDeclaredLimitations": {"length 3 on purpose"},
	} {
		got := conform.RunTestInSubprocess(t, "TestHelperRunSuite", 2*time.Minute, caseEnv+"="+name)
		for _, reason := range reasons {
			if !strings.Contains(got.Output, reason) {
				t.Errorf("%s: no skip message gives the reason %q; output:\n%s", name, reason, got.Output)
			}
		}
	}
}

// TestMisdeclaredCapabilitiesSayWhy checks that a capability declared out
// of range fails its case with a message naming it and its range.
func TestMisdeclaredCapabilitiesSayWhy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary")
	}
	for name, want := range map[string]string{
		"DeclaresNegativeMaxBatch":  "Capabilities.MaxBatch -1, want 0–100000 (0 means no limit)",
		"DeclaresNegativeDimension": "Capabilities.Dimension -1, want at least 0 (0 means not declared)",
	} {
		got := conform.RunTestInSubprocess(t, "TestHelperRunSuite", 2*time.Minute, caseEnv+"="+name)
		if !strings.Contains(got.Output, want) {
			t.Errorf("%s: the output does not say %q; output:\n%s", name, want, got.Output)
		}
	}
}
