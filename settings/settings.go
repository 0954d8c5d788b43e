package settings

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/forgemem/forgemem/memcapture"
	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memretrieve"
)

// Provider names a model provider (memory.provider).
type Provider string

// The providers.
const (
	// ProviderFake is the offline, deterministic provider of
	// providers/fake: no key, no network. It is the default, and always
	// retrieves in identity mode.
	ProviderFake Provider = "fake"
	// ProviderOpenAI is providers/openai: api.openai.com with
	// OPENAI_API_KEY, or any OpenAI-compatible server through
	// memory.base_url or OPENAI_BASE_URL.
	ProviderOpenAI Provider = "openai"
	// ProviderGemini is providers/gemini, with GEMINI_API_KEY.
	ProviderGemini Provider = "gemini"
)

// The environment variables read besides FORGEMEM_<KEY>.
const (
	// EnvOpenAIAPIKey holds the OpenAI API key. API keys are read only from
	// the environment.
	EnvOpenAIAPIKey = "OPENAI_API_KEY"
	// EnvGeminiAPIKey holds the Gemini API key.
	EnvGeminiAPIKey = "GEMINI_API_KEY"
	// EnvOpenAIBaseURL sets memory.base_url when the provider is openai,
	// below FORGEMEM_BASE_URL and the --base-url flag but above files.
	EnvOpenAIBaseURL = "OPENAI_BASE_URL"
	// EnvConfig names an extra settings file, read after the repository's
	// (the --config flag wins over it).
	EnvConfig = "FORGEMEM_CONFIG"
	// EnvRepoDir overrides the repository's memory folder (--repo-dir wins
	// over it).
	EnvRepoDir = "FORGEMEM_REPO_DIR"
	// EnvUserDir overrides the user's memory folder (--user-dir wins over
	// it).
	EnvUserDir = "FORGEMEM_USER_DIR"
)

// Settings is the one typed value of forgemem's settings: every key of a
// settings file's memory: section, the API keys from the environment, the
// memory folders ([Paths]) and where each value came from. Get one from
// [Load] (or [Default] for the defaults alone); the conversions
// [Settings.RetrieveConfig] and [Settings.CaptureConfig] then feed
// memretrieve and memcapture. A Settings is not changed by its methods and
// is safe to share between goroutines.
//
// The fields hold the effective values. Changing a field by hand is
// allowed, but the conversions then only promise a valid result for values
// within the ranges of [Keys], and [Settings.Source] still reports where the
// loaded value came from.
type Settings struct {
	// Enabled is memory.enabled. When false, the host wires neither
	// capture nor retrieval: the agent runs with no memory. A repository's
	// .forge/config.yaml with enabled: false turns memory off in that
	// repository only (a later source can still turn it back on).
	Enabled bool
	// CadenceTurns is memory.cadence_turns: a capture pass every N turns.
	CadenceTurns int
	// Review is memory.review: which new memories wait for a person's
	// review before they are used (see memcore.ReviewMode).
	Review memcore.ReviewMode
	// Provider is memory.provider.
	Provider Provider
	// ClassifierModel is memory.classifier_model; empty means the
	// provider's default.
	ClassifierModel string
	// RetrievalModel is memory.retrieval_model, the hypothesis model.
	RetrievalModel string
	// RetrievalMode is memory.retrieval_mode as configured; the fake
	// provider retrieves in identity mode whatever it says (see
	// [Settings.RetrieveConfig]).
	RetrievalMode memretrieve.HypothesisMode
	// EmbeddingModel is memory.embedding_model.
	EmbeddingModel string
	// EmbeddingDimensions is memory.embedding_dimensions: the length of
	// the vectors asked of the embedding model, 0 for its default.
	EmbeddingDimensions int
	// BaseURL is memory.base_url, or OPENAI_BASE_URL with the openai
	// provider; empty means the provider's own endpoint.
	BaseURL string
	// RetrievalTopK is memory.retrieval_top_k.
	RetrievalTopK int
	// RetrievalHopDepth is memory.retrieval_hop_depth.
	RetrievalHopDepth int
	// RetrievalHypothesisCount is memory.retrieval_hypothesis_count.
	RetrievalHypothesisCount int
	// InjectionTokenBudget is memory.injection_token_budget.
	InjectionTokenBudget int
	// InjectionMaxMemories is memory.injection_max_memories: the most
	// memories of a turn's injection.
	InjectionMaxMemories int
	// RetrievalTimeout is memory.retrieval_timeout.
	RetrievalTimeout time.Duration
	// RetrievalMinScore is memory.retrieval_min_score.
	RetrievalMinScore float64
	// RetrievalQuantized is memory.retrieval_quantized.
	RetrievalQuantized bool
	// RetrievalQueryTokenLimit is memory.retrieval_query_token_limit.
	RetrievalQueryTokenLimit int
	// RetrievalLexicalWeight is memory.retrieval_lexical_weight.
	RetrievalLexicalWeight float64
	// RetrievalFusionK is memory.retrieval_fusion_k.
	RetrievalFusionK int
	// RetrievalGateChance is memory.retrieval_gate_chance: the relevance
	// gate's strictness.
	RetrievalGateChance float64
	// Stale is memory.stale: what recall does with a memory whose code
	// moved or went away.
	Stale memretrieve.StaleMode

	// Paths are the memory folders and settings files.
	Paths Paths

	// Warnings are the values Load ignored, one per key: those of the
	// repository's .forge/config.yaml that need the user's trust (see
	// [Trust]) while the file is not trusted, or changed since it was.
	// Show them to the user: the settings in effect are not all the
	// repository's file says.
	Warnings []Warning

	openAIKey, geminiKey string
	// sources maps a full key name (and the API key variables) to where
	// its value came from; a missing entry is a default.
	sources map[string]Source
}

