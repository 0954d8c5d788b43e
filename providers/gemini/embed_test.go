package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/memcore"
)

func decodeEmbedRequest(t *testing.T, body []byte) embedRequest {
	t.Helper()
	var req embedRequest
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("embed request body: %v\n%s", err, body)
	}
	return req
}

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("memory number %d about topic %d", i, i%7)
	}
	return out
}

// unit is v scaled to unit length, as Embed returns it.
func unit(v []float32) []float32 {
	n := norm(v)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / n)
	}
	return out
}

func sameVector(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(float64(a[i]-b[i])) > 1e-6 {
			return false
		}
	}
	return true
}

func TestEmbedRequestBody(t *testing.T) {
	srv := newFakeServer(t)
	c := srv.client(t, Config{Dimensions: 768})
	vecs, err := c.Embed(context.Background(), []string{"I prefer tabs over spaces.", "The build uses Bazel."})
	if err != nil {
		t.Fatalf("Embed: %v", err)
	}
	if len(vecs) != 2 || len(vecs[0]) != 768 {
		t.Fatalf("got %d vectors of %d dimensions, want 2 of 768", len(vecs), len(vecs[0]))
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	if got, want := reqs[0].Path, "/v1beta/models/gemini-embedding-001:batchEmbedContents"; got != want {
		t.Errorf("path %s, want %s", got, want)
	}
	checkGolden(t, "batch_embed_contents_request.json", reqs[0].Body)
	body := decodeEmbedRequest(t, reqs[0].Body)
	for i, r := range body.Requests {
		if r.OutputDimensionality != 768 || r.TaskType != "RETRIEVAL_DOCUMENT" || r.Model != "models/gemini-embedding-001" {
			t.Errorf("request %d: %+v, want outputDimensionality 768, taskType RETRIEVAL_DOCUMENT, model models/gemini-embedding-001", i, r)
		}
	}
}

func TestEmbedDefaultDimensionsSendsNone(t *testing.T) {
	srv := newFakeServer(t)
	c := srv.client(t, Config{})
	vecs, err := c.Embed(context.Background(), []string{"x"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs[0]) != 3072 {
		t.Errorf("%d dimensions, want the model's 3072", len(vecs[0]))
	}
	if d := decodeEmbedRequest(t, srv.Requests()[0].Body).Requests[0].OutputDimensionality; d != 0 {
		t.Errorf("outputDimensionality %d sent, want none", d)
	}
}

func TestEmbedFixedSizeModelSendsNoDimensions(t *testing.T) {
	srv := newFakeServer(t)
	srv.embed = func(text string, _ int, task string) []float32 { return hashVector(text, 768, task) }
	c := srv.client(t, Config{EmbeddingModel: "embedding-001", Dimensions: 768})
	if _, err := c.Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if d := decodeEmbedRequest(t, srv.Requests()[0].Body).Requests[0].OutputDimensionality; d != 0 {
		t.Errorf("outputDimensionality %d sent to a fixed-size model, want none", d)
	}
}

// TestEmbedBatching checks how inputs are split: at most MaxBatch texts a
// request, in input order, and the vectors reassembled in input order.
func TestEmbedBatching(t *testing.T) {
	tests := []struct {
		n, maxBatch int
		wantSizes   []int
	}{
		{250, 100, []int{100, 100, 50}},
		{2500, 100, slicesRepeat(100, 25)},
		{200, 100, []int{100, 100}},
		{3, 1, []int{1, 1, 1}},
		{7, 0, []int{7}},
		{101, 0, []int{100, 1}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d inputs, MaxBatch %d", tt.n, tt.maxBatch), func(t *testing.T) {
			srv := newFakeServer(t)
			c := srv.client(t, Config{Dimensions: 128, MaxBatch: tt.maxBatch})
			in := texts(tt.n)
			vecs, err := c.Embed(context.Background(), in)
			if err != nil {
				t.Fatalf("Embed: %v", err)
			}
			reqs := srv.Requests()
			var sizes []int
			next := 0
			for i, r := range reqs {
				body := decodeEmbedRequest(t, r.Body)
				sizes = append(sizes, len(body.Requests))
				for j, er := range body.Requests {
					if got := er.Content.text(); got != in[next] {
						t.Fatalf("request %d item %d is %q, want input %d %q", i, j, got, next, in[next])
					}
					next++
				}
			}
			if fmt.Sprint(sizes) != fmt.Sprint(tt.wantSizes) {
				t.Errorf("batch sizes %v, want %v", sizes, tt.wantSizes)
			}
			if len(vecs) != tt.n {
				t.Fatalf("%d vectors for %d inputs", len(vecs), tt.n)
			}
			for i, v := range vecs {
				if want := unit(hashVector(in[i], 128, "RETRIEVAL_DOCUMENT")); !sameVector(v, want) {
					t.Fatalf("vector %d is not the vector of input %d", i, i)
				}
			}
		})
	}
}

func slicesRepeat(v, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// TestEmbedMaxBatchAboveLimit: Gemini's batchEmbedContents takes at most
// 100 texts, so a MaxBatch of 1,000 (which would send 2,500 inputs in three
// requests to a server that allowed it) is refused when the client is made,
// not by the API later.
func TestEmbedMaxBatchAboveLimit(t *testing.T) {
	_, err := New(Config{APIKey: testKey, MaxBatch: 1000})
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "MaxBatch is 1000, want 1–100") {
		t.Errorf("New with MaxBatch 1000: %v, want ErrInvalidConfig naming MaxBatch and its range", err)
	}
}

// TestEmbedReplyOrder covers what "order restored from shuffled indices"
// means for Gemini: a batchEmbedContents reply has no index field, its
// embeddings are in the order of the requests. So the client maps the
// i-th embedding of a batch to the i-th text of that batch, and checks
// that the count matches; a reply with embeddings missing or extra is
// ErrInvalidResponse, never a silent misalignment. A reordered reply is
// indistinguishable from a correct one on the wire: this test pins that
// the client takes the server's order as it is (reversed vectors come
// back reversed), so the order guarantee rests on the API's.
func TestEmbedReplyOrder(t *testing.T) {
	in := texts(5)
	t.Run("taken as sent", func(t *testing.T) {
		srv := newFakeServer(t)
		srv.mutateEmbeddings = func(_ int, e [][]float32) [][]float32 {
			out := make([][]float32, len(e))
			for i := range e {
				out[i] = e[len(e)-1-i]
			}
			return out
		}
		c := srv.client(t, Config{Dimensions: 128})
		vecs, err := c.Embed(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		for i := range vecs {
			if !sameVector(vecs[i], unit(hashVector(in[len(in)-1-i], 128, "RETRIEVAL_DOCUMENT"))) {
				t.Errorf("vector %d is not the server's embedding %d", i, i)
			}
		}
	})
	for _, tc := range []struct {
		name   string
		mutate func(int, [][]float32) [][]float32
	}{
		{"one missing", func(_ int, e [][]float32) [][]float32 { return e[:len(e)-1] }},
		{"one extra", func(_ int, e [][]float32) [][]float32 { return append(e, e[0]) }},
		{"none", func(int, [][]float32) [][]float32 { return nil }},
		{"one missing in the second batch", func(b int, e [][]float32) [][]float32 {
			if b == 1 {
				return e[1:]
			}
			return e
		}},
		{"wrong length", func(_ int, e [][]float32) [][]float32 { e[2] = e[2][:64]; return e }},
		{"empty vector", func(_ int, e [][]float32) [][]float32 { e[1] = []float32{}; return e }},
		{"zero vector", func(_ int, e [][]float32) [][]float32 { e[0] = make([]float32, len(e[0])); return e }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFakeServer(t)
			srv.mutateEmbeddings = tc.mutate
			c := srv.client(t, Config{Dimensions: 128, MaxBatch: 3})
			vecs, err := c.Embed(context.Background(), in)
			if !errors.Is(err, memcore.ErrInvalidResponse) {
				t.Fatalf("err = %v, want ErrInvalidResponse", err)
			}
			if vecs != nil {
				t.Errorf("got %d vectors along with the error, want none", len(vecs))
			}
		})
	}
}

// TestEmbedNormalises: Gemini's vectors at reduced dimensionality are not
// unit length; Embed returns them scaled to unit length, same direction.
func TestEmbedNormalises(t *testing.T) {
	srv := newFakeServer(t)
	c := srv.client(t, Config{Dimensions: 256})
	in := []string{"short", "a much longer text with many words in it"}
	vecs, err := c.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vecs {
		raw := hashVector(in[i], 256, "RETRIEVAL_DOCUMENT")
		if math.Abs(norm(raw)-1) < 0.1 {
			t.Fatalf("the fake's vector %d is already unit length; the test proves nothing", i)
		}
		if n := norm(v); math.Abs(n-1) > 1e-5 {
			t.Errorf("vector %d has norm %v, want 1", i, n)
		}
		if !sameVector(v, unit(raw)) {
			t.Errorf("vector %d changed direction", i)
		}
	}
}

func TestEmbedNoInputsMakesNoRequest(t *testing.T) {
	srv := newFakeServer(t)
	c := srv.client(t, Config{})
	for _, in := range [][]string{nil, {}} {
		vecs, err := c.Embed(context.Background(), in)
		if err != nil || len(vecs) != 0 {
			t.Errorf("Embed(%v) = %v, %v; want no vectors, no error", in, vecs, err)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests, want none", n)
	}
}

func TestEmbedEmptyTextIsInvalidRequest(t *testing.T) {
	srv := newFakeServer(t)
	c := srv.client(t, Config{})
	_, err := c.Embed(context.Background(), []string{"fine", ""})
	if !errors.Is(err, memcore.ErrInvalidRequest) || !strings.Contains(err.Error(), "text 1") {
		t.Errorf("err = %v, want ErrInvalidRequest naming text 1", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests, want none", n)
	}
}

// TestEmbedFailureInLaterBatch: when a batch fails, Embed stops, returns
// no vectors, and the error says which texts the failed batch held.
func TestEmbedFailureInLaterBatch(t *testing.T) {
	srv := newFakeServer(t)
	c := srv.client(t, Config{Dimensions: 128, MaxBatch: 100})
	in := texts(250)
	srv.failNext(1, canned{status: 200, contentType: "application/json", body: mustEmbedReply(t, in[:100], 128)})
	srv.failNext(1, fixtureError(t, "503_unavailable.json"))
	vecs, err := c.Embed(context.Background(), in)
	if !errors.Is(err, memcore.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
	if !strings.Contains(err.Error(), "texts 100–199 of 250") {
		t.Errorf("error %q does not say which batch failed", err)
	}
	if vecs != nil {
		t.Errorf("got %d vectors with the error, want none", len(vecs))
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2 (none after the failed batch)", n)
	}
}

// mustEmbedReply is a batchEmbedContents reply for in.
func mustEmbedReply(t *testing.T, in []string, dims int) []byte {
	t.Helper()
	embs := make([]map[string]any, len(in))
	for i, s := range in {
		embs[i] = map[string]any{"values": hashVector(s, dims, "RETRIEVAL_DOCUMENT")}
	}
	b, err := json.Marshal(map[string]any{"embeddings": embs})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestEmbedMalformedReply(t *testing.T) {
	for _, name := range []string{"malformed_embeddings_type.json", "malformed_truncated.txt", "malformed_html.html"} {
		t.Run(name, func(t *testing.T) {
			srv := newFakeServer(t)
			srv.failNext(1, okFixture(t, name))
			c := srv.client(t, Config{})
			_, err := c.Embed(context.Background(), []string{"x"})
			if !errors.Is(err, memcore.ErrInvalidResponse) {
				t.Errorf("err = %v, want ErrInvalidResponse", err)
			}
			if !isNative(err) {
				t.Errorf("the decoding error is not reachable in %v", err)
			}
		})
	}
}

// TestEmbedNullReply: genai v1.77.0 panics on a 2xx body of "null"; Embed
// must report ErrInvalidResponse instead of crashing the program.
func TestEmbedNullReply(t *testing.T) {
	srv := newFakeServer(t)
	srv.failNext(1, okFixture(t, "malformed_null.json"))
	c := srv.client(t, Config{})
	_, err := c.Embed(context.Background(), []string{"x"})
	checkKind(t, err, memcore.ErrInvalidResponse)
}
