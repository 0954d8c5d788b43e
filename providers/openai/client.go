package openai

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/forgemem/forgemem/memcore"
	goopenai "github.com/sashabaranov/go-openai"
)

// Client is a [memcore.LLMProvider] and [memcore.Embedder] backed by the
// OpenAI API or any server that speaks its chat-completions and embeddings
// wire format. It is safe for concurrent use.
type Client struct {
	api *goopenai.Client
	cfg settings
}

var (
	_ memcore.LLMProvider = (*Client)(nil)
	_ memcore.Embedder    = (*Client)(nil)
)

// New checks cfg and returns a Client. It makes no network call. Every
// configuration mistake is reported at once, in one *memcore.ConfigError
// (matching [ErrInvalidConfig], which is memcore.ErrInvalidConfig) that
// names each bad field and the values it accepts:
//
//   - BaseURL must be an absolute http(s) URL without query or fragment
//     (default [DefaultBaseURL]).
//   - APIKey is required for api.openai.com, optional elsewhere, and must
//     not have surrounding white space.
//   - Model and EmbeddingModel must not contain white space.
//   - Dimensions ≥ 0; MaxBatch in 1–[MaxBatchLimit] (0 means the limit).
//   - Headers must not set Accept, Authorization, Content-Length,
//     Content-Type or Host (each is named, its value never shown).
//   - For api.openai.com, unless AllowUnknownModels is set: Model must be a
//     chat model (gpt-*, chatgpt-*, o1*, o3*, o4*, ft:*, excluding
//     instruct, embedding, audio, image and moderation models);
//     EmbeddingModel must be text-embedding-3-small (1536),
//     text-embedding-3-large (3072) or text-embedding-ada-002 (1536, no
//     Dimensions), and Dimensions must not exceed the native length. For
//     other servers any name is accepted.
//
// Empty Model and EmbeddingModel mean [DefaultModel] and
// [DefaultEmbeddingModel], OpenAI's names, also for another server; see
// "Default models" in the package documentation.
func New(cfg Config) (*Client, error) {
	s, err := validate(cfg)
	if err != nil {
		return nil, err
	}
	hc := s.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	headers := s.Headers.Clone()
	if s.Project != "" {
		if headers == nil {
			headers = http.Header{}
		}
		headers.Set("OpenAI-Project", s.Project)
	}
	oc := goopenai.DefaultConfig(s.APIKey)
	oc.BaseURL = s.BaseURL
	oc.OrgID = s.Organization
	oc.HTTPClient = &doer{client: hc, headers: headers}
	return &Client{api: goopenai.NewClientWithConfig(oc), cfg: s}, nil
}

// Model identifies the vectors Embed produces: the embedding model's name
// (Config.EmbeddingModel, or [DefaultEmbeddingModel] when that is empty),
// followed by "@<Dimensions>" when Dimensions is set (for example
// "text-embedding-3-small@256").
func (c *Client) Model() string {
	if c.cfg.Dimensions > 0 {
		return c.cfg.EmbeddingModel + "@" + strconv.Itoa(c.cfg.Dimensions)
	}
	return c.cfg.EmbeddingModel
}

// schemaName is what OpenAI accepts as a response-format name.
var schemaName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// defaultSchemaName names a response schema whose Name is empty.
const defaultSchemaName = "response"

// Complete sends req to the chat completions endpoint, for req.Model or,
// when that is empty, the configured Model: the system prompt as a leading
// system message, then req.Messages. With req.ResponseSchema the request
// asks for a JSON reply through response_format "json_schema", strict when
// the schema meets OpenAI's strict-mode rules (see the package
// documentation). A Temperature of 0 is sent as 0. MaxTokens is sent as
// max_completion_tokens to api.openai.com and as max_tokens to other
// servers (which know it better), except for reasoning models.
//
// Errors match the memcore taxonomy; see the package documentation.
func (c *Client) Complete(ctx context.Context, req memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
	const op = "complete"
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("openai: %s: %w", op, err)
	}
	creq, zeroTemp, err := c.chatRequest(req)
	if err != nil {
		return nil, err
	}
	callCtx := ctx
	if zeroTemp {
		callCtx = withZeroTemperature(ctx)
	}
	resp, err := c.api.CreateChatCompletion(callCtx, creq)
	if err != nil {
		return nil, wrapError(ctx, op, markLocal(err))
	}
	if len(resp.Choices) == 0 {
		return nil, invalidResponse(op, "reply has no choices")
	}
	msg := resp.Choices[0].Message
	if msg.Refusal != "" && msg.Content == "" {
		return nil, invalidResponse(op, "model refused: %s", msg.Refusal)
	}
	if msg.Content == "" {
		return nil, invalidResponse(op, "reply is empty (finish reason %q)", resp.Choices[0].FinishReason)
	}
	return &memcore.CompletionResponse{
		Text:  msg.Content,
		Model: resp.Model,
		Usage: memcore.Usage{
			InputTokens:  resp.Usage.PromptTokens,
			OutputTokens: resp.Usage.CompletionTokens,
		},
	}, nil
}

