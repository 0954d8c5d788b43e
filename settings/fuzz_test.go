package settings

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSuggest(t *testing.T) {
	keys := names(func(k *key) string { return k.name })
	tests := []struct {
		name, want string
	}{
		{"cadense_turns", "cadence_turns"},
		{"cadenceTurns", "cadence_turns"},
		{"cadence-turns", "cadence_turns"},
		{"CADENCE_TURNS", "cadence_turns"},
		{"retrieval_topk", "retrieval_top_k"},
		{"top_k", "retrieval_top_k"},
		{"hop_depth", "retrieval_hop_depth"},
		{"timeout", "retrieval_timeout"},
		{"enable", "enabled"},
		{"provder", "provider"},
		{"model", ""},                         // classifier, retrieval or embedding: ambiguous
		{"retrieval", ""},                     // starts many keys
		{"colour", ""},                        // nothing like it
		{"x", ""},                             // too short to guess
		{"", ""},                              // nothing
		{"__", ""},                            // nothing once normalised
		{"ab" + strings.Repeat("c", 200), ""}, // long names are never close
	}
	for _, tt := range tests {
		if got := suggest(tt.name, keys); got != tt.want {
			t.Errorf("suggest(%q) = %q; want %q", tt.name, got, tt.want)
		}
	}
	if got := suggest("OpenAI", []string{"fake", "openai", "gemini"}); got != "openai" {
		t.Errorf("suggest(OpenAI) = %q", got)
	}
}

func TestIsSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"api_key": true, "openai_api_key": true, "GEMINI-API-KEY": true, "apiKey": true, "client_secret": true,
		"password": true, "access_token": true, "injection_token_budget": false, "retrieval_top_k": false, "keys": false,
	} {
		if got := isSecretName(name); got != want {
			t.Errorf("isSecretName(%q) = %v; want %v", name, got, want)
		}
	}
}

// checkParsed is what every parse must give: either nothing wrong and
// settings within range, or only *Error values of a known kind.
func checkParsed(t *testing.T, s *Settings, errs Errors, secret string) {
	t.Helper()
	for _, e := range errs {
		if e == nil {
			t.Fatal("a nil *Error among the problems")
		}
		switch e.Kind {
		case ErrUnknownKey, ErrInvalidValue, ErrSecretInFile, ErrMalformedFile, ErrUnreadableFile:
		default:
			t.Fatalf("problem of unknown kind %v: %v", e.Kind, e)
		}
		msg := e.Error()
		if msg == "" || !utf8.ValidString(msg) {
			t.Fatalf("bad message %q", msg)
		}
		if secret != "" && e.Kind == ErrSecretInFile && strings.Contains(msg, secret) {
			t.Fatalf("a secret is repeated: %s", msg)
		}
		var target *Error
		if !errors.As(Errors{e}, &target) || !errors.Is(e, e.Kind) {
			t.Fatalf("errors.As/Is fail on %v", e)
		}
	}
	if len(errs) > 0 {
		return
	}
	if err := s.RetrieveConfig().Validate(); err != nil {
		t.Fatalf("parsed without error, but RetrieveConfig is invalid: %v", err)
	}
	if s.CadenceTurns < 1 || s.CadenceTurns > 10 {
		t.Fatalf("parsed without error, but cadence %d is out of range", s.CadenceTurns)
	}
	switch s.Provider {
	case ProviderFake, ProviderOpenAI, ProviderGemini:
	default:
		t.Fatalf("parsed without error, but provider %q is unknown", s.Provider)
	}
}

