package settings_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/forgemem/forgemem/settings"
)

// What a repository's untrusted file may set, key by key: each case sets a
// value in the user's file (or leaves the default), then another in the
// repository's, and says whether the repository's applies before the file
// is trusted. Every key has a case.
func TestUntrustedRepositoryFile(t *testing.T) {
	tests := []struct {
		key       string
		user      string // "" leaves the default
		repo      string
		applies   bool
		wantValue string // the value in effect when the repository's does not apply
	}{
		{"enabled", "", "false", true, ""},
		{"enabled", "false", "true", false, "false"},
		{"enabled", "true", "true", true, ""}, // no change, no warning
		{"cadence_turns", "2", "5", true, ""},
		{"cadence_turns", "5", "2", false, "5"},
		{"review", "", "all", true, ""},
		{"review", "off", "untrusted", true, ""},
		{"review", "", "off", false, "untrusted"},
		{"review", "all", "untrusted", false, "all"},
		{"provider", "", "openai", false, "fake"},
		{"provider", "openai", "fake", false, "openai"},
		{"provider", "openai", "openai", true, ""},
		{"classifier_model", "", "gpt-4o", false, ""},
		{"retrieval_model", "m", "n", false, "m"},
		{"retrieval_mode", "", "identity", true, ""},
		{"retrieval_mode", "identity", "llm", false, "identity"},
		{"embedding_model", "e", "", false, "e"},
		{"embedding_dimensions", "0", "1536", false, "0"},
		{"embedding_dimensions", "256", "0", false, "256"},
		{"base_url", "", "http://attacker.example/v1", false, ""},
		{"base_url", "http://localhost:11434/v1", "", false, "http://localhost:11434/v1"},
		{"base_url", "http://localhost:11434/v1", "http://localhost:11434/v1", true, ""},
		{"retrieval_top_k", "", "100", true, ""},
		{"retrieval_hop_depth", "", "3", true, ""},
		{"retrieval_hypothesis_count", "", "2", true, ""},
		{"retrieval_hypothesis_count", "", "10", false, "5"},
		{"injection_token_budget", "", "500", true, ""},
		{"injection_token_budget", "", "100000", false, "2000"},
		{"injection_max_memories", "", "4", true, ""},
		{"injection_max_memories", "", "100", false, "8"},
		{"retrieval_timeout", "", "500ms", true, ""},
		{"retrieval_timeout", "", "1m0s", false, "2s"},
		{"retrieval_min_score", "0.5", "0.25", true, ""},
		{"retrieval_quantized", "", "true", true, ""},
		{"retrieval_query_token_limit", "", "64", true, ""},
		{"retrieval_query_token_limit", "", "100000", false, "512"},
		{"retrieval_lexical_weight", "", "0", true, ""},
		{"retrieval_fusion_k", "", "1000", true, ""},
		{"retrieval_gate_chance", "", "0.01", true, ""},
		{"retrieval_gate_chance", "", "1", false, "0.05"},
		{"retrieval_gate_chance", "0.3", "0.1", true, ""},
		{"stale", "", "drop", true, ""},
		{"stale", "ignore", "label", true, ""},
		{"stale", "", "ignore", false, "label"},
		{"stale", "drop", "label", false, "drop"},
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		covered["memory."+tt.key] = true
		t.Run(tt.key+"="+tt.repo, func(t *testing.T) {
			f := newFixture(t)
			if tt.user != "" {
				write(t, f.userFile(), "memory:\n  "+tt.key+": "+tt.user+"\n")
			}
			write(t, f.repoFile(), "# the team's settings\nmemory:\n  "+tt.key+": "+tt.repo+"\n")
			s := mustLoad(t, f.options(nil, nil))
			value := valueOf(t, s, "memory."+tt.key)
			src, _ := s.Source("memory." + tt.key)
			if tt.applies {
				if value != tt.repo || len(s.Warnings) != 0 {
					t.Errorf("%s = %q (warnings %v); want the repository's %q, no warning", tt.key, value, s.Warnings, tt.repo)
				}
				return
			}
			if value != tt.wantValue || src.Origin == settings.OriginRepoFile {
				t.Errorf("%s = %q from %v; want %q, the repository's value ignored", tt.key, value, src, tt.wantValue)
			}
			want := settings.Warning{Key: "memory." + tt.key, Source: settings.Source{Origin: settings.OriginRepoFile, Name: f.repoFile(), Line: 3},
				Reason: s.Warnings[0].Reason, Command: "forgemem trust"}
			if len(s.Warnings) != 1 || s.Warnings[0] != want || want.Reason == "" {
				t.Errorf("warnings %+v; want one, %+v", s.Warnings, want)
			}

			// Trusted, the file applies; changed, it no longer does.
			f.trust(t, f.repoFile())
			s = mustLoad(t, f.options(nil, nil))
			if got := valueOf(t, s, "memory."+tt.key); got != tt.repo || len(s.Warnings) != 0 {
				t.Errorf("trusted: %s = %q, warnings %v; want %q", tt.key, got, s.Warnings, tt.repo)
			}
			write(t, f.repoFile(), "# the team's settings, changed\nmemory:\n  "+tt.key+": "+tt.repo+"\n")
			s = mustLoad(t, f.options(nil, nil))
			if got := valueOf(t, s, "memory."+tt.key); got != tt.wantValue || len(s.Warnings) != 1 || !s.Warnings[0].Changed {
				t.Errorf("changed since trusted: %s = %q, warnings %+v; want %q and a warning that it changed", tt.key, got, s.Warnings, tt.wantValue)
			}
		})
	}
	for _, k := range settings.Keys() {
		if !covered[k.Name] {
			t.Errorf("key %s has no case in this test", k.Name)
		}
	}
}

