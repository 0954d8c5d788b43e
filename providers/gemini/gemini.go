package gemini

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode"

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
	// DefaultModel is the completion model of [Client.Complete]: Google's
	// alias for its current flash-class model, which keeps working when a
	// dated model is retired. Pin a versioned name (for example
	// "gemini-2.5-flash") in [Config.Model] for reproducible behaviour. It
	// is Gemini's name: another server (set through [Config.BaseURL])
	// needs [Config.Model] set to a model it serves.
	DefaultModel = "gemini-flash-latest"
	// DefaultEmbeddingModel is the embedding model of [Client.Embed]:
	// 3072 dimensions natively, 128–3072 on request. It is Gemini's name:
	// another server needs [Config.EmbeddingModel] set to a model it
	// serves.
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
	// Model is the completion model Complete uses when the request's Model
	// is empty; empty means [DefaultModel]. With BaseURL set to another
	// server, set it to a model that server serves: the default is
	// Gemini's name (see the package documentation). See [New] for the
	// names accepted.
	Model string
	// EmbeddingModel is the model Embed uses; empty means
	// [DefaultEmbeddingModel]. With BaseURL set to another server, set it
	// to a model that server serves: the default is Gemini's name.
	EmbeddingModel string
	// Dimensions is the length of the vectors asked for (the API's
	// outputDimensionality); 0 means the model's default (3072 for
	// gemini-embedding-001). For known models it must lie in the model's
	// range: 128–3072 for gemini-embedding-001, 1–768 for
	// text-embedding-004; embedding-001 has a fixed 768. For other models
	// it must be 0–65536.
	Dimensions int
	// MaxBatch is the most texts sent in one request, 1–[MaxBatchLimit];
	// 0 means MaxBatchLimit. Larger inputs are split into several
	// requests.
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