// Default returns the default settings, with no paths: what [Load] starts
// from.
func Default() *Settings {
	s := &Settings{sources: map[string]Source{}}
	for i := range table {
		if err := table[i].set(s, table[i].def); err != nil {
			panic(fmt.Sprintf("settings: the default of %s, %q, is invalid: %v", table[i].fullName(), table[i].def, err))
		}
	}
	return s
}

// Origin is the kind of place a value comes from, in increasing
// precedence.
type Origin int

// The origins, lowest precedence first: a later one wins.
const (
	// OriginDefault is the built-in default.
	OriginDefault Origin = iota
	// OriginUserFile is the user's ~/.forge/config.yaml.
	OriginUserFile
	// OriginRepoFile is the repository's .forge/config.yaml.
	OriginRepoFile
	// OriginConfigFile is the file named by --config or FORGEMEM_CONFIG.
	OriginConfigFile
	// OriginEnv is an environment variable.
	OriginEnv
	// OriginFlag is a command-line flag.
	OriginFlag
)

// String returns "default", "user file", "repo file", "config file",
// "environment" or "flag".
func (o Origin) String() string {
	switch o {
	case OriginDefault:
		return "default"
	case OriginUserFile:
		return "user file"
	case OriginRepoFile:
		return "repo file"
	case OriginConfigFile:
		return "config file"
	case OriginEnv:
		return "environment"
	case OriginFlag:
		return "flag"
	}
	return "origin(" + strconv.Itoa(int(o)) + ")"
}

func (o Origin) isFile() bool {
	return o == OriginUserFile || o == OriginRepoFile || o == OriginConfigFile
}

// Source is where a value came from: the origin and, for a file, its path
// and line; for an environment variable, its name; for a flag, its name
// without dashes.
type Source struct {
	Origin Origin
	// Name is the file's path, the variable's name or the flag's name
	// ("cadence-turns"); empty for a default.
	Name string
	// Line is the line in the file, or 0.
	Line int
}

// String describes the source for people: "default",
// "repo file /r/.forge/config.yaml:3", "environment FORGEMEM_PROVIDER",
// "flag --provider".
func (s Source) String() string {
	switch {
	case s.Origin == OriginDefault:
		return "default"
	case s.Origin == OriginFlag:
		return "flag --" + s.Name
	case s.Origin.isFile() && s.Line > 0:
		return s.Origin.String() + " " + s.Name + ":" + strconv.Itoa(s.Line)
	}
	return s.Origin.String() + " " + s.Name
}

// Source reports where the effective value of a setting came from. name is
// a full key ("memory.provider"), or EnvOpenAIAPIKey or EnvGeminiAPIKey;
// ok is false for any other name.
func (s *Settings) Source(name string) (src Source, ok bool) {
	if name != EnvOpenAIAPIKey && name != EnvGeminiAPIKey {
		if !strings.HasPrefix(name, Section+".") {
			return Source{}, false
		}
		k := lookup(name)
		if k == nil {
			return Source{}, false
		}
		name = k.fullName()
	}
	return s.sources[name], true
}

// Value is one effective setting, for display (see [Settings.Values]).
type Value struct {
	Key
	// Value is the effective value as a file would write it.
	Value string
	// Source is where it came from.
	Source Source
	// InEffect is the value the libraries use when another setting
	// overrides Value, and Why says why: the fake provider retrieves in
	// identity mode whatever memory.retrieval_mode says. Both are empty
	// when Value is in effect.
	InEffect, Why string
}

// Values returns every setting's effective value and source, in the order
// of [Keys]. API keys are not among them (see [Settings.APIKey]).
func (s *Settings) Values() []Value {
	vs := make([]Value, len(table))
	for i := range table {
		k := &table[i]
		vs[i] = Value{Key: k.public(), Value: k.get(s), Source: s.sources[k.fullName()]}
		if k.name == "retrieval_mode" && s.retrievalMode() != s.RetrievalMode {
			vs[i].InEffect = string(s.retrievalMode())
			vs[i].Why = "the " + string(ProviderFake) + " provider always retrieves in identity mode"
		}
	}
	return vs
}

