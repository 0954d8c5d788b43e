package settings_test

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memretrieve"
	"github.com/forgemem/forgemem/settings"
)

func TestLoadDefaults(t *testing.T) {
	f := newFixture(t)
	s := mustLoad(t, f.options(nil, nil))
	want := settings.Default()
	want.Paths = s.Paths
	if !reflect.DeepEqual(s, want) {
		t.Errorf("Load with no files = %v\nwant the defaults %v", s, want)
	}
	for _, v := range s.Values() {
		if v.Value != v.Default || v.Source.Origin != settings.OriginDefault {
			t.Errorf("%s = %q from %v; want the default %q", v.Name, v.Value, v.Source, v.Default)
		}
	}
	if !s.Enabled || s.CadenceTurns != 1 || s.Provider != settings.ProviderFake || s.RetrievalMode != memretrieve.ModeLLM ||
		s.RetrievalTopK != 10 || s.RetrievalHopDepth != 1 || s.RetrievalHypothesisCount != 5 ||
		s.InjectionTokenBudget != 2000 || s.InjectionMaxMemories != 8 || s.RetrievalTimeout != 2*time.Second || s.RetrievalMinScore != 0 ||
		s.RetrievalQueryTokenLimit != 512 || s.RetrievalLexicalWeight != 1 || s.RetrievalFusionK != 60 || s.RetrievalGateChance != 0.05 ||
		s.ClassifierModel != "" || s.RetrievalModel != "" || s.EmbeddingModel != "" || s.BaseURL != "" {
		t.Errorf("defaults differ from the documented ones: %v", s)
	}
}

// Every layer sets cadence_turns; removing the top layer each time shows
// the one below it.
func TestLoadPrecedence(t *testing.T) {
	type layer struct {
		origin settings.Origin
		value  int
	}
	layers := []layer{
		{settings.OriginFlag, 6},
		{settings.OriginEnv, 5},
		{settings.OriginConfigFile, 4},
		{settings.OriginRepoFile, 3},
		{settings.OriginUserFile, 2},
		{settings.OriginDefault, 1},
	}
	for i, top := range layers {
		t.Run(top.origin.String(), func(t *testing.T) {
			f := newFixture(t)
			extra := filepath.Join(f.home, "extra.yaml")
			opts := f.options(nil, nil)
			for _, l := range layers[i:] {
				body := fmt.Sprintf("memory:\n  cadence_turns: %d\n", l.value)
				switch l.origin {
				case settings.OriginFlag:
					opts.Flags = map[string]string{"cadence-turns": "6"}
				case settings.OriginEnv:
					opts.Env = []string{"FORGEMEM_CADENCE_TURNS=5"}
				case settings.OriginConfigFile:
					write(t, extra, body)
					opts.ConfigFile = extra
				case settings.OriginRepoFile:
					write(t, f.repoFile(), body)
				case settings.OriginUserFile:
					write(t, f.userFile(), body)
				}
			}
			s := mustLoad(t, opts)
			if s.CadenceTurns != top.value {
				t.Errorf("CadenceTurns = %d; want %d from the %v", s.CadenceTurns, top.value, top.origin)
			}
			src, ok := s.Source("memory.cadence_turns")
			if !ok || src.Origin != top.origin {
				t.Errorf("Source = %v, %v; want origin %v", src, ok, top.origin)
			}
			if top.origin.String() == "" || (top.origin != settings.OriginDefault && src.Name == "") {
				t.Errorf("source %+v does not name where it is", src)
			}
		})
	}
}

