package gemini

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"google.golang.org/genai"

	"github.com/forgemem/forgemem/memcore"
)

// Defaults used when the corresponding [Config] field is left empty.
const (
	// DefaultBaseURL is the Gemini Developer API endpoint.
	DefaultBaseURL = "https://generativelanguage.googleapis.com/"
	// DefaultAPIVersion is the API version the requests are sent to. The
	// system instruction, JSON response schemas and batched embeddings used
	// by this package are all part of it.
	DefaultAPIVersion = "v1beta"
	// DefaultModel is the completion model: Google's alias for its current
	// flash-class model, which keeps working when a dated model is retired.
	// Pin a versioned name (for example "gemini-2.5-flash") in
	// [Config.Model] for reproducible behaviour.
	DefaultModel = "gemini-flash-latest"
	// DefaultEmbeddingModel is the embedding model.
	DefaultEmbeddingModel = "gemini-embedding-001"
	// MaxBatchLimit is the most texts the Gemini API accepts in one
	// batchEmbedContents request, and the default [Config.MaxBatch].
	MaxBatchLimit = 100
)

// Config configures a [Client]. Only APIKey is required.
type Config struct {
	// APIKey is the Gemini API key, sent in the x-goog-api-key header.
	// Required. It is never read from the environment: New does not look at
	// GEMINI_API_KEY or GOOGLE_API_KEY, so that a key is only ever used
	// when the caller passed it.
	APIKey string
	// BaseURL is the API endpoint; empty means [DefaultBaseURL]. Set it to
	// reach a proxy, a gateway or a test server. It overrides
	// GOOGLE_GEMINI_BASE_URL and genai.SetDefaultBaseURLs, which are
	// ignored.
	BaseURL string
	// APIVersion is the path segment after BaseURL; empty means
	// [DefaultAPIVersion].
	APIVersion string
	// Model is the completion model used when a request names none; empty
	// means [DefaultModel]. See [New] for the names accepted.
	Model string
	// EmbeddingModel is the embedding model; empty means
	// [DefaultEmbeddingModel].
	EmbeddingModel string
	// Dimensions is the length of the vectors asked for (the API's
	// outputDimensionality); 0 means the model's default (3072 for
	// gemini-embedding-001). For known models it must lie in the model's
	// range: 128–3072 for gemini-embedding-001, 1–768 for
	// text-embedding-004; embedding-001 has a fixed 768.
	Dimensions int
	// MaxBatch is the most texts sent in one request; 0 means
	// [MaxBatchLimit], which is also the largest value allowed. Larger
	// inputs are split into several requests.
	MaxBatch int
	// TaskType tells the embedding model what the vectors are for; empty
	// means [TaskRetrievalDocument], right for stored memories and for
	// HyDE hypotheses written like them. See [Client.QueryEmbedder] for
	// embedding search queries.
	TaskType TaskType
	// HTTPClient sends the requests; nil means a new http.Client with no
	// timeout (bound calls with their context, or give a client with a
	// Timeout).
	HTTPClient *http.Client
}

// TaskType is the Gemini embedding task type: the use the vectors are
// optimised for.
type TaskType string

// The task types of the Gemini embedding API.
const (
	TaskRetrievalDocument  TaskType = "RETRIEVAL_DOCUMENT"
	TaskRetrievalQuery     TaskType = "RETRIEVAL_QUERY"
	TaskSemanticSimilarity TaskType = "SEMANTIC_SIMILARITY"
	TaskClassification     TaskType = "CLASSIFICATION"
	TaskClustering         TaskType = "CLUSTERING"
	TaskQuestionAnswering  TaskType = "QUESTION_ANSWERING"
	TaskFactVerification   TaskType = "FACT_VERIFICATION"
	TaskCodeRetrievalQuery TaskType = "CODE_RETRIEVAL_QUERY"
)

var knownTaskTypes = []TaskType{
	TaskRetrievalDocument, TaskRetrievalQuery, TaskSemanticSimilarity, TaskClassification,
	TaskClustering, TaskQuestionAnswering, TaskFactVerification, TaskCodeRetrievalQuery,
}

// ErrConfig is wrapped by every error [New] returns for a bad [Config].
var ErrConfig = errors.New("gemini: invalid config")

// Client is a Gemini API client implementing [memcore.LLMProvider] and
// [memcore.Embedder]. It is safe for concurrent use.
type Client struct {
	genai         *genai.Client
	defaultHost   bool // BaseURL is the Google endpoint: model names are checked
	model         string
	embedModel    string
	dimensions    int
	maxBatch      int
	taskType      TaskType
	embedIdentity string
}

var (
	_ memcore.LLMProvider = (*Client)(nil)
	_ memcore.Embedder    = (*Client)(nil)
)