// String lists the settings one per line, "memory.cadence_turns: 3
// (repo file /r/.forge/config.yaml:2)", with the value in effect where
// another setting overrides one, then whether each API key variable is
// set — never its value.
func (s Settings) String() string {
	var b strings.Builder
	for _, v := range s.Values() {
		val := v.Value
		if val == "" {
			val = `""`
		}
		fmt.Fprintf(&b, "%s: %s (%s)", v.Name, val, v.Source)
		if v.InEffect != "" {
			fmt.Fprintf(&b, "; in effect: %s (%s)", v.InEffect, v.Why)
		}
		b.WriteByte('\n')
	}
	for _, k := range []struct{ name, value string }{{EnvOpenAIAPIKey, s.openAIKey}, {EnvGeminiAPIKey, s.geminiKey}} {
		state := "not set"
		if k.value != "" {
			state = "set (not shown)"
		}
		fmt.Fprintf(&b, "%s: %s\n", k.name, state)
	}
	return b.String()
}

// GoString is String, so that %#v never prints an API key either.
func (s Settings) GoString() string { return s.String() }

// OpenAIAPIKey returns OPENAI_API_KEY from the environment, or "".
func (s *Settings) OpenAIAPIKey() string { return s.openAIKey }

// GeminiAPIKey returns GEMINI_API_KEY from the environment, or "".
func (s *Settings) GeminiAPIKey() string { return s.geminiKey }

// APIKey returns the API key of the configured provider: OPENAI_API_KEY
// for openai, GEMINI_API_KEY for gemini, "" for fake. It may be empty for
// openai with a base URL: local servers such as Ollama need none.
func (s *Settings) APIKey() string {
	switch s.Provider {
	case ProviderOpenAI:
		return s.openAIKey
	case ProviderGemini:
		return s.geminiKey
	}
	return ""
}

// RetrieveConfig returns the retrieval settings: memretrieve.DefaultConfig
// with every retrieval key applied. The mode is identity for the fake
// provider or memory.retrieval_mode identity, llm otherwise. For settings
// from [Load] or [Default], the result passes memretrieve's Config.Validate.
func (s *Settings) RetrieveConfig() memretrieve.Config {
	c := memretrieve.DefaultConfig()
	c.HypothesisModel = s.RetrievalModel
	c.Mode = s.retrievalMode()
	c.HypothesisCount = s.RetrievalHypothesisCount
	c.TopK = s.RetrievalTopK
	c.HopDepth = s.RetrievalHopDepth
	c.MinScore = s.RetrievalMinScore
	c.Quantized = s.RetrievalQuantized
	c.InjectionTokenBudget = s.InjectionTokenBudget
	c.MaxMemories = s.InjectionMaxMemories
	c.Timeout = s.RetrievalTimeout
	c.QueryTokenLimit = s.RetrievalQueryTokenLimit
	c.LexicalWeight = s.RetrievalLexicalWeight
	c.FusionK = s.RetrievalFusionK
	c.GateChance = s.RetrievalGateChance
	c.Stale = s.Stale
	return c
}

func (s *Settings) retrievalMode() memretrieve.HypothesisMode {
	if s.Provider == ProviderFake {
		return memretrieve.ModeIdentity
	}
	return s.RetrievalMode
}

// CaptureConfig returns the capture settings: memcapture.DefaultConfig
// with memory.classifier_model, memory.cadence_turns and memory.review
// applied, for memcapture.NewPipeline (and so its observers). The host
// adds its wiring (Rebuild, Embedder, Logger). For settings from [Load] or [Default], the
// result passes memcapture's Config.Validate.
func (s *Settings) CaptureConfig() memcapture.Config {
	c := memcapture.DefaultConfig()
	c.ClassifierModel = s.ClassifierModel
	c.Cadence = s.CadenceTurns
	c.Review = s.Review
	return c
}

// RetrievalOff returns why retrieval is off, or "" when it is on: memory
// is disabled; the openai or gemini provider has no embedding model; or, in
// llm mode, there is no retrieval model. A host that gets a reason builds
// no retrieval engine (capture still runs while Enabled is true).
func (s *Settings) RetrievalOff() string {
	switch {
	case !s.Enabled:
		return "memory.enabled is false (" + s.sources["memory.enabled"].String() + ")"
	case s.Provider == ProviderFake:
		return ""
	case s.EmbeddingModel == "":
		return "memory.embedding_model is not set (the " + string(s.Provider) + " provider needs one)"
	case s.retrievalMode() == memretrieve.ModeLLM && s.RetrievalModel == "":
		return "memory.retrieval_model is not set (set it, or memory.retrieval_mode: identity)"
	}
	return ""
}