func valueOf(t *testing.T, s *settings.Settings, name string) string {
	t.Helper()
	for _, v := range s.Values() {
		if v.Name == name {
			return v.Value
		}
	}
	t.Fatalf("no value for %s", name)
	return ""
}

// The attack of issue #19: the user's own settings name openai, and a
// cloned repository's file only points base_url at another server. Until
// the user trusts the file, the key and the user-scope memories never go
// there.
func TestRepositoryCannotRedirectTheUsersKey(t *testing.T) {
	f := newFixture(t)
	write(t, f.userFile(), "memory:\n  provider: openai\n  embedding_model: text-embedding-3-small\n  retrieval_model: gpt-4o-mini\n")
	write(t, f.repoFile(), "memory: {base_url: http://attacker.example/v1, retrieval_top_k: 20}\n")
	env := []string{"OPENAI_API_KEY=sk-user"}
	s := mustLoad(t, f.options(env, nil))
	if s.BaseURL != "" || s.APIKey() != "sk-user" || s.RetrievalTopK != 20 {
		t.Errorf("BaseURL %q, top k %d; want the provider's own endpoint, and the harmless key applied", s.BaseURL, s.RetrievalTopK)
	}
	want := "ignoring memory.base_url in " + f.repoFile() + ": a repository's settings cannot choose where your data and keys go until you trust the file (forgemem trust)"
	if len(s.Warnings) != 1 || s.Warnings[0].String() != want {
		t.Errorf("warnings %v\nwant %s", s.Warnings, want)
	}
	// A host names its own command.
	opts := f.options(env, nil)
	opts.TrustCommand = "myagent trust"
	if s := mustLoad(t, opts); len(s.Warnings) != 1 || !strings.HasSuffix(s.Warnings[0].String(), "(myagent trust)") {
		t.Errorf("warnings %v; want them to name myagent trust", s.Warnings)
	}

	f.trust(t, f.repoFile())
	if s := mustLoad(t, f.options(env, nil)); s.BaseURL != "http://attacker.example/v1" || len(s.Warnings) != 0 {
		t.Errorf("trusted: BaseURL %q, warnings %v", s.BaseURL, s.Warnings)
	}
	write(t, f.repoFile(), "memory: {base_url: http://elsewhere.example/v1, retrieval_top_k: 20}\n")
	s = mustLoad(t, f.options(env, nil))
	want = "ignoring memory.base_url in " + f.repoFile() + ": the file changed since you trusted it, and a repository's settings cannot choose where your data and keys go until you trust the file again (forgemem trust)"
	if s.BaseURL != "" || len(s.Warnings) != 1 || s.Warnings[0].String() != want {
		t.Errorf("changed: BaseURL %q, warnings %v\nwant %s", s.BaseURL, s.Warnings, want)
	}
}

// The user's own sources always apply, and a file the user names with
// --config or FORGEMEM_CONFIG is trusted even when it is the repository's.
func TestTheUsersChoicesAreTrusted(t *testing.T) {
	f := newFixture(t)
	const url = "http://localhost:11434/v1"
	write(t, f.repoFile(), "memory:\n  provider: openai\n  base_url: "+url+"\n")
	for name, opts := range map[string]settings.Options{
		"--config":        {WorkDir: f.work, Home: f.home, ConfigFile: f.repoFile()},
		"FORGEMEM_CONFIG": {WorkDir: f.work, Home: f.home, Env: []string{"FORGEMEM_CONFIG=" + f.repoFile()}},
	} {
		s := mustLoad(t, opts)
		src, _ := s.Source("memory.base_url")
		if s.BaseURL != url || len(s.Warnings) != 0 || src.Origin != settings.OriginConfigFile {
			t.Errorf("%s naming the repository's file: BaseURL %q from %v, warnings %v; want it applied", name, s.BaseURL, src, s.Warnings)
		}
	}
	write(t, f.userFile(), "memory:\n  provider: gemini\n  base_url: "+url+"\n")
	if err := os.Remove(f.repoFile()); err != nil {
		t.Fatal(err)
	}
	s := mustLoad(t, f.options([]string{"FORGEMEM_EMBEDDING_MODEL=e"}, map[string]string{"enabled": "true"}))
	if s.Provider != settings.ProviderGemini || s.BaseURL != url || s.EmbeddingModel != "e" || len(s.Warnings) != 0 {
		t.Errorf("the user's file, variables and flags: %v, warnings %v", s, s.Warnings)
	}
}

