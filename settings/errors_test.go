package settings_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/settings"
)

// The messages users see, word for word (the file's path is written as
// FILE).
func TestFileErrorMessages(t *testing.T) {
	tests := []struct {
		name string
		body string
		kind error
		line int
		key  string
		want string
	}{
		{"out of range", "memory:\n  provider: fake\n  cadence_turns: 11\n", settings.ErrInvalidValue, 3, "memory.cadence_turns",
			"FILE:3: memory.cadence_turns is 11, want 1–10"},
		{"unknown key with suggestion", "memory:\n  cadense_turns: 2\n", settings.ErrUnknownKey, 2, "memory.cadense_turns",
			"FILE:2: unknown key memory.cadense_turns (did you mean memory.cadence_turns?)"},
		{"unknown key without suggestion", "memory:\n  colour: red\n", settings.ErrUnknownKey, 2, "memory.colour",
			"FILE:2: unknown key memory.colour; known: memory.enabled, memory.cadence_turns, memory.provider, memory.classifier_model, memory.retrieval_model, memory.retrieval_mode, memory.embedding_model, memory.embedding_dimensions, memory.base_url, memory.retrieval_top_k, memory.retrieval_hop_depth, memory.retrieval_hypothesis_count, memory.injection_token_budget, memory.injection_max_memories, memory.retrieval_timeout, memory.retrieval_min_score, memory.retrieval_quantized, memory.retrieval_query_token_limit, memory.retrieval_lexical_weight, memory.retrieval_fusion_k, memory.retrieval_gate_chance, memory.stale, memory.review"},
		{"misspelt section", "model: claude\nmemroy:\n  cadence_turns: 2\n", settings.ErrUnknownKey, 2, "memroy",
			"FILE:2: unknown key memroy (did you mean memory:?)"},
		{"section in capitals", "Memory:\n  cadence_turns: 2\n", settings.ErrUnknownKey, 1, "Memory",
			"FILE:1: unknown key Memory (did you mean memory:?)"},
		{"key outside the section", "memory:\n  provider: openai\nretrieval_top_k: 5\n", settings.ErrUnknownKey, 3, "retrieval_top_k",
			"FILE:3: unknown key retrieval_top_k (did you mean memory.retrieval_top_k?)"},
		{"forgotten indent", "memory:\nembedding_model: e\n", settings.ErrUnknownKey, 2, "embedding_model",
			"FILE:2: unknown key embedding_model (did you mean memory.embedding_model?)"},
		{"secret as a value", "memory:\n  provider: sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z\n", settings.ErrInvalidValue, 2, "memory.provider",
			"FILE:2: memory.provider is [REDACTED], want fake, openai or gemini"},
		{"secret as a model", "memory:\n  embedding_model: \"sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z \"\n", settings.ErrInvalidValue, 2, "memory.embedding_model",
			`FILE:2: memory.embedding_model is "[REDACTED] ", want a string without control characters or surrounding spaces`},
		{"secret as a key", "memory:\n  sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z: 1\n", settings.ErrUnknownKey, 2, "memory.sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z",
			"FILE:2: unknown key memory.[REDACTED]; known: memory.enabled, memory.cadence_turns, memory.provider, memory.classifier_model, memory.retrieval_model, memory.retrieval_mode, memory.embedding_model, memory.embedding_dimensions, memory.base_url, memory.retrieval_top_k, memory.retrieval_hop_depth, memory.retrieval_hypothesis_count, memory.injection_token_budget, memory.injection_max_memories, memory.retrieval_timeout, memory.retrieval_min_score, memory.retrieval_quantized, memory.retrieval_query_token_limit, memory.retrieval_lexical_weight, memory.retrieval_fusion_k, memory.retrieval_gate_chance, memory.stale, memory.review"},
		{"wrong type", "memory:\n  retrieval_top_k: ten\n", settings.ErrInvalidValue, 2, "memory.retrieval_top_k",
			"FILE:2: memory.retrieval_top_k is ten, want an integer in 1–100"},
		{"enum with suggestion", "memory:\n  provider: OpenAI\n", settings.ErrInvalidValue, 2, "memory.provider",
			"FILE:2: memory.provider is OpenAI, want fake, openai or gemini (did you mean openai?)"},
		{"duration without unit", "memory:\n  retrieval_timeout: 2\n", settings.ErrInvalidValue, 2, "memory.retrieval_timeout",
			"FILE:2: memory.retrieval_timeout is 2, want a duration such as 2s or 1500ms, more than 0"},
		{"bool as a word", "memory:\n  enabled: yes\n", settings.ErrInvalidValue, 2, "memory.enabled",
			"FILE:2: memory.enabled is yes, want true or false"},
		{"mapping for a number", "memory:\n  retrieval_min_score: {a: 1}\n", settings.ErrInvalidValue, 2, "memory.retrieval_min_score",
			"FILE:2: memory.retrieval_min_score is {…}, want a number in −1–1"},
		{"quoted number", "memory:\n  cadence_turns: \"3\"\n", settings.ErrInvalidValue, 2, "memory.cadence_turns",
			"FILE:2: memory.cadence_turns is 3, want an integer in 1–10, not a quoted string"},
		{"no value", "memory:\n  cadence_turns:\n", settings.ErrInvalidValue, 2, "memory.cadence_turns",
			`FILE:2: memory.cadence_turns is "", want an integer in 1–10`},
		{"bad URL", "memory:\n  base_url: localhost:11434\n", settings.ErrInvalidValue, 2, "memory.base_url",
			"FILE:2: memory.base_url is localhost:11434, want an absolute http or https URL such as http://localhost:11434/v1"},
		{"URL with credentials", "memory:\n  base_url: https://me:sk-hunter2@gw.example/v1\n", settings.ErrInvalidValue, 2, "memory.base_url",
			"FILE:2: memory.base_url is https://me:[REDACTED]@gw.example/v1, want an absolute http or https URL such as http://localhost:11434/v1"},
		{"api key", "memory:\n  openai_api_key: sk-proj-abc123\n", settings.ErrSecretInFile, 2, "memory.openai_api_key",
			"FILE:2: memory.openai_api_key: API keys are not read from settings files (the value is not shown); set OPENAI_API_KEY in the environment instead and remove the key from the file"},
		{"generic api key", "memory:\n  api_key: sk-proj-abc123\n", settings.ErrSecretInFile, 2, "memory.api_key",
			"FILE:2: memory.api_key: API keys are not read from settings files (the value is not shown); set OPENAI_API_KEY or GEMINI_API_KEY in the environment instead and remove the key from the file"},
		{"flat form", "memory.cadence_turns: 3\n", settings.ErrUnknownKey, 1, "memory.cadence_turns",
			"FILE:1: unknown key memory.cadence_turns (did you mean memory: {cadence_turns: …}?)"},
		{"set twice", "memory:\n  cadence_turns: 2\n  cadence_turns: 3\n", settings.ErrMalformedFile, 3, "memory.cadence_turns",
			"FILE:3: malformed settings file: memory.cadence_turns is set twice (also on line 2)"},
		{"section twice", "memory: {}\n---\nmemory: {}\n", settings.ErrMalformedFile, 3, "memory",
			"FILE:3: malformed settings file: memory: is set twice (also on line 1)"},
		{"section not a mapping", "memory: true\n", settings.ErrInvalidValue, 1, "memory",
			"FILE:1: memory is true, want a mapping of settings, such as memory: {cadence_turns: 3}"},
		{"file not a mapping", "- memory\n", settings.ErrMalformedFile, 1, "",
			"FILE:1: malformed settings file: the file is a list; want a mapping with a memory: section"},
		{"malformed YAML", "memory:\n  cadence_turns: 3\n   retrieval_top_k: 4\n", settings.ErrMalformedFile, 0, "",
			"FILE: malformed settings file: yaml: line 3: mapping values are not allowed in this context"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			write(t, f.userFile(), tt.body)
			e := oneErr(t, f.options(nil, nil))
			if !errors.Is(e, tt.kind) {
				t.Errorf("kind %v; want %v", e.Kind, tt.kind)
			}
			if !errors.Is(e, settings.ErrInvalidConfig) || !errors.Is(e, memcore.ErrInvalidConfig) {
				t.Errorf("%v does not match ErrInvalidConfig and memcore.ErrInvalidConfig, the sentinel of every module", e)
			}
			if e.Source.Origin != settings.OriginUserFile || e.Source.Name != f.userFile() || e.Source.Line != tt.line || e.Key != tt.key {
				t.Errorf("source %+v key %q; want the user file, line %d, key %q", e.Source, e.Key, tt.line, tt.key)
			}
			if got := strings.ReplaceAll(e.Error(), f.userFile(), "FILE"); got != tt.want {
				t.Errorf("message\n%s\nwant\n%s", got, tt.want)
			}
			if strings.Contains(e.Error(), "sk-") || strings.Contains(e.Error(), "Ab3dEf6h") {
				t.Errorf("the message repeats a secret: %s", e)
			}
		})
	}
}