// Layers set different keys: each keeps the value of the latest layer that
// set it.
func TestLoadMergesKeysAcrossLayers(t *testing.T) {
	f := newFixture(t)
	write(t, f.userFile(), "memory:\n  provider: openai\n  embedding_model: user-embed\n  retrieval_top_k: 20\n")
	write(t, f.repoFile(), "memory:\n  retrieval_top_k: 30\n  retrieval_hop_depth: 2\n")
	s := mustLoad(t, f.options([]string{"FORGEMEM_RETRIEVAL_HOP_DEPTH=3"}, map[string]string{"retrieval-timeout": "750ms"}))
	got := []any{s.Provider, s.EmbeddingModel, s.RetrievalTopK, s.RetrievalHopDepth, s.RetrievalTimeout, s.CadenceTurns}
	want := []any{settings.ProviderOpenAI, "user-embed", 30, 3, 750 * time.Millisecond, 1}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v; want %v", got, want)
	}
	for key, origin := range map[string]settings.Origin{
		"memory.provider": settings.OriginUserFile, "memory.retrieval_top_k": settings.OriginRepoFile,
		"memory.retrieval_hop_depth": settings.OriginEnv, "memory.retrieval_timeout": settings.OriginFlag,
		"memory.cadence_turns": settings.OriginDefault,
	} {
		if src, _ := s.Source(key); src.Origin != origin {
			t.Errorf("Source(%s) = %v; want %v", key, src, origin)
		}
	}
	if src, _ := s.Source("memory.retrieval_top_k"); src.Name != f.repoFile() || src.Line != 2 {
		t.Errorf("Source(memory.retrieval_top_k) = %+v; want %s line 2", src, f.repoFile())
	}
}

// Every key, set alone in a file, reaches the field and the library
// setting it names.
func TestEveryKeyReachesItsField(t *testing.T) {
	tests := []struct {
		key, value string
		got        func(*settings.Settings) any
		want       any
	}{
		{"enabled", "false", func(s *settings.Settings) any { return s.Enabled }, false},
		{"cadence_turns", "7", func(s *settings.Settings) any { return s.CadenceTurns }, 7},
		{"review", "all", func(s *settings.Settings) any { return s.CaptureConfig().Review }, memcore.ReviewAll},
		{"provider", "gemini", func(s *settings.Settings) any { return s.Provider }, settings.ProviderGemini},
		{"classifier_model", "gpt-4o", func(s *settings.Settings) any { return s.ClassifierModel }, "gpt-4o"},
		{"retrieval_model", "gpt-4o-mini", func(s *settings.Settings) any { return s.RetrieveConfig().HypothesisModel }, "gpt-4o-mini"},
		{"retrieval_mode", "identity", func(s *settings.Settings) any { return s.RetrieveConfig().Mode }, memretrieve.ModeIdentity},
		{"embedding_model", "nomic-embed-text", func(s *settings.Settings) any { return s.EmbeddingModel }, "nomic-embed-text"},
		{"embedding_dimensions", "1536", func(s *settings.Settings) any { return s.EmbeddingDimensions }, 1536},
		{"base_url", "http://localhost:11434/v1", func(s *settings.Settings) any { return s.BaseURL }, "http://localhost:11434/v1"},
		{"retrieval_top_k", "42", func(s *settings.Settings) any { return s.RetrieveConfig().TopK }, 42},
		{"retrieval_hop_depth", "0", func(s *settings.Settings) any { return s.RetrieveConfig().HopDepth }, 0},
		{"retrieval_hypothesis_count", "8", func(s *settings.Settings) any { return s.RetrieveConfig().HypothesisCount }, 8},
		{"injection_token_budget", "1500", func(s *settings.Settings) any { return s.RetrieveConfig().InjectionTokenBudget }, 1500},
		{"injection_max_memories", "12", func(s *settings.Settings) any { return s.RetrieveConfig().MaxMemories }, 12},
		{"retrieval_timeout", "1m30s", func(s *settings.Settings) any { return s.RetrieveConfig().Timeout }, 90 * time.Second},
		{"retrieval_min_score", "-0.25", func(s *settings.Settings) any { return s.RetrieveConfig().MinScore }, -0.25},
		{"retrieval_quantized", "true", func(s *settings.Settings) any { return s.RetrieveConfig().Quantized }, true},
		{"retrieval_query_token_limit", "8000", func(s *settings.Settings) any { return s.RetrieveConfig().QueryTokenLimit }, 8000},
		{"retrieval_lexical_weight", "0.5", func(s *settings.Settings) any { return s.RetrieveConfig().LexicalWeight }, 0.5},
		{"retrieval_fusion_k", "20", func(s *settings.Settings) any { return s.RetrieveConfig().FusionK }, 20},
		{"retrieval_gate_chance", "0.2", func(s *settings.Settings) any { return s.RetrieveConfig().GateChance }, 0.2},
		{"stale", "drop", func(s *settings.Settings) any { return s.RetrieveConfig().Stale }, memretrieve.StaleDrop},
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		covered["memory."+tt.key] = true
		t.Run(tt.key, func(t *testing.T) {
			f := newFixture(t)
			// retrieval_mode reaches the config only with a real provider.
			extra := ""
			if tt.key == "retrieval_mode" {
				extra = "  provider: openai\n"
			}
			write(t, f.userFile(), "memory:\n"+extra+"  "+tt.key+": "+tt.value+"\n")
			s := mustLoad(t, f.options(nil, nil))
			if got := tt.got(s); got != tt.want {
				t.Errorf("%s: %s gives %v (%T); want %v (%T)", tt.key, tt.value, got, got, tt.want, tt.want)
			}
			if err := s.RetrieveConfig().Validate(); err != nil {
				t.Errorf("RetrieveConfig().Validate() = %v", err)
			}
			// Every other key keeps its default.
			for _, v := range s.Values() {
				if v.Name != "memory."+tt.key && v.Name != "memory.provider" && v.Value != v.Default {
					t.Errorf("%s changed to %q", v.Name, v.Value)
				}
			}
		})
	}
	for _, k := range settings.Keys() {
		if !covered[k.Name] {
			t.Errorf("key %s has no case in this test", k.Name)
		}
	}
}

