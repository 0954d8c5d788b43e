package embedtest_test

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/forgemem/forgemem/conformance/embedtest"
	"github.com/forgemem/forgemem/memcore"
)

// wordsEmbedder stands in for the embedder under test: it hashes words into
// 128 dimensions. A real embedder sends the texts to an API; in the harness
// of a real embedder the API is an httptest server speaking the vendor's
// wire format, which can count the requests it gets.
type wordsEmbedder struct {
	calls    *atomic.Int64 // API calls, counted for the harness
	failWith error         // when set, every call fails with it
}

// wordsAPIError stands in for the native error type of the embedder's SDK.
type wordsAPIError struct{ StatusCode int }

func (e *wordsAPIError) Error() string { return fmt.Sprintf("words api: status %d", e.StatusCode) }

func (e *wordsEmbedder) Model() string { return "words-128" }

func (e *wordsEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(texts) == 0 {
		return nil, nil // zero inputs: no call
	}
	e.calls.Add(1)
	if e.failWith != nil {
		return nil, e.failWith
	}
	vecs := make([][]float32, len(texts))
	for i, text := range texts {
		v := make([]float32, 128)
		for _, word := range strings.Fields(strings.ToLower(text)) {
			h := fnv.New32a()
			h.Write([]byte(strings.Trim(word, ".,!?")))
			v[h.Sum32()%128]++
		}
		var norm float64
		for _, x := range v {
			norm += float64(x * x)
		}
		for j := range v {
			v[j] /= float32(math.Sqrt(norm))
		}
		vecs[i] = v
	}
	return vecs, nil
}

// wordsHarness is what an embedder module writes to run the suite.
type wordsHarness struct {
	calls atomic.Int64
}

// newWordsHarness is the embedtest.HarnessMaker; Run calls it for every
// subtest.
func newWordsHarness(ctx context.Context, t *testing.T) (embedtest.Harness, error) {
	return &wordsHarness{}, nil
}

func (h *wordsHarness) NewEmbedder(ctx context.Context) (memcore.Embedder, error) {
	return &wordsEmbedder{calls: &h.calls}, nil
}

// NewFailingEmbedder makes the API fail the way it does for kind. Here the
// embedder maps status codes to the taxonomy itself; with a real embedder,
// the httptest server answers with the status code and error body instead.
func (h *wordsHarness) NewFailingEmbedder(ctx context.Context, kind error) (memcore.Embedder, error) {
	status := map[error]int{
		memcore.ErrRateLimited:     http.StatusTooManyRequests,
		memcore.ErrUnauthenticated: http.StatusUnauthorized,
		memcore.ErrUnavailable:     http.StatusServiceUnavailable,
		memcore.ErrInputTooLarge:   http.StatusRequestEntityTooLarge,
		memcore.ErrInvalidRequest:  http.StatusBadRequest,
	}[kind]
	if status == 0 {
		return nil, fmt.Errorf("%w: the words API never answers malformed replies", errors.ErrUnsupported)
	}
	return &wordsEmbedder{calls: &h.calls, failWith: fmt.Errorf("words: %w: %w", kind, &wordsAPIError{status})}, nil
}

// Capabilities declares the dimension; the zero value of the rest claims
// deterministic, unit-length vectors and no batch limit.
func (h *wordsHarness) Capabilities() embedtest.Capabilities {
	return embedtest.Capabilities{Dimension: 128}
}

func (h *wordsHarness) Close() {}

// Calls implements embedtest.CallCounter.
func (h *wordsHarness) Calls() int { return int(h.calls.Load()) }

// AsNative implements embedtest.NativeErrorHarness.
func (h *wordsHarness) AsNative(err error) bool {
	var apiErr *wordsAPIError
	return errors.As(err, &apiErr)
}

// An embedder module runs the suite from a test of its own:
//
//	func TestConformance(t *testing.T) {
//		embedtest.Run(t, newWordsHarness, embedtest.Config{})
//	}
//
// Below, the harness's embedder embeds two texts, as the suite does.
func Example() {
	var h wordsHarness
	e, err := h.NewEmbedder(context.Background())
	if err != nil {
		panic(err)
	}
	vecs, err := e.Embed(context.Background(), []string{"Run gofmt before committing.", "Bake the bread."})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s: %d vectors of %d dimensions in %d call\n", e.Model(), len(vecs), len(vecs[0]), h.Calls())
	// Output: words-128: 2 vectors of 128 dimensions in 1 call
}
