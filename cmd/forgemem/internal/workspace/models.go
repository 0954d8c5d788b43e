package workspace

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/fake"
	"github.com/forgemem/forgemem/providers/gemini"
	"github.com/forgemem/forgemem/providers/openai"
	"github.com/forgemem/forgemem/settings"
)

// Models are the model clients of the configured provider
// (memory.provider), made by [NewModels].
//
//   - fake: offline, no key. Embedder is providers/fake's hashing embedder;
//     there is no LLM (retrieval runs in identity mode, and nothing can be
//     captured).
//   - openai: one providers/openai client for api.openai.com
//     (OPENAI_API_KEY) or any OpenAI-compatible server (memory.base_url or
//     OPENAI_BASE_URL; a local server needs no key).
//   - gemini: one providers/gemini client (GEMINI_API_KEY).
//
// With openai and gemini one client is both the LLM and the Embedder; the
// classifier model (memory.classifier_model) and the hypothesis model
// (memory.retrieval_model) are named per request, and
// memory.embedding_model is the client's embedding model.
type Models struct {
	// Provider is the provider the clients belong to.
	Provider settings.Provider
	// LLM answers the capture classifier, the hypothesis model and chat;
	// nil for the fake provider.
	LLM memcore.LLMProvider
	// Embedder embeds memories and queries; nil when memory.embedding_model
	// is not set for openai or gemini.
	Embedder memcore.Embedder
	// ClassifierModel and HypothesisModel are the models named in capture's
	// and retrieval's requests ("" means the provider's default).
	ClassifierModel, HypothesisModel string

	// llmErr and embedErr say why LLM or Embedder is nil, in the terms of
	// the settings.
	llmErr, embedErr error
	// otherServer is true for the openai provider at a server other than
	// api.openai.com, which may not serve OpenAI's default models.
	otherServer bool
}

// NewModels makes the clients of the provider s names. It fails with
// [ErrProviderSetup] when the provider's API key is missing (naming the
// variable to set) or its client refuses the settings; a missing model is
// reported only when a client that needs it is asked for (see
// [Models.NeedLLM] and [Models.NeedEmbedder]), so that a command that uses
// only one of them works without the other's model. httpClient sends the
// requests of openai and gemini (nil: a default client).
func NewModels(s *settings.Settings, httpClient *http.Client) (*Models, error) {
	m := &Models{Provider: s.Provider, ClassifierModel: s.ClassifierModel, HypothesisModel: s.RetrievalModel}
	switch s.Provider {
	case settings.ProviderFake:
		emb, err := fake.NewEmbedder(fake.EmbedderConfig{Dimension: s.EmbeddingDimensions})
		if err != nil {
			return nil, fmt.Errorf("%w: the fake embedder: %w", ErrProviderSetup, err)
		}
		m.Embedder = emb
		m.llmErr = fmt.Errorf("%w: the fake provider (memory.provider: fake) is offline and has no language model; "+
			"set memory.provider to openai or gemini (or pass --provider openai) and its API key", ErrNeedsModel)
	case settings.ProviderOpenAI:
		if s.OpenAIAPIKey() == "" && s.BaseURL == "" {
			return nil, fmt.Errorf("%w: OPENAI_API_KEY is not set; export it, or set memory.base_url to an "+
				"OpenAI-compatible server that needs no key (Ollama: http://localhost:11434/v1)", ErrProviderSetup)
		}
		// One client: the classifier model is its default (empty means the
		// provider's), and retrieval names its hypothesis model per request.
		c, err := openai.New(openai.Config{
			APIKey:         s.OpenAIAPIKey(),
			BaseURL:        s.BaseURL,
			Model:          s.ClassifierModel,
			EmbeddingModel: s.EmbeddingModel,
			Dimensions:     s.EmbeddingDimensions,
			HTTPClient:     httpClient,
		})
		if err != nil {
			return nil, fmt.Errorf("%w: the openai provider refuses the settings: %w", ErrProviderSetup, err)
		}
		m.LLM = c
		m.otherServer = s.BaseURL != "" && !strings.Contains(s.BaseURL, "://api.openai.com")
		// Retrieval needs the embedding model named (settings.RetrievalOff):
		// it decides which vectors the cache holds.
		if s.EmbeddingModel != "" {
			m.Embedder = c
		} else {
			m.embedErr = missingModel("memory.embedding_model", "text-embedding-3-small")
		}
	case settings.ProviderGemini:
		if s.GeminiAPIKey() == "" {
			return nil, fmt.Errorf("%w: GEMINI_API_KEY is not set; export it (a key comes from https://aistudio.google.com/apikey)", ErrProviderSetup)
		}
		c, err := gemini.New(gemini.Config{
			APIKey:         s.GeminiAPIKey(),
			BaseURL:        s.BaseURL,
			Model:          s.ClassifierModel,
			EmbeddingModel: s.EmbeddingModel,
			Dimensions:     s.EmbeddingDimensions,
			HTTPClient:     httpClient,
		})
		if err != nil {
			return nil, fmt.Errorf("%w: the gemini provider refuses the settings: %w", ErrProviderSetup, err)
		}
		m.LLM = c
		if s.EmbeddingModel != "" {
			m.Embedder = c
		} else {
			m.embedErr = missingModel("memory.embedding_model", gemini.DefaultEmbeddingModel)
		}
	default:
		return nil, fmt.Errorf("%w: unknown provider %q", ErrProviderSetup, s.Provider)
	}
	return m, nil
}

func missingModel(key, example string) error {
	env := key
	if k, ok := settings.LookupKey(key); ok {
		env = k.Env
	}
	return fmt.Errorf("%w: %s is not set; set it in ~/.forge/config.yaml or the repository's .forge/config.yaml, or with %s (for example %s)",
		ErrProviderSetup, key, env, example)
}

// NeedLLM returns the LLM, or why there is none: [ErrNeedsModel] for the
// fake provider.
func (m *Models) NeedLLM() (memcore.LLMProvider, error) {
	if m.LLM == nil {
		return nil, m.llmErr
	}
	return m.LLM, nil
}

// NeedClassifier returns the LLM and the model capture asks ("" means the
// provider's default), or why they cannot be used: as [Models.NeedLLM], and
// [ErrProviderSetup] when the openai provider points at another server
// (memory.base_url) without memory.classifier_model, as its default is
// OpenAI's model name.
func (m *Models) NeedClassifier() (memcore.LLMProvider, string, error) {
	llm, err := m.NeedLLM()
	if err != nil {
		return nil, "", err
	}
	if m.ClassifierModel == "" && m.otherServer {
		return nil, "", missingModel("memory.classifier_model", "llama3.2 for Ollama")
	}
	return llm, m.ClassifierModel, nil
}

// NeedEmbedder returns the Embedder, or why there is none
// ([ErrProviderSetup] naming memory.embedding_model).
func (m *Models) NeedEmbedder() (memcore.Embedder, error) {
	if m.Embedder == nil {
		return nil, m.embedErr
	}
	return m.Embedder, nil
}
