package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/openai"
)

// ollamaClient returns a server and a Client using it as an
// OpenAI-compatible server (custom BaseURL, no API key).
func ollamaClient(t *testing.T, mutate func(*openai.Config)) (*apiServer, *openai.Client) {
	t.Helper()
	s := newAPIServer(t, "")
	cfg := openai.Config{BaseURL: s.BaseURL(), Model: "llama3.2", EmbeddingModel: "nomic-embed-text"}
	if mutate != nil {
		mutate(&cfg)
	}
	c, err := openai.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

// officialClient returns a server and a Client using it as api.openai.com.
func officialClient(t *testing.T, mutate func(*openai.Config)) (*apiServer, *openai.Client) {
	t.Helper()
	s := newAPIServer(t, testKey)
	cfg := openai.Config{APIKey: testKey, Model: "gpt-4o-mini", EmbeddingModel: "text-embedding-3-small", HTTPClient: s.Client()}
	if mutate != nil {
		mutate(&cfg)
	}
	c, err := openai.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

// texts returns n distinct inputs.
func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("memory number %d about topic %d", i, i%17)
	}
	return out
}

// embedInputs decodes the inputs of each recorded embeddings request.
func embedInputs(t *testing.T, reqs []recorded) [][]string {
	t.Helper()
	var out [][]string
	for _, r := range reqs {
		var body embedWire
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatalf("recorded request: %v", err)
		}
		out = append(out, body.Input)
	}
	return out
}

func TestEmbedRestoresOrderFromShuffledIndices(t *testing.T) {
	orders := map[string]func(n int) []int{
		"reversed": func(n int) []int {
			o := make([]int, n)
			for i := range o {
				o[i] = n - 1 - i
			}
			return o
		},
		"odd indices first": func(n int) []int {
			var o []int
			for i := 1; i < n; i += 2 {
				o = append(o, i)
			}
			for i := 0; i < n; i += 2 {
				o = append(o, i)
			}
			return o
		},
	}
	for name, order := range orders {
		t.Run(name, func(t *testing.T) {
			s, c := ollamaClient(t, func(cfg *openai.Config) { cfg.MaxBatch = 7 })
			s.configure(func(s *apiServer) { s.order = order })
			in := texts(30)
			got, err := c.Embed(t.Context(), in)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(in) {
				t.Fatalf("got %d vectors for %d inputs", len(got), len(in))
			}
			for i, text := range in {
				if want := hashEmbed(text, compatDims); !slices.Equal(got[i], want) {
					t.Errorf("vector %d is not the one of input %d %q", i, i, text)
				}
			}
		})
	}
}

func TestEmbedSplitsIntoBatches(t *testing.T) {
	tests := []struct {
		name     string
		n        int
		maxBatch int
		want     []int // sizes of the requests, in order
	}{
		{"2500 inputs, MaxBatch 1000", 2500, 1000, []int{1000, 1000, 500}},
		{"2500 inputs, default MaxBatch", 2500, 0, []int{2048, 452}},
		{"exactly one batch", 1000, 1000, []int{1000}},
		{"MaxBatch 1", 3, 1, []int{1, 1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c := ollamaClient(t, func(cfg *openai.Config) { cfg.MaxBatch = tt.maxBatch })
			s.configure(func(s *apiServer) { s.embed = idEmbed })
			in := texts(tt.n)
			got, err := c.Embed(t.Context(), in)
			if err != nil {
				t.Fatal(err)
			}
			batches := embedInputs(t, s.Requests())
			var sizes []int
			var sent []string
			for _, b := range batches {
				sizes = append(sizes, len(b))
				sent = append(sent, b...)
			}
			if !slices.Equal(sizes, tt.want) {
				t.Errorf("request sizes %v; want %v", sizes, tt.want)
			}
			if !slices.Equal(sent, in) {
				t.Errorf("the batches, concatenated, are not the inputs in order")
			}
			if len(got) != tt.n {
				t.Fatalf("got %d vectors for %d inputs", len(got), tt.n)
			}
			for _, i := range []int{0, tt.n / 2, tt.n - 1} {
				if !slices.Equal(got[i], idEmbed(in[i:i+1], 0)[0]) {
					t.Errorf("vector %d does not belong to input %d", i, i)
				}
			}
		})
	}
}