// FuzzParseFile: any file loads or gives *Error values; it never panics,
// and a file that loads gives valid settings.
func FuzzParseFile(f *testing.F) {
	for _, seed := range []string{
		"",
		"memory:\n",
		"memory:\n  cadence_turns: 3\n  provider: openai\n  retrieval_timeout: 1500ms\n  retrieval_min_score: -0.5\n",
		"memory: {enabled: false, base_url: 'http://localhost:11434/v1', retrieval_top_k: 100}\n",
		"memory:\n  cadense_turns: 3\n",
		"memory:\n  api_key: sk-abc\n",
		"memory:\n  cadence_turns: 11\n  cadence_turns: 1\n",
		"memory.cadence_turns: 3\n",
		"- a\n- b\n",
		"memory: [1, 2]\n",
		"a: &a\n  cadence_turns: 2\nmemory: *a\n",
		"a: &a [*a]\n",
		"memory:\n  retrieval_min_score: .nan\n  retrieval_hop_depth: 0x3\n",
		"memory: {}\n---\nmemory: {}\n",
		"memory:\n  ? [a]\n  : 1\n",
		"\xef\xbb\xbfmemory:\r\n  cadence_turns: 2\r\n",
		"memory:\n\tcadence_turns: 2\n",
		"%YAML 1.2\n---\nmemory: !!map {cadence_turns: !!int 2}\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data string) {
		src := Source{Origin: OriginRepoFile, Name: "/r/.forge/config.yaml"}
		s := Default()
		errs := parseFile(s, []byte(data), src, nil)
		checkParsed(t, s, errs, "sk-abc")
		for _, e := range errs {
			if e.Source.Origin != OriginRepoFile || e.Source.Name != "/r/.forge/config.yaml" || e.Source.Line < 0 {
				t.Fatalf("problem with a wrong source: %+v", e.Source)
			}
		}
		// Untrusted, the same file gives the same problems, and each value
		// it holds back has one warning and leaves the default in place.
		u := Default()
		gate := &repoGate{state: func() (TrustState, error) { return Untrusted, nil }, command: DefaultTrustCommand}
		uerrs := parseFile(u, []byte(data), src, gate)
		if len(uerrs) != len(errs) {
			t.Fatalf("untrusted: %d problems; trusted: %d", len(uerrs), len(errs))
		}
		seen := map[string]bool{}
		for _, w := range u.Warnings {
			k := lookup(w.Key)
			if k == nil || k.trust.kind == TrustNotNeeded || seen[w.Key] || u.sources[w.Key].Origin == OriginRepoFile || w.Reason == "" {
				t.Fatalf("warning %+v: an unknown key, one needing no trust, a second one, or a value applied", w)
			}
			seen[w.Key] = true
		}
	})
}

// FuzzTrustFile: any trust file is read or refused with ErrTrustRecords;
// it never panics, and what is read holds absolute paths and digests.
func FuzzTrustFile(f *testing.F) {
	f.Add(`{"version": 1, "files": [{"path": "/r/.forge/config.yaml", "sha256": "` + strings.Repeat("ab", 32) + `", "trusted_at": "2025-03-10T09:30:00Z"}]}`)
	f.Add(`{"version": 1, "files": []}`)
	f.Add(`{"version": 2}`)
	f.Add(`[]`)
	f.Add(``)
	f.Fuzz(func(t *testing.T, data string) {
		path := filepath.Join(t.TempDir(), TrustFile)
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		doc, err := TrustStore{Path: path}.read()
		if err != nil {
			if !errors.Is(err, ErrTrustRecords) {
				t.Fatalf("error %v does not match ErrTrustRecords", err)
			}
			return
		}
		for _, r := range doc.Files {
			if !filepath.IsAbs(r.Path) || len(r.SHA256) != 64 {
				t.Fatalf("record %+v read", r)
			}
		}
	})
}

// FuzzEnvironment: any variable and value loads or gives *Error values.
func FuzzEnvironment(f *testing.F) {
	f.Add("CADENCE_TURNS", "3", "openai")
	f.Add("RETRIEVAL_TIMEOUT", "-1s", "fake")
	f.Add("RETRIEVAL_MIN_SCORE", "NaN", "gemini")
	f.Add("BASE_URL", "http://[::1]:8080/v1", "openai")
	f.Add("OPENAI_API_KEY", "sk-x", "")
	f.Add("", "", "")
	f.Fuzz(func(t *testing.T, suffix, value, provider string) {
		l := &loader{env: environ([]string{
			EnvPrefix + suffix + "=" + value,
			EnvPrefix + "PROVIDER=" + provider,
			EnvOpenAIBaseURL + "=" + value,
		}), read: map[string]bool{}}
		s := Default()
		l.environment(s)
		l.opts.Flags = map[string]string{strings.ToLower(suffix): value}
		l.flags(s)
		l.openAIBaseURL(s)
		checkParsed(t, s, l.errs, "")
	})
}