func TestRetrieveConfigMode(t *testing.T) {
	tests := []struct {
		provider, mode string
		want           memretrieve.HypothesisMode
	}{
		{"fake", "llm", memretrieve.ModeIdentity},
		{"fake", "identity", memretrieve.ModeIdentity},
		{"openai", "llm", memretrieve.ModeLLM},
		{"openai", "identity", memretrieve.ModeIdentity},
		{"gemini", "llm", memretrieve.ModeLLM},
	}
	for _, tt := range tests {
		t.Run(tt.provider+"/"+tt.mode, func(t *testing.T) {
			f := newFixture(t)
			s := mustLoad(t, f.options(nil, map[string]string{"provider": tt.provider, "retrieval-mode": tt.mode}))
			c := s.RetrieveConfig()
			if c.Mode != tt.want {
				t.Errorf("Mode = %q; want %q", c.Mode, tt.want)
			}
			// What no key sets stays memretrieve's default.
			d := memretrieve.DefaultConfig()
			if c.MaxMemories != d.MaxMemories || c.WindowTokenBudget != d.WindowTokenBudget {
				t.Errorf("RetrieveConfig changed fields no key sets: %+v", c)
			}
			// A key's default is memretrieve's.
			if c.GateChance != d.GateChance || c.LexicalWeight != d.LexicalWeight || c.FusionK != d.FusionK || c.TopK != d.TopK {
				t.Errorf("RetrieveConfig's defaults differ from memretrieve's: %+v", c)
			}
			if err := c.Validate(); err != nil {
				t.Errorf("Validate = %v", err)
			}
		})
	}
}