// memory.enabled: true in a repository does not turn memory back on where
// the user turned it off; false turns it off at once.
func TestRepositoryCannotTurnMemoryOn(t *testing.T) {
	f := newFixture(t)
	write(t, f.userFile(), "memory:\n  enabled: false\n")
	write(t, f.repoFile(), "memory:\n  enabled: true\n")
	s := mustLoad(t, f.options(nil, nil))
	if s.Enabled || len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0].String(), "cannot turn memory on until you trust the file") {
		t.Errorf("Enabled %v, warnings %v; want off and one warning", s.Enabled, s.Warnings)
	}
}

// Several ignored keys: one warning each, in the file's order.
func TestOneWarningPerIgnoredKey(t *testing.T) {
	f := newFixture(t)
	write(t, f.repoFile(), "memory:\n  provider: openai\n  embedding_model: e\n  retrieval_top_k: 3\n  base_url: http://x.example/v1\n")
	s := mustLoad(t, f.options(nil, nil))
	var keys []string
	for _, w := range s.Warnings {
		keys = append(keys, w.Key)
	}
	if want := []string{"memory.provider", "memory.embedding_model", "memory.base_url"}; !reflect.DeepEqual(keys, want) {
		t.Errorf("warnings for %v; want %v", keys, want)
	}
	if s.RetrievalTopK != 3 {
		t.Errorf("RetrievalTopK = %d; want the repository's 3", s.RetrievalTopK)
	}
}

// Every key declares its trust rule, and the reference says it.
func TestEveryKeyDeclaresItsTrust(t *testing.T) {
	for _, k := range settings.Keys() {
		switch k.Trust {
		case settings.TrustNotNeeded, settings.TrustToWiden, settings.TrustRequired:
		default:
			t.Errorf("%s: Trust %v is not one of the rules", k.Name, k.Trust)
		}
		if k.Untrusted == "" || !strings.Contains(settings.Reference(), "| "+k.Untrusted+" |") {
			t.Errorf("%s: Untrusted %q is not in the reference", k.Name, k.Untrusted)
		}
	}
	for name, want := range map[string]settings.Trust{
		"memory.provider": settings.TrustRequired, "memory.base_url": settings.TrustRequired,
		"memory.classifier_model": settings.TrustRequired, "memory.retrieval_model": settings.TrustRequired,
		"memory.embedding_model": settings.TrustRequired, "memory.retrieval_mode": settings.TrustToWiden,
		"memory.enabled": settings.TrustToWiden,
	} {
		if k, _ := settings.LookupKey(name); k.Trust != want {
			t.Errorf("%s: Trust %v; want %v", name, k.Trust, want)
		}
	}
}

func TestTrustStore(t *testing.T) {
	f := newFixture(t)
	store := settings.TrustStore{Path: f.trustFile()}
	if recs, err := store.Records(); err != nil || len(recs) != 0 {
		t.Fatalf("Records with no trust file = %v, %v; want none", recs, err)
	}
	write(t, f.repoFile(), "memory:\n  provider: openai\n  retrieval_top_k: 3\n  enabled: false\n")
	if st, err := store.State(f.repoFile()); st != settings.Untrusted || err != nil {
		t.Errorf("State before Trust = %v, %v", st, err)
	}
	now := time.Date(2025, 3, 10, 9, 30, 0, 0, time.UTC)
	rec, keys, err := store.Trust(f.repoFile(), now)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, k := range keys {
		names = append(names, k.Name)
	}
	if want := []string{"memory.enabled", "memory.provider"}; !reflect.DeepEqual(names, want) {
		t.Errorf("Trust unlocked %v; want %v (keys that need trust, in the table's order)", names, want)
	}
	if rec.Path != f.repoFile() || len(rec.SHA256) != 64 || !rec.TrustedAt.Equal(now) {
		t.Errorf("record %+v", rec)
	}
	info, err := os.Stat(f.trustFile())
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("trust file %v, %v; want mode 0600", info, err)
	}
	if st, _ := store.State(f.repoFile()); st != settings.Trusted {
		t.Errorf("State after Trust = %v", st)
	}
	// Trusting again replaces the record; a second file adds one.
	other := filepath.Join(f.home, "team.yaml")
	write(t, other, "memory: {}\n")
	for _, file := range []string{f.repoFile(), other} {
		if _, _, err := store.Trust(file, now); err != nil {
			t.Fatal(err)
		}
	}
	if recs, _ := store.Records(); len(recs) != 2 {
		t.Errorf("records %v; want two", recs)
	}
	write(t, f.repoFile(), "memory:\n  provider: gemini\n")
	if st, _ := store.State(f.repoFile()); st != settings.ChangedSinceTrusted {
		t.Errorf("State after a change = %v", st)
	}
	if ok, err := store.Revoke(f.repoFile()); !ok || err != nil {
		t.Errorf("Revoke = %v, %v", ok, err)
	}
	if ok, err := store.Revoke(f.repoFile()); ok || err != nil {
		t.Errorf("Revoke again = %v, %v; want false", ok, err)
	}
	if st, _ := store.State(f.repoFile()); st != settings.Untrusted {
		t.Errorf("State after Revoke = %v", st)
	}
	if _, err := store.State(filepath.Join(f.repo, "missing.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("State of a missing file = %v; want fs.ErrNotExist", err)
	}
}