// settings.ErrInvalidConfig is memcore's: an error of Load and one of a
// library module's Config match either.
func TestOneSentinel(t *testing.T) {
	if settings.ErrInvalidConfig != memcore.ErrInvalidConfig {
		t.Fatal("settings.ErrInvalidConfig is not memcore.ErrInvalidConfig")
	}
	f := newFixture(t)
	write(t, f.userFile(), "memory:\n  cadence_turns: 11\n")
	_, loadErr := settings.Load(f.options(nil, nil))
	capture := settings.Default().CaptureConfig()
	capture.Cadence = 11
	for _, err := range []error{loadErr, capture.Validate()} {
		if !errors.Is(err, memcore.ErrInvalidConfig) || !errors.Is(err, settings.ErrInvalidConfig) {
			t.Errorf("%v matches neither memcore.ErrInvalidConfig nor settings.ErrInvalidConfig", err)
		}
	}
}

// Out of range for every ranged key, at both ends, from a file, a
// variable and a flag. The error names the source and the range.
func TestOutOfRangeEveryKey(t *testing.T) {
	tests := []struct {
		key        string
		low, high  string // "" when that end is open
		wantRange  string
		lowInRange string // the lowest accepted value, which loads
	}{
		{"cadence_turns", "0", "11", "1–10", "1"},
		{"embedding_dimensions", "-1", "65537", "0–65536", "0"},
		{"retrieval_top_k", "0", "101", "1–100", "1"},
		{"retrieval_hop_depth", "-1", "4", "0–3", "0"},
		{"retrieval_hypothesis_count", "0", "11", "1–10", "1"},
		{"injection_token_budget", "0", "", "≥ 1", "1"},
		{"injection_max_memories", "0", "1001", "1–1000", "1"},
		{"retrieval_timeout", "0s", "", "> 0", "1ns"},
		{"retrieval_min_score", "-1.01", "1.5", "−1–1", "-1"},
		{"retrieval_query_token_limit", "0", "1000001", "1–1000000", "1"},
		{"retrieval_lexical_weight", "-0.1", "10.5", "0–10", "0"},
		{"retrieval_fusion_k", "0", "1001", "1–1000", "1"},
		{"retrieval_gate_chance", "0", "1.5", "0.0001–1", "0.0001"},
		{"provider", "", "claude", "fake, openai or gemini", "fake"},
		{"retrieval_mode", "", "hyde", "llm or identity", "identity"},
		{"review", "", "none", "off, untrusted or all", "off"},
		{"stale", "", "hide", "ignore, label or drop", "ignore"},
	}
	ranged := map[string]bool{}
	for _, tt := range tests {
		ranged["memory."+tt.key] = true
		k, _ := settings.LookupKey(tt.key)
		if k.Range != tt.wantRange {
			t.Errorf("%s: Range %q; want %q", tt.key, k.Range, tt.wantRange)
		}
		for _, bad := range []string{tt.low, tt.high} {
			if bad == "" {
				continue
			}
			t.Run(tt.key+"="+bad, func(t *testing.T) {
				f := newFixture(t)
				write(t, f.repoFile(), "memory:\n  "+tt.key+": "+bad+"\n")
				e := oneErr(t, f.options(nil, nil))
				want := f.repoFile() + ":2: memory." + tt.key + " is " + bad + ", want " + tt.wantRange
				if !errors.Is(e, settings.ErrInvalidValue) || !strings.HasPrefix(e.Error(), want) {
					t.Errorf("file: %v\nwant %s", e, want)
				}

				f = newFixture(t)
				e = oneErr(t, f.options([]string{k.Env + "=" + bad}, nil))
				want = "environment variable " + k.Env + " is " + bad + ", want " + tt.wantRange
				if !errors.Is(e, settings.ErrInvalidValue) || !strings.HasPrefix(e.Error(), want) || e.Source.Name != k.Env {
					t.Errorf("env: %v\nwant %s", e, want)
				}

				e = oneErr(t, f.options(nil, map[string]string{k.Flag: bad}))
				want = "flag --" + k.Flag + " is " + bad + ", want " + tt.wantRange
				if !errors.Is(e, settings.ErrInvalidValue) || !strings.HasPrefix(e.Error(), want) || e.Value != bad {
					t.Errorf("flag: %v\nwant %s", e, want)
				}
			})
		}
		t.Run(tt.key+"="+tt.lowInRange, func(t *testing.T) {
			mustLoad(t, newFixture(t).options(nil, map[string]string{k.Flag: tt.lowInRange}))
		})
	}
	for _, k := range settings.Keys() {
		if k.Range != "" && !ranged[k.Name] && k.Type != "URL" {
			t.Errorf("ranged key %s has no out-of-range case", k.Name)
		}
	}
}