func TestRetrievalOff(t *testing.T) {
	tests := []struct {
		name  string
		flags map[string]string
		want  string // substring of the reason; "" means on
	}{
		{"fake needs no models", nil, ""},
		{"disabled", map[string]string{"enabled": "false"}, "memory.enabled is false (flag --enabled)"},
		{"openai without embedding model", map[string]string{"provider": "openai", "retrieval-model": "m"}, "memory.embedding_model is not set"},
		{"gemini without embedding model", map[string]string{"provider": "gemini", "retrieval-model": "m"}, "memory.embedding_model is not set"},
		{"llm mode without retrieval model", map[string]string{"provider": "openai", "embedding-model": "e"}, "memory.retrieval_model is not set"},
		{"identity mode needs no retrieval model", map[string]string{"provider": "openai", "embedding-model": "e", "retrieval-mode": "identity"}, ""},
		{"both models", map[string]string{"provider": "gemini", "embedding-model": "e", "retrieval-model": "m"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustLoad(t, newFixture(t).options(nil, tt.flags))
			got := s.RetrievalOff()
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("RetrievalOff() = %q; want %q", got, tt.want)
			}
		})
	}
}

// memory.enabled: false in one repository's file turns memory off there
// and nowhere else.
func TestEnabledFalseInOneRepository(t *testing.T) {
	f := newFixture(t)
	write(t, f.userFile(), "memory:\n  enabled: true\n  cadence_turns: 2\n")
	write(t, f.repoFile(), "# memory is off in this repository\nmemory:\n  enabled: false\n")
	other := filepath.Join(filepath.Dir(f.repo), "other")
	mkdir(t, filepath.Join(other, ".git"))

	off := mustLoad(t, f.options(nil, nil))
	if off.Enabled {
		t.Error("Enabled = true in the repository whose file says false")
	}
	if src, _ := off.Source("memory.enabled"); src.Origin != settings.OriginRepoFile || src.Line != 3 {
		t.Errorf("Source(memory.enabled) = %v; want the repo file, line 3", src)
	}
	if r := off.RetrievalOff(); !strings.Contains(r, "memory.enabled is false") || !strings.Contains(r, f.repoFile()) {
		t.Errorf("RetrievalOff() = %q; want it to name memory.enabled and the file", r)
	}
	if off.CadenceTurns != 2 {
		t.Errorf("the user file's other keys still apply: CadenceTurns = %d", off.CadenceTurns)
	}

	on := mustLoad(t, settings.Options{WorkDir: other, Home: f.home})
	if !on.Enabled || on.RetrievalOff() != "" {
		t.Errorf("another repository: Enabled = %v, RetrievalOff = %q; want on", on.Enabled, on.RetrievalOff())
	}
	// A later source turns it back on.
	back := mustLoad(t, f.options([]string{"FORGEMEM_ENABLED=true"}, nil))
	if !back.Enabled {
		t.Error("FORGEMEM_ENABLED=true did not win over the repository file")
	}
}

func TestEmptyFilesAndHostKeys(t *testing.T) {
	for name, body := range map[string]string{
		"empty":             "",
		"comment only":      "# nothing yet\n",
		"empty section":     "memory:\n",
		"null section":      "memory: ~\n",
		"empty mapping":     "memory: {}\n",
		"host keys only":    "model: claude\ntheme: dark\n",
		"host nested":       "forge:\n  memory:\n    bogus: 1\n  api_key: sk-host\n",
		"document marker":   "---\nmemory:\n",
		"null document":     "---\n...\n",
		"non-string top":    "? [a, b]\n: c\n",
		"numeric host key":  "1: one\n",
		"host key with dot": "forge.theme: dark\n",
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			write(t, f.userFile(), body)
			write(t, f.repoFile(), body)
			s := mustLoad(t, f.options(nil, nil))
			for _, v := range s.Values() {
				if v.Source.Origin != settings.OriginDefault {
					t.Errorf("%s set from %v by %q", v.Name, v.Source, body)
				}
			}
		})
	}
}