func TestEmbedRequestBody(t *testing.T) {
	t.Run("with dimensions", func(t *testing.T) {
		s, c := officialClient(t, func(cfg *openai.Config) { cfg.Dimensions = 256 })
		got, err := c.Embed(t.Context(), []string{"tabs, not spaces"})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || len(got[0]) != 256 {
			t.Fatalf("got %d vectors of length %d; want 1 of 256", len(got), len(got[0]))
		}
		reqs := s.Requests()
		if len(reqs) != 1 {
			t.Fatalf("%d requests; want 1", len(reqs))
		}
		var body map[string]any
		if err := json.Unmarshal(reqs[0].Body, &body); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{
			"input":           []any{"tabs, not spaces"},
			"model":           "text-embedding-3-small",
			"encoding_format": "float",
			"dimensions":      float64(256),
		}
		if !jsonEqual(body, want) {
			t.Errorf("request body %s; want %v", reqs[0].Body, want)
		}
		if reqs[0].Path != "/v1/embeddings" {
			t.Errorf("path %q; want /v1/embeddings", reqs[0].Path)
		}
		checkGolden(t, "embed_request.json", reqs[0].Body)
	})
	t.Run("without dimensions", func(t *testing.T) {
		s, c := officialClient(t, nil)
		got, err := c.Embed(t.Context(), []string{"a", "b"})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || len(got[1]) != 1536 {
			t.Fatalf("want 2 vectors of the native 1536")
		}
		var body map[string]json.RawMessage
		if err := json.Unmarshal(s.Requests()[0].Body, &body); err != nil {
			t.Fatal(err)
		}
		if d, ok := body["dimensions"]; ok {
			t.Errorf("dimensions %s sent though Config.Dimensions is 0", d)
		}
	})
}

func TestEmbedZeroInputsMakesNoRequest(t *testing.T) {
	s, c := ollamaClient(t, nil)
	for _, in := range [][]string{nil, {}} {
		got, err := c.Embed(t.Context(), in)
		if err != nil || got == nil || len(got) != 0 {
			t.Errorf("Embed(%#v) = %v, %v; want an empty non-nil slice and no error", in, got, err)
		}
	}
	if n := len(s.Requests()); n != 0 {
		t.Errorf("%d requests for zero inputs", n)
	}
}

