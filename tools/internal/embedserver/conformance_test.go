package embedserver_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/forgemem/forgemem/conformance/embedtest"
	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/openai"
	"github.com/forgemem/forgemem/tools/internal/embedserver"
)

// clientBatch is the MaxBatch of the harness's clients: small, so that the
// suite's large batch is split into several requests.
const clientBatch = 16

// harness makes providers/openai clients of the running embeddings servers,
// for the embedtest suite. The failures it makes come from the real server
// (or its absence), never from a stand-in.
type harness struct {
	t     *testing.T
	calls *atomic.Int64 // requests sent by this harness's clients
}

// client makes a client of the server at baseURL for model.
func (h *harness) client(baseURL, model string) (memcore.Embedder, error) {
	return openai.New(openai.Config{
		BaseURL:        baseURL,
		EmbeddingModel: model,
		MaxBatch:       clientBatch,
		HTTPClient:     &http.Client{Transport: countingTransport{h.calls, http.DefaultTransport}},
	})
}

func (h *harness) NewEmbedder(context.Context) (memcore.Embedder, error) {
	return h.client(mainServer.url(h.t), embedserver.Model)
}

// NewFailingEmbedder makes the failures the server really gives; it has no
// switch to fake the others.
func (h *harness) NewFailingEmbedder(_ context.Context, kind error) (memcore.Embedder, error) {
	switch kind {
	case memcore.ErrInvalidRequest:
		// The server knows one model: any other is 404 model_not_found.
		return h.client(mainServer.url(h.t), "text-embedding-3-small")
	case memcore.ErrInputTooLarge:
		// The suite's text is longer than the small server's 4 characters:
		// 400 context_length_exceeded.
		return h.client(smallServer.url(h.t), embedserver.Model)
	case memcore.ErrUnavailable:
		// A server that is not running: the connection is refused.
		return h.client(refusingURL(h.t), embedserver.Model)
	case memcore.ErrRateLimited:
		return nil, fmt.Errorf("the server never rate-limits: it queues requests and embeds them one at a time: %w", errors.ErrUnsupported)
	case memcore.ErrUnauthenticated:
		return nil, fmt.Errorf("the server has no authentication: it listens on 127.0.0.1 only: %w", errors.ErrUnsupported)
	case memcore.ErrInvalidResponse:
		return nil, fmt.Errorf("the server's replies are well formed (providers/openai's own tests cover malformed ones): %w", errors.ErrUnsupported)
	}
	return nil, fmt.Errorf("unknown failure kind %v: %w", kind, errors.ErrUnsupported)
}

// NewSlowEmbedder implements embedtest.SlowHarness to say why the in-flight
// cancellation cases are skipped.
func (h *harness) NewSlowEmbedder(context.Context) (memcore.Embedder, error) {
	return nil, fmt.Errorf("the server answers every request as soon as it is embedded and cannot be made to hold one "+
		"(providers/openai's own tests cancel calls in flight): %w", errors.ErrUnsupported)
}

// Capabilities: the server's vectors are deterministic and of unit length;
// only the batch (the client's) and the dimension are declared.
func (h *harness) Capabilities() embedtest.Capabilities {
	return embedtest.Capabilities{MaxBatch: clientBatch, Dimension: embedserver.Dimension}
}

func (h *harness) Close() {}

// Calls implements embedtest.CallCounter.
func (h *harness) Calls() int { return int(h.calls.Load()) }

// AsNative implements embedtest.NativeErrorHarness: go-openai's API error
// for the server's JSON error answers, and net/http's *url.Error for a
// refused connection.
func (h *harness) AsNative(err error) bool {
	var apiErr *goopenai.APIError
	var reqErr *goopenai.RequestError
	var urlErr *url.Error
	return errors.As(err, &apiErr) || errors.As(err, &reqErr) || errors.As(err, &urlErr)
}

var (
	_ embedtest.Harness            = (*harness)(nil)
	_ embedtest.SlowHarness        = (*harness)(nil)
	_ embedtest.CallCounter        = (*harness)(nil)
	_ embedtest.NativeErrorHarness = (*harness)(nil)
)

// countingTransport counts the requests it sends.
type countingTransport struct {
	n    *atomic.Int64
	next http.RoundTripper
}

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

// refusingURL returns a base URL on 127.0.0.1 where nothing listens.
func refusingURL(t *testing.T) string {
	t.Helper()
	return "http://127.0.0.1:" + freePort(t) + "/v1"
}

// TestConformance runs the embedder conformance suite against
// providers/openai talking to the real server.
func TestConformance(t *testing.T) {
	mainServer.url(t) // skip or fail here, not in every case
	embedtest.Run(t, func(_ context.Context, t *testing.T) (embedtest.Harness, error) {
		return &harness{t: t, calls: new(atomic.Int64)}, nil
	}, embedtest.Config{CallTimeout: time.Minute})
}

// TestRelatedSentencesScoreHigher checks that the model is a real sentence
// encoder: paraphrases with few words in common are far closer than a
// sentence on another subject, which no word-hashing embedder achieves.
func TestRelatedSentencesScoreHigher(t *testing.T) {
	e, err := (&harness{t: t, calls: new(atomic.Int64)}).NewEmbedder(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// The margin the related pair must win by; USE gives about 0.6
	// against about 0.
	const margin = 0.3
	cases := [][3]string{
		{"How do I run the unit tests?", "Which command executes the test suite?",
			"Simmer the onions in butter until they turn golden."},
		{"The build fails because a dependency is missing.", "Compilation breaks since a required package is not installed.",
			"Our cat sleeps on the windowsill all afternoon."},
		{"Prefer tabs over spaces when indenting code.", "Indentation should use tab characters rather than spaces.",
			"The train to Lisbon leaves at nine in the morning."},
	}
	for _, c := range cases {
		vecs, err := e.Embed(t.Context(), c[:])
		if err != nil {
			t.Fatal(err)
		}
		related, unrelated := cosine(vecs[0], vecs[1]), cosine(vecs[0], vecs[2])
		t.Logf("%q: related %.3f, unrelated %.3f", c[0], related, unrelated)
		if related < unrelated+margin {
			t.Errorf("%q must be closer to %q (cosine %.3f) than to %q (cosine %.3f) by at least %v",
				c[0], c[1], related, c[2], unrelated, margin)
		}
	}
}

// cosine is the cosine similarity of a and b.
func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}