func TestWrongTypeFromEnvAndFlags(t *testing.T) {
	tests := []struct {
		flag, value, want string
	}{
		{"cadence-turns", "three", "an integer in 1–10"},
		{"cadence-turns", " 3", "an integer in 1–10"},
		{"cadence-turns", "", "an integer in 1–10"},
		{"enabled", "maybe", "true or false"},
		{"retrieval-timeout", "soon", "a duration such as 2s or 1500ms, more than 0"},
		{"retrieval-min-score", "NaN", "a number in −1–1"},
		{"base-url", "ftp://files.example/", "an absolute http or https URL such as http://localhost:11434/v1"},
		{"base-url", "/v1", "an absolute http or https URL such as http://localhost:11434/v1"},
		{"base-url", "https://gw.example/v1?key=x", "an absolute http or https URL such as http://localhost:11434/v1"},
		{"classifier-model", "gpt 4o\n", "a string without control characters or surrounding spaces"},
	}
	for _, tt := range tests {
		t.Run(tt.flag+"="+tt.value, func(t *testing.T) {
			k, ok := settings.LookupKey(tt.flag)
			if !ok {
				t.Fatalf("LookupKey(%q) found nothing", tt.flag)
			}
			e := oneErr(t, newFixture(t).options(nil, map[string]string{tt.flag: tt.value}))
			if !errors.Is(e, settings.ErrInvalidValue) || e.Want != tt.want || e.Key != k.Name || e.Source != (settings.Source{Origin: settings.OriginFlag, Name: tt.flag}) {
				t.Errorf("flag: %#v", e)
			}
			if !strings.HasPrefix(e.Error(), "flag --"+tt.flag+" is ") {
				t.Errorf("flag message %q", e)
			}
			if tt.value == "" {
				return // an empty variable is unset
			}
			e = oneErr(t, newFixture(t).options([]string{k.Env + "=" + tt.value}, nil))
			if !errors.Is(e, settings.ErrInvalidValue) || e.Want != tt.want || e.Source.Name != k.Env {
				t.Errorf("env: %#v", e)
			}
		})
	}
}