// chatRequest builds the go-openai request for req and reports whether a
// temperature of exactly 0 must be written into it.
func (c *Client) chatRequest(req memcore.CompletionRequest) (goopenai.ChatCompletionRequest, bool, error) {
	const op = "complete"
	var creq goopenai.ChatCompletionRequest
	var err error
	if creq.Model, err = c.chatModel(req.Model); err != nil {
		return creq, false, err
	}
	if creq.Messages, err = chatMessages(req); err != nil {
		return creq, false, err
	}
	if err := c.setMaxTokens(&creq, req.MaxTokens); err != nil {
		return creq, false, err
	}
	zeroTemp, err := setTemperature(&creq, req.Temperature)
	if err != nil {
		return creq, false, err
	}
	if sc := req.ResponseSchema; sc != nil {
		rf, err := responseFormat(sc)
		if err != nil {
			return creq, false, invalidRequest(op, "%v", err)
		}
		creq.ResponseFormat = rf
	}
	return creq, zeroTemp, nil
}

// chatModel returns the model a request for requested (empty: the
// configured Model) is sent to, or why it cannot be.
func (c *Client) chatModel(requested string) (string, error) {
	const op = "complete"
	model := cmp.Or(requested, c.cfg.Model)
	if strings.ContainsFunc(model, isSpaceOrControl) {
		return "", invalidRequest(op, "model %q contains white space or control characters", model)
	}
	if requested != "" && c.cfg.official && !c.cfg.AllowUnknownModels && !isOpenAIChatModel(requested) {
		return "", invalidRequest(op, "model %q is not an OpenAI chat model", requested)
	}
	return model, nil
}

// chatRoles maps memcore's roles to the chat completions API's.
var chatRoles = map[memcore.Role]string{
	memcore.RoleSystem:    goopenai.ChatMessageRoleSystem,
	memcore.RoleUser:      goopenai.ChatMessageRoleUser,
	memcore.RoleAssistant: goopenai.ChatMessageRoleAssistant,
}

// chatMessages returns req's system prompt, as a leading system message,
// and its messages, or why they cannot be sent.
func chatMessages(req memcore.CompletionRequest) ([]goopenai.ChatCompletionMessage, error) {
	const op = "complete"
	var msgs []goopenai.ChatCompletionMessage
	if req.System != "" {
		msgs = append(msgs, goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleSystem, Content: req.System})
	}
	for i, m := range req.Messages {
		role, ok := chatRoles[m.Role]
		if !ok {
			return nil, invalidRequest(op, "message %d: role %q is not supported (want system, user or assistant)", i, m.Role)
		}
		msgs = append(msgs, goopenai.ChatCompletionMessage{Role: role, Content: m.Content})
	}
	if len(msgs) == 0 {
		return nil, invalidRequest(op, "no system prompt and no messages")
	}
	return msgs, nil
}

// setMaxTokens sets the reply limit of creq: max_completion_tokens for
// api.openai.com and reasoning models, max_tokens for other servers, which
// know it better.
func (c *Client) setMaxTokens(creq *goopenai.ChatCompletionRequest, maxTokens int) error {
	switch {
	case maxTokens < 0:
		return invalidRequest("complete", "MaxTokens %d is negative", maxTokens)
	case maxTokens == 0:
		return nil
	case c.cfg.official:
		creq.MaxCompletionTokens = maxTokens
		return nil
	}
	//lint:ignore SA1019 max_tokens is deprecated by OpenAI but is what Ollama, vLLM and other compatible servers read.
	creq.MaxTokens = maxTokens
	if errors.Is(goopenai.NewReasoningValidator().Validate(*creq), goopenai.ErrReasoningModelMaxTokensDeprecated) {
		//lint:ignore SA1019 a reasoning model refuses max_tokens: it is cleared for max_completion_tokens.
		creq.MaxTokens, creq.MaxCompletionTokens = 0, maxTokens
	}
	return nil
}