// ErrInvalidConfig is wrapped by the error [New] returns for a bad
// [Config], so callers can tell a configuration mistake from other
// failures, for example
//
//	gemini: invalid config: MaxBatch is 1000, want 1–100 (0 means 100)
//
// The message names every bad field, the value given (never the API key)
// and the values allowed. Nothing is clamped.
var ErrInvalidConfig = errors.New("invalid config")

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
// Every configuration mistake is reported at once, in one error wrapping
// [ErrInvalidConfig] that names each bad field and the values it accepts:
// a missing API key (or one with surrounding white space), a BaseURL that
// is not an absolute http(s) URL without query or fragment, an APIVersion
// that is not one path segment, a model name that cannot be right,
// Dimensions outside the embedding model's range, a MaxBatch outside
// 1–[MaxBatchLimit] (0 means the limit), or an unknown task type.
//
// Model names: against the Google endpoint (BaseURL empty or
// generativelanguage.googleapis.com) completion models must start with
// "gemini-", "gemma-" or "learnlm-" and embedding models with
// "gemini-embedding-", "text-embedding-" or "embedding-", optionally after
// a "models/" prefix ("tunedModels/<id>" is also accepted for
// completions). With any other BaseURL (a proxy or gateway that may rename
// models) any name is accepted that holds no white space, "?", "&", "#",
// "%", "\" or "..". Empty Model and EmbeddingModel mean [DefaultModel] and
// [DefaultEmbeddingModel], Gemini's names, also for another server; see
// "Default models" in the package documentation.
//
// The genai SDK would otherwise read GEMINI_API_KEY, GOOGLE_API_KEY,
// GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_GEMINI_BASE_URL and GOOGLE_CLOUD_*
// from the environment; New passes the key, the backend (the Gemini
// Developer API), the base URL and the API version explicitly, so none of
// them has any effect.
func New(cfg Config) (*Client, error) {
	var bad problems
	switch {
	case strings.TrimSpace(cfg.APIKey) == "":
		bad.add("APIKey", "empty", "a Gemini API key (get one at https://aistudio.google.com/apikey; it is not read from the environment)")
	case cfg.APIKey != strings.TrimSpace(cfg.APIKey) || strings.ContainsFunc(cfg.APIKey, unicode.IsControl):
		bad = append(bad, "APIKey has surrounding white space or control characters, want none")
	}
	baseURL, defaultHost, baseOK := checkBaseURL(cfg.BaseURL)
	if !baseOK {
		bad.add("BaseURL", strconv.Quote(cfg.BaseURL), fmt.Sprintf("an absolute http or https URL without query or fragment, such as %q", DefaultBaseURL))
	}
	apiVersion := cfg.APIVersion
	if apiVersion == "" {
		apiVersion = DefaultAPIVersion
	}
	if !validPathSegment(apiVersion) {
		bad.add("APIVersion", strconv.Quote(cfg.APIVersion), fmt.Sprintf("a single path segment such as %q", DefaultAPIVersion))
	}
	c := &Client{
		defaultHost: defaultHost,
		model:       cmp.Or(cfg.Model, DefaultModel),
		embedModel:  cmp.Or(cfg.EmbeddingModel, DefaultEmbeddingModel),
		dimensions:  cfg.Dimensions,
		maxBatch:    cmp.Or(cfg.MaxBatch, MaxBatchLimit),
		taskType:    cmp.Or(cfg.TaskType, TaskRetrievalDocument),
	}
	// The model names are checked against the Google endpoint's families
	// only when BaseURL is usable and is that endpoint.
	if want := modelWant(c.model, kindCompletion, defaultHost); want != "" {
		bad.add("Model", strconv.Quote(c.model), want)
	}
	modelOK := true
	if want := modelWant(c.embedModel, kindEmbedding, defaultHost); want != "" {
		bad.add("EmbeddingModel", strconv.Quote(c.embedModel), want)
		modelOK = false
	}
	if want := dimensionsWant(c.embedModel, c.dimensions); modelOK && want != "" {
		bad.add("Dimensions", c.dimensions, want)
	} else if !modelOK && c.dimensions < 0 {
		bad.add("Dimensions", c.dimensions, "at least 0 (0 means the model's default)")
	}
	if c.maxBatch < 1 || c.maxBatch > MaxBatchLimit {
		bad.add("MaxBatch", cfg.MaxBatch, fmt.Sprintf("1–%d (0 means %d, the Gemini API's limit per request)", MaxBatchLimit, MaxBatchLimit))
	}
	if !isKnownTaskType(c.taskType) {
		names := make([]string, len(knownTaskTypes))
		for i, k := range knownTaskTypes {
			names[i] = string(k)
		}
		bad.add("TaskType", strconv.Quote(string(c.taskType)), "one of "+strings.Join(names, ", ")+" (empty means "+string(TaskRetrievalDocument)+")")
	}
	if err := bad.err(); err != nil {
		return nil, err
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
		return nil, fmt.Errorf("gemini: %w: the genai SDK refused it: %s", ErrInvalidConfig, strings.ReplaceAll(err.Error(), cfg.APIKey, "[redacted]"))
	}
	c.genai = gc
	return c, nil
}

// problems collects what is wrong with a Config, one message per bad field.
type problems []string

// add records a bad field: "<field> is <value>, want <allowed>".
func (p *problems) add(field string, value any, want string) {
	*p = append(*p, fmt.Sprintf("%s is %v, want %s", field, value, want))
}

// err returns one error wrapping ErrInvalidConfig that lists p, or nil.
func (p problems) err() error {
	if len(p) == 0 {
		return nil
	}
	return fmt.Errorf("gemini: %w: %s", ErrInvalidConfig, strings.Join(p, "; "))
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

// checkBaseURL returns the base URL to use (DefaultBaseURL for ""),
// whether it is the Google endpoint, and whether raw is usable: an absolute
// http(s) URL without query or fragment.
func checkBaseURL(raw string) (baseURL string, defaultHost, ok bool) {
	if raw == "" {
		return DefaultBaseURL, true, true
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", false, false
	}
	return raw, strings.EqualFold(u.Hostname(), "generativelanguage.googleapis.com"), true
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