func TestFileValuesOfEveryForm(t *testing.T) {
	f := newFixture(t)
	write(t, f.userFile(), `
defaults: &d
  cadence_turns: 4
memory:
  enabled: True
  cadence_turns: +4
  provider: "openai"
  classifier_model: 7b
  retrieval_model: 3
  embedding_model: 'text-embedding-3-small'
  retrieval_min_score: -1
  retrieval_timeout: 1h
  base_url: https://api.example.com/v1/
`)
	s := mustLoad(t, f.options(nil, nil))
	got := []any{s.Enabled, s.CadenceTurns, s.Provider, s.ClassifierModel, s.RetrievalModel, s.EmbeddingModel, s.RetrievalMinScore, s.RetrievalTimeout, s.BaseURL}
	want := []any{true, 4, settings.ProviderOpenAI, "7b", "3", "text-embedding-3-small", -1.0, time.Hour, "https://api.example.com/v1/"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	// A null string key means the empty string, the default (from a
	// trusted repository file: emptying base_url redirects requests).
	write(t, f.repoFile(), "memory:\n  classifier_model:\n  base_url: ~\n")
	f.trust(t, f.repoFile())
	s = mustLoad(t, f.options(nil, nil))
	if s.ClassifierModel != "" || s.BaseURL != "" {
		t.Errorf("null values: ClassifierModel %q, BaseURL %q; want both empty", s.ClassifierModel, s.BaseURL)
	}
	if src, _ := s.Source("memory.classifier_model"); src.Origin != settings.OriginRepoFile {
		t.Errorf("the repository's explicit empty value is from %v; want the repo file", src)
	}
}

// An alias to a mapping works for the section.
func TestFileAliases(t *testing.T) {
	f := newFixture(t)
	write(t, f.userFile(), "base: &b\n  cadence_turns: 3\n  retrieval_top_k: &k 12\nmemory: *b\n")
	s := mustLoad(t, f.options(nil, nil))
	if s.CadenceTurns != 3 || s.RetrievalTopK != 12 {
		t.Errorf("through an alias: cadence %d, top k %d; want 3 and 12", s.CadenceTurns, s.RetrievalTopK)
	}
}

func TestEnvironment(t *testing.T) {
	f := newFixture(t)
	env := []string{
		"FORGEMEM_PROVIDER=gemini",
		"FORGEMEM_EMBEDDING_MODEL=gemini-embedding-001",
		"FORGEMEM_RETRIEVAL_MIN_SCORE=0.2",
		"FORGEMEM_RETRIEVAL_TIMEOUT=500ms",
		"FORGEMEM_ENABLED=1",
		"FORGEMEM_CLASSIFIER_MODEL=", // empty: unset
		"FORGEMEM_CADENCE_TURNS=3",
		"FORGEMEM_CADENCE_TURNS=9", // a second copy: the first wins, as with os.Getenv
		"FORGEMEM_CONFIG=",         // location variables are not settings keys
		"FORGEMEM_REPO_DIR=",
		"FORGEMEM_USER_DIR=",
		"GEMINI_API_KEY=gm-secret",
		"OPENAI_API_KEY=sk-secret",
		"HOME=/elsewhere", // never read: Options.Home is
		"NOT_A_PAIR",
		"PATH=/usr/bin",
	}
	write(t, f.userFile(), "memory:\n  classifier_model: from-file\n")
	s := mustLoad(t, f.options(env, nil))
	got := []any{s.Provider, s.EmbeddingModel, s.RetrievalMinScore, s.RetrievalTimeout, s.Enabled, s.ClassifierModel, s.CadenceTurns}
	want := []any{settings.ProviderGemini, "gemini-embedding-001", 0.2, 500 * time.Millisecond, true, "from-file", 3}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	if s.APIKey() != "gm-secret" || s.GeminiAPIKey() != "gm-secret" || s.OpenAIAPIKey() != "sk-secret" {
		t.Errorf("API keys: APIKey %q, Gemini %q, OpenAI %q", s.APIKey(), s.GeminiAPIKey(), s.OpenAIAPIKey())
	}
	if src, ok := s.Source("GEMINI_API_KEY"); !ok || src != (settings.Source{Origin: settings.OriginEnv, Name: "GEMINI_API_KEY"}) {
		t.Errorf("Source(GEMINI_API_KEY) = %v, %v", src, ok)
	}
	if src, _ := s.Source("memory.retrieval_timeout"); src.String() != "environment FORGEMEM_RETRIEVAL_TIMEOUT" {
		t.Errorf("Source = %q", src)
	}
	if s.Paths.UserDir != filepath.Join(f.home, ".forge", "memory") {
		t.Errorf("HOME in Env was read: UserDir = %s", s.Paths.UserDir)
	}
}

func TestAPIKeyFollowsProvider(t *testing.T) {
	env := []string{"OPENAI_API_KEY=sk-o", "GEMINI_API_KEY=g-k"}
	for provider, want := range map[string]string{"fake": "", "openai": "sk-o", "gemini": "g-k"} {
		s := mustLoad(t, newFixture(t).options(env, map[string]string{"provider": provider}))
		if s.APIKey() != want {
			t.Errorf("provider %s: APIKey() = %q; want %q", provider, s.APIKey(), want)
		}
	}
}

func TestOpenAIBaseURL(t *testing.T) {
	const local = "http://localhost:11434/v1"
	tests := []struct {
		name   string
		file   string
		env    []string
		flags  map[string]string
		want   string
		source string
	}{
		{"applies with openai", "", []string{"FORGEMEM_PROVIDER=openai", "OPENAI_BASE_URL=" + local}, nil, local, "environment OPENAI_BASE_URL"},
		{"wins over a file", "memory:\n  provider: openai\n  base_url: http://file:1/v1\n", []string{"OPENAI_BASE_URL=" + local}, nil, local, "environment OPENAI_BASE_URL"},
		{"ignored with gemini", "", []string{"FORGEMEM_PROVIDER=gemini", "OPENAI_BASE_URL=" + local}, nil, "", "default"},
		{"ignored with fake, even when bad", "", []string{"OPENAI_BASE_URL=not a url"}, nil, "", "default"},
		{"FORGEMEM_BASE_URL wins", "", []string{"FORGEMEM_PROVIDER=openai", "OPENAI_BASE_URL=" + local, "FORGEMEM_BASE_URL=https://gw.example/v1"}, nil, "https://gw.example/v1", "environment FORGEMEM_BASE_URL"},
		{"the flag wins", "", []string{"OPENAI_BASE_URL=" + local}, map[string]string{"provider": "openai", "base-url": "https://flag.example/v1"}, "https://flag.example/v1", "flag --base-url"},
		{"provider from a flag", "", []string{"OPENAI_BASE_URL=" + local}, map[string]string{"provider": "openai"}, local, "environment OPENAI_BASE_URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			if tt.file != "" {
				write(t, f.userFile(), tt.file)
			}
			s := mustLoad(t, f.options(tt.env, tt.flags))
			src, _ := s.Source("memory.base_url")
			if s.BaseURL != tt.want || src.String() != tt.source {
				t.Errorf("BaseURL = %q from %q; want %q from %q", s.BaseURL, src, tt.want, tt.source)
			}
		})
	}
}