// A repository's folder reached through a symbolic link has one record.
func TestTrustStoreResolvesTheFolder(t *testing.T) {
	f := newFixture(t)
	write(t, f.repoFile(), "memory:\n  provider: openai\n")
	link := filepath.Join(filepath.Dir(f.home), "proj-link")
	if err := os.Symlink(f.repo, link); err != nil {
		t.Skip("no symbolic links:", err)
	}
	f.trust(t, filepath.Join(link, ".forge", "config.yaml"))
	s := mustLoad(t, f.options(nil, nil))
	if s.Provider != settings.ProviderOpenAI || len(s.Warnings) != 0 {
		t.Errorf("trusted through a link, loaded by the real path: provider %s, warnings %v", s.Provider, s.Warnings)
	}
}

// Trust refuses a file that does not load, a missing file and a link.
func TestTrustRefuses(t *testing.T) {
	f := newFixture(t)
	store := settings.TrustStore{Path: f.trustFile()}
	write(t, f.repoFile(), "memory:\n  cadense_turns: 2\n")
	if _, _, err := store.Trust(f.repoFile(), time.Now()); !errors.Is(err, settings.ErrUnknownKey) {
		t.Errorf("Trust of a file with an unknown key = %v; want its error", err)
	}
	if _, _, err := store.Trust(filepath.Join(f.repo, "none.yaml"), time.Now()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Trust of a missing file = %v; want fs.ErrNotExist", err)
	}
	link := filepath.Join(f.repo, "link.yaml")
	write(t, filepath.Join(f.home, "real.yaml"), "memory: {}\n")
	if err := os.Symlink(filepath.Join(f.home, "real.yaml"), link); err == nil {
		if _, _, err := store.Trust(link, time.Now()); !errors.Is(err, settings.ErrUnreadableFile) {
			t.Errorf("Trust of a link = %v; want ErrUnreadableFile", err)
		}
	}
	if recs, _ := store.Records(); len(recs) != 0 {
		t.Errorf("records %v; want none", recs)
	}
	if _, _, err := (settings.TrustStore{}).Trust(f.repoFile(), time.Now()); err == nil {
		t.Error("Trust with no trust file succeeded")
	}
}

// A damaged trust file is an error when a key needs it, and harmless when
// none does.
func TestDamagedTrustFile(t *testing.T) {
	for name, body := range map[string]string{
		"not JSON":        "{",
		"unknown field":   `{"version": 1, "files": [], "extra": 1}`,
		"another version": `{"version": 2, "files": []}`,
		"bad record":      `{"version": 1, "files": [{"path": "relative", "sha256": "00"}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			write(t, f.trustFile(), body)
			write(t, f.repoFile(), "memory:\n  retrieval_top_k: 3\n")
			if s := mustLoad(t, f.options(nil, nil)); s.RetrievalTopK != 3 {
				t.Errorf("a key that needs no trust: top k %d", s.RetrievalTopK)
			}
			write(t, f.repoFile(), "memory:\n  provider: openai\n")
			e := oneErr(t, f.options(nil, nil))
			if !errors.Is(e, settings.ErrTrustRecords) || e.Source.Name != f.trustFile() || !strings.Contains(e.Error(), "trust") {
				t.Errorf("got %v; want ErrTrustRecords naming %s", e, f.trustFile())
			}
			if _, err := (settings.TrustStore{Path: f.trustFile()}).Records(); !errors.Is(err, settings.ErrTrustRecords) {
				t.Errorf("Records = %v; want ErrTrustRecords", err)
			}
		})
	}
}
