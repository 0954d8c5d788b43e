package fake_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/fake"
)

func embed(t testing.TB, e *fake.Embedder, texts ...string) [][]float32 {
	t.Helper()
	vecs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatalf("Embed: %v", err)
	}
	if len(vecs) != len(texts) {
		t.Fatalf("Embed gave %d vectors for %d texts", len(vecs), len(texts))
	}
	return vecs
}

func cosine(a, b []float32) float64 {
	var dot float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
	}
	return dot
}

func norm(v []float32) float64 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	return math.Sqrt(sum)
}

func TestEmbedderVectorsAreUnitLengthAndDeterministic(t *testing.T) {
	texts := []string{
		"", " ", "\t\n  ", "!!!", "???", "a", "I",
		"Hello, world!",
		"Ünïcödé ÀÉÎ, 日本語のテキスト, emoji 🚀",
		"don't repeat-yourself: DRY",
		"The user prefers table-driven tests and gofmt'd code.",
	}
	for _, dim := range []int{1, 2, 7, 64, 256, 1536} {
		e1 := newEmbedder(t, fake.EmbedderConfig{Dimension: dim})
		e2 := newEmbedder(t, fake.EmbedderConfig{Dimension: dim})
		batch := embed(t, e1, texts...)
		for i, text := range texts {
			v := batch[i]
			if len(v) != dim {
				t.Errorf("dim %d, %q: length %d", dim, text, len(v))
			}
			if n := norm(v); math.Abs(n-1) > 1e-5 {
				t.Errorf("dim %d, %q: norm %v, want 1", dim, text, n)
			}
			if again := embed(t, e2, text)[0]; !slices.Equal(v, again) {
				t.Errorf("dim %d, %q: another embedder, alone in its batch, gives a different vector", dim, text)
			}
		}
	}
}

func TestEmbedderBlankTexts(t *testing.T) {
	e := newEmbedder(t, fake.EmbedderConfig{})
	v := embed(t, e, "", "   ", "\t\n", "!!!", "?")
	if !slices.Equal(v[0], v[1]) || !slices.Equal(v[0], v[2]) {
		t.Error("empty and whitespace-only texts must share one vector")
	}
	if slices.Equal(v[0], v[3]) || slices.Equal(v[3], v[4]) {
		t.Error("texts of different punctuation must not share the blank vector or each other's")
	}
}

func TestEmbedderIgnoresCaseAndPunctuation(t *testing.T) {
	e := newEmbedder(t, fake.EmbedderConfig{})
	v := embed(t, e, "Hello World", "hello world", "HELLO, world!!", "Ärger über Öl", "ärger ÜBER öl")
	if !slices.Equal(v[0], v[1]) || !slices.Equal(v[0], v[2]) {
		t.Error("case and punctuation between words must not change the vector")
	}
	if !slices.Equal(v[3], v[4]) {
		t.Error("case must not change the vector of non-ASCII text")
	}
}

func TestEmbedderWordOrderMatters(t *testing.T) {
	e := newEmbedder(t, fake.EmbedderConfig{})
	v := embed(t, e, "dog bites man", "man bites dog")
	if c := cosine(v[0], v[1]); c >= 0.999 || c < 0.5 {
		t.Errorf("the same words in another order should be close but not identical (word pairs differ); cosine %v", c)
	}
}

func TestEmbedderRelatedTextsScoreHigher(t *testing.T) {
	tests := []struct {
		anchor, related, unrelated string
		minDim                     int // below it, hash collisions may swamp the signal
	}{
		{"the build cache is stale", "stale build caches", "my cat likes fish", 0},
		{"Use tabs for indentation in Go files", "Go code is indented with tabs", "The weather in Paris is sunny today", 0},
		{"I prefer pytest over unittest", "We use pytest for testing python code", "The deploy pipeline runs on Fridays", 0},
		{"The database connection pool is exhausted under load.",
			"Under heavy load the database runs out of pooled connections.",
			"My grandmother bakes apple pie every Sunday afternoon.", 0},
		{"never commit directly to main", "commits to main need review", "the oven is preheated to 200 degrees", 0},
		// Word forms meet through trigrams alone: a weak signal.
		{"caching", "cached", "elephant", 256},
		// A sentence of common words is about its one uncommon word: the
		// common words' trigrams are damped as much as the words.
		{"they were at the station when it was there", "station", "they were at the when it was there", 0},
		{"Which of these is theirs?", "theirs", "Which of these is", 0},
	}
	for _, dim := range []int{64, 256, 1024} {
		e := newEmbedder(t, fake.EmbedderConfig{Dimension: dim})
		for _, tt := range tests {
			if dim < tt.minDim {
				continue
			}
			v := embed(t, e, tt.anchor, tt.related, tt.unrelated)
			if rel, unrel := cosine(v[0], v[1]), cosine(v[0], v[2]); rel <= unrel {
				t.Errorf("dim %d: %q should be closer to %q (%.3f) than to %q (%.3f)",
					dim, tt.anchor, tt.related, rel, tt.unrelated, unrel)
			}
		}
	}
}