// setTemperature sets creq's temperature from t (nil: the server's
// default) and reports whether it is exactly 0, which go-openai would
// leave out of the request.
func setTemperature(creq *goopenai.ChatCompletionRequest, t *float64) (zero bool, err error) {
	const op = "complete"
	switch {
	case t == nil:
		return false, nil
	case math.IsNaN(*t) || math.IsInf(*t, 0) || *t < 0:
		return false, invalidRequest(op, "Temperature %v is not a finite number ≥ 0", *t)
	case *t == 0:
		return true, nil
	case *t > math.MaxFloat32:
		return false, invalidRequest(op, "Temperature %v is too large", *t)
	}
	creq.Temperature = float32(*t)
	return false, nil
}

// responseFormat turns a memcore schema into a json_schema response format.
func responseFormat(sc *memcore.Schema) (*goopenai.ChatCompletionResponseFormat, error) {
	name := sc.Name
	if name == "" {
		name = defaultSchemaName
	}
	if !schemaName.MatchString(name) {
		return nil, fmt.Errorf("ResponseSchema.Name %q: want 1 to 64 letters, digits, '_' or '-'", sc.Name)
	}
	var root map[string]json.RawMessage
	if err := json.Unmarshal(sc.Definition, &root); err != nil || root == nil {
		return nil, fmt.Errorf("ResponseSchema.Definition is not a JSON object")
	}
	return &goopenai.ChatCompletionResponseFormat{
		Type: goopenai.ChatCompletionResponseFormatTypeJSONSchema,
		JSONSchema: &goopenai.ChatCompletionResponseFormatJSONSchema{
			Name:        name,
			Description: sc.Description,
			Schema:      json.RawMessage(sc.Definition),
			Strict:      strictCompatible(sc.Definition),
		},
	}, nil
}

// Embed returns one vector per text, in input order. Inputs are sent in
// requests of at most Config.MaxBatch texts, one after another; each reply
// is put back in order by the "index" of its items, which must cover the
// batch exactly once. Vectors are returned as the server sent them (OpenAI's
// are unit length; other servers' may not be: this package does not
// renormalise). All vectors must have the same length, equal to Dimensions
// when it is set (or to the model's native length on api.openai.com).
// Zero texts give zero vectors and make no request.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	const op = "embed"
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("openai: %s: %w", op, err)
	}
	if len(texts) == 0 {
		return [][]float32{}, nil
	}
	want := c.cfg.Dimensions
	if want == 0 {
		want = c.cfg.nativeDims
	}
	out := make([][]float32, len(texts))
	for start := 0; start < len(texts); start += c.cfg.MaxBatch {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("openai: %s: %w", op, err)
		}
		end := min(start+c.cfg.MaxBatch, len(texts))
		resp, err := c.api.CreateEmbeddings(ctx, goopenai.EmbeddingRequestStrings{
			Input:          texts[start:end],
			Model:          goopenai.EmbeddingModel(c.cfg.EmbeddingModel),
			EncodingFormat: goopenai.EmbeddingEncodingFormatFloat,
			Dimensions:     c.cfg.Dimensions,
		})
		if err != nil {
			return nil, wrapError(ctx, op, markLocal(err))
		}
		if err := place(out[start:end], resp.Data, want); err != nil {
			return nil, fmt.Errorf("openai: %s: %w: inputs %d..%d: %w", op, memcore.ErrInvalidResponse, start, end-1, err)
		}
		if want == 0 {
			want = len(out[start])
		}
	}
	return out, nil
}

// place puts each item of data into dst by its index, checking that every
// index of dst is filled exactly once and that every vector is non-empty
// and, when want > 0, has length want; with want == 0 all vectors must
// share one length.
func place(dst [][]float32, data []goopenai.Embedding, want int) error {
	if len(data) != len(dst) {
		return fmt.Errorf("%d vectors for %d inputs", len(data), len(dst))
	}
	for _, d := range data {
		switch {
		case d.Index < 0 || d.Index >= len(dst):
			return fmt.Errorf("index %d out of range 0..%d", d.Index, len(dst)-1)
		case dst[d.Index] != nil:
			return fmt.Errorf("index %d appears twice", d.Index)
		case len(d.Embedding) == 0:
			return fmt.Errorf("index %d: empty vector", d.Index)
		}
		if want == 0 {
			want = len(d.Embedding)
		}
		if len(d.Embedding) != want {
			return fmt.Errorf("index %d: vector of length %d, want %d", d.Index, len(d.Embedding), want)
		}
		dst[d.Index] = d.Embedding
	}
	return nil
}
