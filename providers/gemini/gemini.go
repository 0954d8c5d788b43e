package gemini

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/url"
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

// Config configures a [Client]. Only APIKey is required; a zero field means
// its default, so Config{APIKey: key} is [DefaultConfig] with the key.
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

// ErrInvalidConfig is memcore.ErrInvalidConfig, the one sentinel every
// configuration error of forgemem matches; it is kept here so that
// errors.Is(err, gemini.ErrInvalidConfig) goes on working. [New] and
// [Config.Validate] return a *memcore.ConfigError matching it for a bad
// [Config], for example
//
//	gemini: invalid config: MaxBatch is 1000, want 1–100 (0 means 100, the Gemini API's limit per request)
//
// The message names every bad field, the value given (never the API key)
// and the values allowed. Nothing is clamped.
var ErrInvalidConfig = memcore.ErrInvalidConfig

// DefaultConfig returns the defaults of a [Client]: [DefaultBaseURL],
// [DefaultAPIVersion], [DefaultModel], [DefaultEmbeddingModel] at its
// default length, batches of [MaxBatchLimit] and [TaskRetrievalDocument].
// APIKey is empty: set it.
func DefaultConfig() Config {
	return Config{
		BaseURL: DefaultBaseURL, APIVersion: DefaultAPIVersion, Model: DefaultModel,
		EmbeddingModel: DefaultEmbeddingModel, MaxBatch: MaxBatchLimit, TaskType: TaskRetrievalDocument,
	}
}

// Validate reports every mistake in c at once, in a *memcore.ConfigError
// (which matches [ErrInvalidConfig]), or returns nil; see [New] for the
// rules. It makes no network call.
func (c Config) Validate() error {
	_, err := c.resolve()
	return err
}

// resolved is a validated Config with its defaults applied.
type resolved struct {
	Config
	// defaultHost: BaseURL is the Google endpoint, and model names are
	// checked against its families.
	defaultHost bool
}

// resolve checks c, reporting every bad field at once, and applies the
// defaults.
func (c Config) resolve() (resolved, error) {
	var bad memcore.FieldErrors
	checkAPIKey(&bad, c.APIKey)
	baseURL, defaultHost, baseOK := checkBaseURL(c.BaseURL)
	bad.Check(baseOK, "BaseURL", c.BaseURL, fmt.Sprintf("an absolute http or https URL without query or fragment, such as %q", DefaultBaseURL))
	r := resolved{Config: c, defaultHost: defaultHost}
	r.BaseURL = baseURL
	r.APIVersion = cmp.Or(c.APIVersion, DefaultAPIVersion)
	bad.Check(validPathSegment(r.APIVersion), "APIVersion", c.APIVersion, fmt.Sprintf("a single path segment such as %q", DefaultAPIVersion))
	r.Model = cmp.Or(c.Model, DefaultModel)
	r.EmbeddingModel = cmp.Or(c.EmbeddingModel, DefaultEmbeddingModel)
	// The model names are checked against the Google endpoint's families
	// only when BaseURL is usable and is that endpoint.
	checkModels(&bad, r.Model, r.EmbeddingModel, r.Dimensions, defaultHost)
	r.MaxBatch = cmp.Or(c.MaxBatch, MaxBatchLimit)
	bad.Check(r.MaxBatch >= 1 && r.MaxBatch <= MaxBatchLimit, "MaxBatch", c.MaxBatch,
		fmt.Sprintf("1–%d (0 means %d, the Gemini API's limit per request)", MaxBatchLimit, MaxBatchLimit))
	r.TaskType = cmp.Or(c.TaskType, TaskRetrievalDocument)
	bad.Check(isKnownTaskType(r.TaskType), "TaskType", string(r.TaskType), taskTypeWant())
	return r, bad.Err("gemini", "")
}

// checkAPIKey records the API key as bad when it is blank or has
// surrounding white space or control characters. The key itself is never
// shown.
func checkAPIKey(bad *memcore.FieldErrors, key string) {
	const want = "a Gemini API key (get one at https://aistudio.google.com/apikey; it is not read from the environment)"
	if strings.TrimSpace(key) == "" {
		bad.Check(false, "APIKey", memcore.Description("empty"), want)
		return
	}
	clean := key == strings.TrimSpace(key) && !strings.ContainsFunc(key, unicode.IsControl)
	bad.Check(clean, "APIKey", memcore.Description("a key with surrounding white space or control characters"), "a key without them")
}

// checkModels records the completion and embedding model names, and the
// dimensions asked of the embedding model, when they cannot be right.
func checkModels(bad *memcore.FieldErrors, model, embedModel string, dims int, defaultHost bool) {
	if want := modelWant(model, kindCompletion, defaultHost); want != "" {
		bad.Check(false, "Model", model, want)
	}
	if want := modelWant(embedModel, kindEmbedding, defaultHost); want != "" {
		bad.Check(false, "EmbeddingModel", embedModel, want)
		bad.Check(dims >= 0, "Dimensions", dims, "at least 0 (0 means the model's default)")
		return
	}
	if want := dimensionsWant(embedModel, dims); want != "" {
		bad.Check(false, "Dimensions", dims, want)
	}
}

// taskTypeWant lists the task types, for messages.
func taskTypeWant() string {
	names := make([]string, len(knownTaskTypes))
	for i, k := range knownTaskTypes {
		names[i] = string(k)
	}
	return "one of " + strings.Join(names, ", ") + " (empty means " + string(TaskRetrievalDocument) + ")"
}

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
// Every configuration mistake is reported at once, in one
// *memcore.ConfigError (matching [ErrInvalidConfig], which is
// memcore.ErrInvalidConfig) that names each bad field and the values it
// accepts:
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
	r, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	httpClient := cfg.HTTPClient
	if httpClient == nil {
		httpClient = &http.Client{}
	}
	gc, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:     cfg.APIKey,
		Backend:    genai.BackendGeminiAPI,
		HTTPClient: httpClient,
		HTTPOptions: genai.HTTPOptions{
			BaseURL:    r.BaseURL,
			APIVersion: r.APIVersion,
		},
	})
	if err != nil {
		// The SDK's message prints its whole config, key included.
		var bad memcore.FieldErrors
		bad.Check(false, "Config", memcore.Description("refused by the genai SDK: "+strings.ReplaceAll(err.Error(), cfg.APIKey, "[redacted]")), "a config the SDK accepts")
		return nil, bad.Err("gemini", "")
	}
	return &Client{
		genai:         gc,
		defaultHost:   r.defaultHost,
		model:         r.Model,
		embedModel:    r.EmbeddingModel,
		dimensions:    r.Dimensions,
		maxBatch:      r.MaxBatch,
		taskType:      r.TaskType,
		embedIdentity: embedIdentity(r.EmbeddingModel, r.Dimensions, r.TaskType),
	}, nil
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