func TestUnknownEnvironmentVariable(t *testing.T) {
	tests := []struct {
		name, suggestion string
	}{
		{"FORGEMEM_CADENSE_TURNS", "FORGEMEM_CADENCE_TURNS"},
		{"FORGEMEM_TOP_K", "FORGEMEM_RETRIEVAL_TOP_K"},
		{"FORGEMEM_REPODIR", "FORGEMEM_REPO_DIR"},
		{"FORGEMEM_OPENAI_API_KEY", "OPENAI_API_KEY"},
		{"FORGEMEM_API_KEY", "OPENAI_API_KEY or GEMINI_API_KEY"},
		{"FORGEMEM_COLOUR", ""},
		{"FORGEMEM_", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := oneErr(t, newFixture(t).options([]string{tt.name + "=sk-should-not-show"}, nil))
			if !errors.Is(e, settings.ErrUnknownKey) || e.Source != (settings.Source{Origin: settings.OriginEnv, Name: tt.name}) || e.Suggestion != tt.suggestion {
				t.Errorf("got %#v; want ErrUnknownKey naming %s, suggesting %q", e, tt.name, tt.suggestion)
			}
			msg := e.Error()
			if !strings.HasPrefix(msg, "unknown environment variable "+tt.name) || !strings.Contains(msg, "FORGEMEM_CONFIG") ||
				strings.Contains(msg, "should-not-show") {
				t.Errorf("message %q", msg)
			}
		})
	}
	// An empty unknown variable is still a typo to report.
	if e := oneErr(t, newFixture(t).options([]string{"FORGEMEM_NOPE="}, nil)); !errors.Is(e, settings.ErrUnknownKey) {
		t.Errorf("empty unknown variable: %v", e)
	}
}