// New checks cfg and returns a Client. It makes no network call.
//
// Errors wrap [ErrConfig] and name the field at fault: a missing API key,
// a BaseURL that is not an absolute http(s) URL, a MaxBatch outside
// 1–[MaxBatchLimit], an unknown task type, Dimensions outside the
// embedding model's range, or a model name that cannot be right.
//
// Model names: against the Google endpoint (BaseURL empty or
// generativelanguage.googleapis.com) completion models must start with
// "gemini-", "gemma-" or "learnlm-" and embedding models with
// "gemini-embedding-", "text-embedding-" or "embedding-", optionally after
// a "models/" prefix ("tunedModels/<id>" is also accepted for
// completions). With any other BaseURL (a proxy or gateway that may rename
// models) any name is accepted that is not empty and holds no whitespace,
// "?", "&", "#" or "..".
//
// The genai SDK would otherwise read GEMINI_API_KEY, GOOGLE_API_KEY,
// GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_GEMINI_BASE_URL and GOOGLE_CLOUD_*
// from the environment; New passes the key, the backend (the Gemini
// Developer API), the base URL and the API version explicitly, so none of
// them has any effect.
func New(cfg Config) (*Client, error) {
	if strings.TrimSpace(cfg.APIKey) == "" {
		return nil, fmt.Errorf("%w: APIKey is empty (get a key at https://aistudio.google.com/apikey; it is not read from the environment)", ErrConfig)
	}
	baseURL, defaultHost, err := checkBaseURL(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	apiVersion := cfg.APIVersion
	if apiVersion == "" {
		apiVersion = DefaultAPIVersion
	}
	if !validPathSegment(apiVersion) {
		return nil, fmt.Errorf("%w: APIVersion %q is not a single path segment", ErrConfig, apiVersion)
	}
	c := &Client{
		defaultHost: defaultHost,
		model:       cfg.Model,
		embedModel:  cfg.EmbeddingModel,
		dimensions:  cfg.Dimensions,
		maxBatch:    cfg.MaxBatch,
		taskType:    cfg.TaskType,
	}
	if c.model == "" {
		c.model = DefaultModel
	}
	if err := checkModel(c.model, kindCompletion, defaultHost); err != nil {
		return nil, fmt.Errorf("%w: Model: %w", ErrConfig, err)
	}
	if c.embedModel == "" {
		c.embedModel = DefaultEmbeddingModel
	}
	if err := checkModel(c.embedModel, kindEmbedding, defaultHost); err != nil {
		return nil, fmt.Errorf("%w: EmbeddingModel: %w", ErrConfig, err)
	}
	if err := checkDimensions(c.embedModel, c.dimensions); err != nil {
		return nil, fmt.Errorf("%w: Dimensions: %w", ErrConfig, err)
	}
	switch {
	case c.maxBatch == 0:
		c.maxBatch = MaxBatchLimit
	case c.maxBatch < 0 || c.maxBatch > MaxBatchLimit:
		return nil, fmt.Errorf("%w: MaxBatch %d is outside 1–%d (the Gemini API's limit per request)", ErrConfig, cfg.MaxBatch, MaxBatchLimit)
	}
	if c.taskType == "" {
		c.taskType = TaskRetrievalDocument
	}
	if !isKnownTaskType(c.taskType) {
		return nil, fmt.Errorf("%w: TaskType %q is not one of %v", ErrConfig, c.taskType, knownTaskTypes)
	}
	c.embedIdentity = embedIdentity(c.embedModel, c.dimensions, c.taskType)

	httpClient := cfg.HTTPClient
	if httpClient == nil {
		httpClient = &http.Client{}
	}
	gc, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:     cfg.APIKey,
		Backend:    genai.BackendGeminiAPI,
		HTTPClient: httpClient,
		HTTPOptions: genai.HTTPOptions{
			BaseURL:    baseURL,
			APIVersion: apiVersion,
		},
	})
	if err != nil {
		// The SDK's message prints its whole config, key included.
		return nil, fmt.Errorf("%w: the genai SDK refused it: %s", ErrConfig, strings.ReplaceAll(err.Error(), cfg.APIKey, "[redacted]"))
	}
	c.genai = gc
	return c, nil
}

// QueryEmbedder returns a Client that shares c's connection and settings
// but embeds with the [TaskRetrievalQuery] task type, for embedding search
// queries that are compared against documents embedded by c. Its Model
// differs from c's (vectors of the same text differ between task types, so
// they must not share a cache), but its vectors live in the same space.
func (c *Client) QueryEmbedder() *Client {
	q := *c
	q.taskType = TaskRetrievalQuery
	q.embedIdentity = embedIdentity(q.embedModel, q.dimensions, q.taskType)
	return &q
}

func checkBaseURL(raw string) (baseURL string, defaultHost bool, err error) {
	if raw == "" {
		return DefaultBaseURL, true, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", false, fmt.Errorf("%w: BaseURL %q: %w", ErrConfig, raw, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false, fmt.Errorf("%w: BaseURL %q is not an absolute http(s) URL", ErrConfig, raw)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", false, fmt.Errorf("%w: BaseURL %q must not have a query or fragment", ErrConfig, raw)
	}
	return raw, strings.EqualFold(u.Hostname(), "generativelanguage.googleapis.com"), nil
}

func validPathSegment(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, "/?#&% \t\r\n")
}

func isKnownTaskType(t TaskType) bool {
	for _, k := range knownTaskTypes {
		if t == k {
			return true
		}
	}
	return false
}