func TestFlagsAcceptDashes(t *testing.T) {
	s := mustLoad(t, newFixture(t).options(nil, map[string]string{"--retrieval-top-k": "3", "classifier-model": ""}))
	if s.RetrievalTopK != 3 {
		t.Errorf("RetrievalTopK = %d; want 3", s.RetrievalTopK)
	}
	if src, _ := s.Source("memory.classifier_model"); src.Origin != settings.OriginFlag {
		t.Errorf("an explicit empty flag is from %v; want the flag", src)
	}
}

func TestUnreadableFile(t *testing.T) {
	f := newFixture(t)
	mkdir(t, f.repoFile()) // a folder where the file belongs cannot be read
	e := oneErr(t, f.options(nil, nil))
	if !errors.Is(e, settings.ErrUnreadableFile) || e.Source.Name != f.repoFile() || e.Source.Origin != settings.OriginRepoFile {
		t.Errorf("got %#v; want ErrUnreadableFile naming %s", e, f.repoFile())
	}
	if !strings.HasPrefix(e.Error(), f.repoFile()+": cannot read the settings file: ") {
		t.Errorf("message %q", e)
	}
}

func TestMissingNamedConfigFile(t *testing.T) {
	f := newFixture(t)
	for _, opts := range []settings.Options{
		{WorkDir: f.work, Home: f.home, ConfigFile: "~/missing.yaml"},
		{WorkDir: f.work, Home: f.home, Env: []string{"FORGEMEM_CONFIG=~/missing.yaml"}},
	} {
		e := oneErr(t, opts)
		want := filepath.Join(f.home, "missing.yaml")
		if !errors.Is(e, settings.ErrUnreadableFile) || !errors.Is(e, fs.ErrNotExist) || e.Source.Name != want {
			t.Errorf("got %v; want ErrUnreadableFile and fs.ErrNotExist naming %s", e, want)
		}
	}
	// Missing user and repository files are fine.
	mustLoad(t, f.options(nil, nil))
}