func TestUnknownFlag(t *testing.T) {
	e := oneErr(t, newFixture(t).options(nil, map[string]string{"cadence": "2"}))
	if !errors.Is(e, settings.ErrUnknownKey) || e.Suggestion != "--cadence-turns" {
		t.Errorf("got %#v", e)
	}
	if want := "unknown flag --cadence (did you mean --cadence-turns?); known: --enabled, --cadence-turns, "; !strings.HasPrefix(e.Error(), want) {
		t.Errorf("message %q\nwant prefix %q", e, want)
	}
}

func TestBadOpenAIBaseURL(t *testing.T) {
	e := oneErr(t, newFixture(t).options([]string{"FORGEMEM_PROVIDER=openai", "OPENAI_BASE_URL=localhost:11434"}, nil))
	if want := "environment variable OPENAI_BASE_URL is localhost:11434, want an absolute http or https URL such as http://localhost:11434/v1"; e.Error() != want {
		t.Errorf("message %q\nwant %q", e, want)
	}
}

func TestErrorUnwrap(t *testing.T) {
	cause := errors.New("boom")
	e := &settings.Error{Kind: settings.ErrMalformedFile, Source: settings.Source{Origin: settings.OriginRepoFile, Name: "/r/c.yaml", Line: 4}, Err: cause}
	if !errors.Is(e, settings.ErrMalformedFile) || !errors.Is(e, cause) || errors.Is(e, settings.ErrUnknownKey) {
		t.Error("errors.Is does not follow Kind and Err")
	}
	if got := e.Error(); got != "/r/c.yaml:4: malformed settings file: boom" {
		t.Errorf("Error() = %q", got)
	}
	var target *settings.Error
	if !errors.As(settings.Errors{e}, &target) || target != e {
		t.Error("errors.As does not find the Error in Errors")
	}
}

func TestLongValuesAreShortened(t *testing.T) {
	long := strings.Repeat("x", 500)
	e := oneErr(t, newFixture(t).options(nil, map[string]string{"provider": long}))
	if len(e.Error()) > 200 || e.Value != long {
		t.Errorf("message of %d bytes (Value kept whole: %v): %s", len(e.Error()), e.Value == long, e)
	}
}