func TestEmbedRejectsUnusableReplies(t *testing.T) {
	item := func(index int, vec ...float32) map[string]any {
		return map[string]any{"object": "embedding", "index": index, "embedding": vec}
	}
	tests := []struct {
		name  string
		n     int
		dims  int // Config.Dimensions
		items []map[string]any
	}{
		{"too few vectors", 3, 0, []map[string]any{item(0, 1, 0), item(1, 0, 1)}},
		{"too many vectors", 1, 0, []map[string]any{item(0, 1, 0), item(1, 0, 1)}},
		{"duplicate index", 2, 0, []map[string]any{item(0, 1, 0), item(0, 0, 1)}},
		{"index out of range", 2, 0, []map[string]any{item(0, 1, 0), item(2, 0, 1)}},
		{"negative index", 2, 0, []map[string]any{item(-1, 1, 0), item(1, 0, 1)}},
		{"empty vector", 2, 0, []map[string]any{item(0), item(1, 0, 1)}},
		{"lengths differ", 2, 0, []map[string]any{item(0, 1, 0), item(1, 0, 1, 0)}},
		{"length is not Dimensions", 1, 3, []map[string]any{item(0, 1, 0)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c := ollamaClient(t, func(cfg *openai.Config) { cfg.Dimensions = tt.dims })
			s.configure(func(s *apiServer) {
				s.embedReply = func(embedWire) (int, []byte) {
					b, _ := json.Marshal(map[string]any{"object": "list", "data": tt.items, "model": "nomic-embed-text"})
					return http.StatusOK, b
				}
			})
			got, err := c.Embed(t.Context(), texts(tt.n))
			if !errors.Is(err, memcore.ErrInvalidResponse) {
				t.Errorf("Embed = %v, %v; want ErrInvalidResponse", got, err)
			}
			if memcore.IsTransient(err) {
				t.Errorf("an unusable reply must be permanent: %v", err)
			}
		})
	}

	t.Run("native length of an OpenAI model", func(t *testing.T) {
		s, c := officialClient(t, nil)
		s.configure(func(s *apiServer) { s.embed = func(in []string, _ int) [][]float32 { return constVectors(len(in), 8) } })
		if _, err := c.Embed(t.Context(), []string{"x"}); !errors.Is(err, memcore.ErrInvalidResponse) {
			t.Errorf("8-dimensional vectors from text-embedding-3-small: %v; want ErrInvalidResponse", err)
		}
	})
	t.Run("length changes between batches", func(t *testing.T) {
		s, c := ollamaClient(t, func(cfg *openai.Config) { cfg.MaxBatch = 1 })
		var calls atomic.Int32
		s.configure(func(s *apiServer) {
			s.embed = func(in []string, _ int) [][]float32 { return constVectors(len(in), 4+int(calls.Add(1))) }
		})
		if _, err := c.Embed(t.Context(), []string{"x", "y"}); !errors.Is(err, memcore.ErrInvalidResponse) {
			t.Errorf("vectors of 5 then 6 dimensions: %v; want ErrInvalidResponse", err)
		}
	})
}

// idEmbed is a cheap embedding that tells texts apart: the FNV hash of the
// text and a 1.
func idEmbed(in []string, _ int) [][]float32 {
	out := make([][]float32, len(in))
	for i, text := range in {
		h := fnv.New32a()
		_, _ = h.Write([]byte(text))
		out[i] = []float32{float32(h.Sum32()), 1}
	}
	return out
}

// constVectors returns n unit vectors of length dims.
func constVectors(n, dims int) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		out[i] = make([]float32, dims)
		out[i][0] = 1
	}
	return out
}

func TestEmbedStopsAtFirstFailedBatch(t *testing.T) {
	s, c := ollamaClient(t, func(cfg *openai.Config) { cfg.MaxBatch = 2 })
	s.setFail(http.StatusTooManyRequests, "rate_limit_429.json")
	_, err := c.Embed(t.Context(), texts(6))
	if !errors.Is(err, memcore.ErrRateLimited) {
		t.Fatalf("Embed = %v; want ErrRateLimited", err)
	}
	if n := len(s.Requests()); n != 1 {
		t.Errorf("%d requests after the first batch failed; want 1", n)
	}
}

func TestEmbedCanceledBetweenBatches(t *testing.T) {
	s, c := ollamaClient(t, func(cfg *openai.Config) { cfg.MaxBatch = 1 })
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s.configure(func(s *apiServer) {
		s.embed = func(in []string, dims int) [][]float32 {
			cancel() // the first batch succeeds, then the caller gives up
			return constVectors(len(in), dims)
		}
	})
	_, err := c.Embed(ctx, texts(3))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Embed = %v; want context.Canceled", err)
	}
	for _, k := range []error{memcore.ErrUnavailable, memcore.ErrInvalidResponse} {
		if errors.Is(err, k) {
			t.Errorf("a canceled call must not be classified; it matches %v", k)
		}
	}
	if n := len(s.Requests()); n != 1 {
		t.Errorf("%d requests; want 1: none after the context was canceled", n)
	}
}

// jsonEqual reports whether a and b encode to the same JSON.
func jsonEqual(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}
