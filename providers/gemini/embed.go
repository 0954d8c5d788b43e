package gemini

import (
	"context"
	"fmt"
	"math"

	"google.golang.org/genai"

	"github.com/forgemem/forgemem/memcore"
)

// Model implements [memcore.Embedder]: the embedding model (without a
// "models/" prefix), then "@<dimensions>" when Dimensions is set or the
// model's default is known, then ";task=<type>" unless the task type is
// RETRIEVAL_DOCUMENT. For example "gemini-embedding-001@768", or
// "gemini-embedding-001@768;task=RETRIEVAL_QUERY" for a [Client.QueryEmbedder].
func (c *Client) Model() string { return c.embedIdentity }

// Embed implements [memcore.Embedder]. The texts are sent in batches of at
// most MaxBatch, one batchEmbedContents request per batch, one after
// another, each text as its own request of the batch with the configured
// task type and output dimensionality. The API answers a batch with one
// embedding per request, in request order; the vectors are returned in the
// order of texts. Every vector is scaled to unit length (the API's vectors
// are not unit length at reduced dimensionality), so a dot product is the
// cosine similarity.
//
// Zero texts give an empty result and make no request. An empty text is
// [memcore.ErrInvalidRequest] (the API refuses empty content), found
// before anything is sent. A reply with the wrong number of embeddings, an
// empty vector, a vector of the wrong length, or a zero vector is
// [memcore.ErrInvalidResponse]. If a batch fails, the error says which and
// no vectors are returned.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("gemini: embed: %w", err)
	}
	if len(texts) == 0 {
		return [][]float32{}, nil
	}
	for i, t := range texts {
		if t == "" {
			return nil, fmt.Errorf("gemini: embed: %w: text %d is empty", memcore.ErrInvalidRequest, i)
		}
	}
	cfg := &genai.EmbedContentConfig{TaskType: string(c.taskType)}
	if d := c.sentDimensions(); d > 0 {
		d32 := int32(d)
		cfg.OutputDimensionality = &d32
	}
	out := make([][]float32, 0, len(texts))
	dims := c.dimensions
	for start := 0; start < len(texts); start += c.maxBatch {
		end := min(start+c.maxBatch, len(texts))
		vecs, err := c.embedBatch(ctx, cfg, texts, start, end, dims)
		if err != nil {
			return nil, err
		}
		if dims == 0 {
			dims = len(vecs[0]) // all vectors of one call must agree
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// embedBatch embeds texts[start:end] in one request with a copy of cfg and
// checks the reply: one vector per text, each of length dims (any one
// length, the same for all, when dims is 0).
func (c *Client) embedBatch(ctx context.Context, cfg *genai.EmbedContentConfig, texts []string, start, end, dims int) ([][]float32, error) {
	batch := texts[start:end]
	contents := make([]*genai.Content, len(batch))
	for i, t := range batch {
		contents[i] = &genai.Content{Parts: []*genai.Part{{Text: t}}}
	}
	// The SDK may fill in the config; give each call its own copy.
	callCfg := *cfg
	op := batchOp(start, end, len(texts))
	resp, err := guard(op, func() (*genai.EmbedContentResponse, error) {
		resp, err := c.genai.Models.EmbedContent(ctx, c.embedModel, contents, &callCfg)
		if err != nil {
			return nil, wrapError(ctx, op, err)
		}
		return resp, nil
	})
	if err != nil {
		return nil, err
	}
	if resp == nil || len(resp.Embeddings) != len(batch) {
		got := 0
		if resp != nil {
			got = len(resp.Embeddings)
		}
		return nil, fmt.Errorf("gemini: %s: %w: %d embeddings for %d texts", op, memcore.ErrInvalidResponse, got, len(batch))
	}
	out := make([][]float32, len(batch))
	for i, e := range resp.Embeddings {
		v, err := unitVector(e, dims)
		if err != nil {
			return nil, fmt.Errorf("gemini: %s: %w: embedding %d: %w", op, memcore.ErrInvalidResponse, start+i, err)
		}
		if dims == 0 {
			dims = len(v) // all vectors of one call must agree
		}
		out[i] = v
	}
	return out, nil
}

// sentDimensions is the outputDimensionality to send: Dimensions, except
// for models with a single fixed dimension, which do not take the field.
func (c *Client) sentDimensions() int {
	if r, ok := knownDimensions[baseModelName(c.embedModel)]; ok && r.min == r.max {
		return 0
	}
	return c.dimensions
}

// batchOp names the operation for errors: "embed" for a single request,
// "embed: texts 100–199 of 250" when the input was split.
func batchOp(start, end, total int) string {
	if start == 0 && end == total {
		return "embed"
	}
	return fmt.Sprintf("embed: texts %d–%d of %d", start, end-1, total)
}

// unitVector checks an embedding and returns a copy scaled to unit length.
// want is the required length, 0 for any.
func unitVector(e *genai.ContentEmbedding, want int) ([]float32, error) {
	if e == nil || len(e.Values) == 0 {
		return nil, fmt.Errorf("empty vector")
	}
	if want > 0 && len(e.Values) != want {
		return nil, fmt.Errorf("%d dimensions, want %d", len(e.Values), want)
	}
	var sum float64
	for _, x := range e.Values {
		sum += float64(x) * float64(x)
	}
	norm := math.Sqrt(sum)
	if norm == 0 || math.IsNaN(norm) || math.IsInf(norm, 0) {
		return nil, fmt.Errorf("vector of norm %v cannot be normalised", norm)
	}
	v := make([]float32, len(e.Values))
	for i, x := range e.Values {
		v[i] = float32(float64(x) / norm)
	}
	return v, nil
}