// TestEmbedderGolden pins the vectors, which must not change silently:
// vectors are cached under Model(), so a new algorithm needs a new Model.
func TestEmbedderGolden(t *testing.T) {
	e := newEmbedder(t, fake.EmbedderConfig{Dimension: 8})
	tests := []struct {
		text string
		want string
	}{
		{"", "[0.000 0.000 0.000 -1.000 0.000 0.000 0.000 0.000]"},
		{"Hello, world!", "[0.000 -0.171 -0.343 0.000 0.514 -0.343 -0.686 0.000]"},
		{"the cat", "[-0.036 0.483 0.036 0.073 -0.036 0.000 0.000 0.870]"},
	}
	for _, tt := range tests {
		if got := fmt.Sprintf("%.3f", embed(t, e, tt.text)[0]); got != tt.want {
			t.Errorf("vector of %q = %s, want %s", tt.text, got, tt.want)
		}
	}
}

func TestEmbedderModelAndDimension(t *testing.T) {
	tests := []struct {
		cfg       fake.EmbedderConfig
		model     string
		dim, max  int
		wantCalls int // for 10 texts
	}{
		{fake.EmbedderConfig{}, "fake-hash-v2-1024", 1024, 0, 1},
		{fake.EmbedderConfig{Dimension: 64}, "fake-hash-v2-64", 64, 0, 1},
		{fake.EmbedderConfig{MaxBatch: 3}, "fake-hash-v2-1024", 1024, 3, 4},
		{fake.EmbedderConfig{MaxBatch: 10, Dimension: 1536}, "fake-hash-v2-1536", 1536, 10, 1},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			e := newEmbedder(t, tt.cfg)
			if e.Model() != tt.model || e.Dimension() != tt.dim || e.MaxBatch() != tt.max {
				t.Errorf("Model, Dimension, MaxBatch = %q, %d, %d; want %q, %d, %d",
					e.Model(), e.Dimension(), e.MaxBatch(), tt.model, tt.dim, tt.max)
			}
			texts := make([]string, 10)
			for i := range texts {
				texts[i] = fmt.Sprintf("text number %d", i)
			}
			for i, v := range embed(t, e, texts...) {
				if len(v) != tt.dim {
					t.Errorf("vector %d has length %d, want %d", i, len(v), tt.dim)
				}
			}
			if e.Calls() != tt.wantCalls || e.Inputs() != 10 {
				t.Errorf("Calls, Inputs = %d, %d; want %d, 10", e.Calls(), e.Inputs(), tt.wantCalls)
			}
		})
	}
}

func TestEmbedderBatchesKeepOrder(t *testing.T) {
	texts := make([]string, 23)
	for i := range texts {
		texts[i] = fmt.Sprintf("note %d about topic %c", i, 'a'+i)
	}
	whole := embed(t, newEmbedder(t, fake.EmbedderConfig{}), texts...)
	split := embed(t, newEmbedder(t, fake.EmbedderConfig{MaxBatch: 4}), texts...)
	for i := range texts {
		if !slices.Equal(whole[i], split[i]) {
			t.Errorf("vector %d differs between one batch and batches of 4", i)
		}
	}
}

func TestEmbedderZeroInputsMakeNoCall(t *testing.T) {
	e := newEmbedder(t, fake.EmbedderConfig{})
	for _, texts := range [][]string{nil, {}} {
		vecs, err := e.Embed(context.Background(), texts)
		if err != nil || len(vecs) != 0 {
			t.Errorf("Embed(%#v) = %v, %v; want no vectors, no error", texts, vecs, err)
		}
	}
	if e.Calls() != 0 || e.Inputs() != 0 {
		t.Errorf("Calls, Inputs = %d, %d; want 0, 0", e.Calls(), e.Inputs())
	}
}