// The same file in two roles (--config naming the repository's file) is
// read once, so its problems are reported once.
func TestFileReadOnce(t *testing.T) {
	f := newFixture(t)
	write(t, f.repoFile(), "memory:\n  cadence_turns: 0\n")
	opts := f.options(nil, nil)
	opts.ConfigFile = f.repoFile()
	if errs := loadErr(t, opts); len(errs) != 1 {
		t.Errorf("got %d problems; want 1:\n%v", len(errs), errs)
	}
}

// Load reports every problem of every source, in source order.
func TestLoadReportsEveryProblem(t *testing.T) {
	f := newFixture(t)
	write(t, f.userFile(), "memory:\n  cadence_turns: 0\n  retrieval_top_k: 0\n")
	write(t, f.repoFile(), "memory:\n  colour: red\n")
	errs := loadErr(t, f.options([]string{"FORGEMEM_RETRIEVAL_HOP_DEPTH=9", "FORGEMEM_NOPE=1"}, map[string]string{"provider": "claude"}))
	var got []string
	for _, e := range errs {
		got = append(got, e.Source.Origin.String()+" "+e.Key)
	}
	want := []string{
		"user file memory.cadence_turns", "user file memory.retrieval_top_k", "repo file memory.colour",
		"environment FORGEMEM_NOPE", "environment memory.retrieval_hop_depth", "flag memory.provider",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems %q\nwant %q", got, want)
	}
	if n := strings.Count(errs.Error(), "\n"); n != len(want)-1 {
		t.Errorf("Errors.Error() has %d lines; want one per problem:\n%v", n+1, errs)
	}
	for _, kind := range []error{settings.ErrInvalidValue, settings.ErrUnknownKey} {
		if !errors.Is(errs, kind) {
			t.Errorf("errors.Is(errs, %v) = false", kind)
		}
	}
}

// The settings never print an API key, however they are formatted.
func TestAPIKeysNeverPrinted(t *testing.T) {
	s := mustLoad(t, newFixture(t).options([]string{"OPENAI_API_KEY=sk-very-secret", "GEMINI_API_KEY=gm-very-secret"}, nil))
	for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
		for _, v := range []any{s, *s} {
			out := fmt.Sprintf(format, v)
			if strings.Contains(out, "very-secret") {
				t.Errorf("%s of %T prints an API key: %s", format, v, out)
			}
			if !strings.Contains(out, "OPENAI_API_KEY: set (not shown)") {
				t.Errorf("%s of %T does not say the key is set: %s", format, v, out)
			}
		}
	}
	if !strings.Contains(s.String(), "memory.cadence_turns: 1 (default)\n") || !strings.Contains(s.String(), `memory.classifier_model: "" (default)`) {
		t.Errorf("String() = %s", s)
	}
}