func TestEmbedderVectorsDoNotShareStorage(t *testing.T) {
	e := newEmbedder(t, fake.EmbedderConfig{Dimension: 4})
	vecs := embed(t, e, "first", "second")
	second := slices.Clone(vecs[1])
	_ = append(vecs[0], 42, 43, 44, 45)
	vecs[0][0] = 99
	if !slices.Equal(vecs[1], second) {
		t.Error("changing or appending to one vector changed the next")
	}
}

func TestEmbedderFailNext(t *testing.T) {
	e := newEmbedder(t, fake.EmbedderConfig{MaxBatch: 2})
	failNext(t, e, 1, memcore.ErrRateLimited)
	_, err := e.Embed(context.Background(), []string{"a", "b", "c", "d", "e"})
	var apiErr *fake.APIError
	if !errors.Is(err, memcore.ErrRateLimited) || !memcore.IsTransient(err) || !errors.As(err, &apiErr) {
		t.Errorf("err = %v, want a transient rate-limit error carrying an *APIError", err)
	}
	if e.Calls() != 1 {
		t.Errorf("a failed call must end the Embed: Calls() = %d, want 1", e.Calls())
	}
	embed(t, e, "a", "b", "c", "d", "e")
	if e.Calls() != 4 || e.Inputs() != 7 {
		t.Errorf("Calls, Inputs = %d, %d; want 4, 7", e.Calls(), e.Inputs())
	}
}

func TestEmbedderHonoursContext(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	e := newEmbedder(t, fake.EmbedderConfig{})
	if _, err := e.Embed(canceled, []string{"x"}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if e.Calls() != 0 {
		t.Errorf("a call with an ended context must not be counted; Calls() = %d", e.Calls())
	}

	slow := newEmbedder(t, fake.EmbedderConfig{Latency: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := slow.Embed(ctx, []string{"x"})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want context.DeadlineExceeded", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Embed did not return after its deadline")
	}
}

func TestEmbedderConcurrentUse(t *testing.T) {
	const n = 32
	e := newEmbedder(t, fake.EmbedderConfig{MaxBatch: 3})
	failNext(t, e, 5, memcore.ErrUnavailable)
	texts := func(i int) []string {
		return []string{fmt.Sprintf("goroutine %d first", i), fmt.Sprintf("goroutine %d second", i),
			"shared text", fmt.Sprintf("goroutine %d last", i)}
	}
	want := make([][][]float32, n)
	for i := range n {
		want[i] = embed(t, newEmbedder(t, fake.EmbedderConfig{}), texts(i)...)
	}
	got := make([][][]float32, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = e.Embed(context.Background(), texts(i))
		}()
	}
	wg.Wait()
	failed := 0
	for i := range n {
		if errs[i] != nil {
			failed++
			continue
		}
		for k := range want[i] {
			if !slices.Equal(got[i][k], want[i][k]) {
				t.Errorf("goroutine %d, vector %d differs from the same text embedded alone", i, k)
			}
		}
	}
	if failed != 5 {
		t.Errorf("%d Embeds failed, want the 5 scheduled", failed)
	}
	// Each Embed of 4 texts makes 2 calls, unless its first call failed.
	if wantCalls := 2*(n-failed) + failed; e.Calls() != wantCalls {
		t.Errorf("Calls() = %d, want %d", e.Calls(), wantCalls)
	}
}

// benchTexts are memory-sized texts, as a retrieval engine embeds them.
func benchTexts(n int) []string {
	texts := make([]string, n)
	for i := range texts {
		texts[i] = fmt.Sprintf("Memory %d: the user prefers table-driven tests, gofmt'd code and small, "+
			"focused commits; never push directly to main without a review (rule %d).", i, i*7)
	}
	return texts
}

func BenchmarkEmbed(b *testing.B) {
	for _, n := range []int{1, 100, 10000} {
		b.Run(fmt.Sprintf("texts=%d", n), func(b *testing.B) {
			e := newEmbedder(b, fake.EmbedderConfig{})
			texts := benchTexts(n)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.Embed(context.Background(), texts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
