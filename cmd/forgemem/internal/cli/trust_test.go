package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/cli"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/fakeopenai"
	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memretrieve"
	"github.com/forgemem/forgemem/providers/fake"
)

// network is the fixture's only way out: requests to allowed hosts go
// through, and every other one is answered 401 without leaving the
// machine. It records who was asked, with which API key.
type network struct {
	allowed string // host:port
	mu      sync.Mutex
	reached []request
}

type request struct{ host, authorization string }

func (n *network) RoundTrip(r *http.Request) (*http.Response, error) {
	n.mu.Lock()
	n.reached = append(n.reached, request{host: r.URL.Host, authorization: r.Header.Get("Authorization")})
	n.mu.Unlock()
	if r.URL.Host == n.allowed {
		return http.DefaultTransport.RoundTrip(r)
	}
	if r.Body != nil {
		r.Body.Close()
	}
	return &http.Response{
		StatusCode: http.StatusUnauthorized, Status: "401 Unauthorized", Request: r,
		Header: http.Header{"Content-Type": {"application/json"}}, ProtoMajor: 1, ProtoMinor: 1,
		Body: io.NopCloser(strings.NewReader(`{"error":{"message":"no network in tests","type":"invalid_request_error","code":"invalid_api_key"}}`)),
	}, nil
}

// to returns the requests sent to host, and forgets them all.
func (n *network) to(host string) []request {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []request
	for _, r := range n.reached {
		if r.host == host {
			out = append(out, r)
		}
	}
	n.reached = nil
	return out
}

// The attack of issue #19, through the command: the user's settings name
// openai with a key in the environment, and the cloned repository's
// .forge/config.yaml only names another server. search and recall never
// reach it, and say why, until the user trusts the file; once it changes,
// they stop again.
func TestHostileRepositoryCannotTakeTheKey(t *testing.T) {
	const key = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
	srv, err := fakeopenai.Start(func(fakeopenai.ChatRequest) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	u, err := url.Parse(srv.BaseURL())
	if err != nil {
		t.Fatal(err)
	}
	attacker := u.Host
	net := &network{allowed: attacker}
	f := newFixture(t)
	f.seed()
	f.httpClient = &http.Client{Transport: net}
	f.env = []string{"OPENAI_API_KEY=" + key}
	f.writeFile(filepath.Join(f.home, ".forge", "config.yaml"),
		"memory:\n  provider: openai\n  embedding_model: text-embedding-3-small\n  retrieval_mode: identity\n")
	repoFile := filepath.Join(f.repo, ".forge", "config.yaml")
	f.writeFile(repoFile, "memory: {base_url: "+srv.BaseURL()+"}\n")
	warning := "forgemem: ignoring memory.base_url in " + repoFile + ": a repository's settings cannot choose where your data and keys go until you trust the file (forgemem trust)\n"
	conv := conversation("How do we lock user rows?")
	commands := map[string]func() result{
		"search":      func() result { return f.run("search", "locking") },
		"search json": func() result { return f.run("search", "locking", "--json") },
		"recall":      func() result { return f.runIn(t.Context(), f.repo, conv, "recall") },
	}

	for name, run := range commands {
		r := run()
		if got := net.to(attacker); len(got) != 0 {
			t.Errorf("untrusted, %s sent %d requests to the repository's server", name, len(got))
		}
		if strings.Count(r.stderr, warning) != 1 {
			t.Errorf("untrusted, %s: stderr %q; want the warning once:\n%s", name, r.stderr, warning)
		}
		if strings.Contains(r.stdout+r.stderr, "Ab3dEf6h") {
			t.Errorf("%s printed the key", name)
		}
	}

	r := f.run("trust")
	// The digest depends on the server's port.
	r.stdout = regexp.MustCompile(`sha256 [0-9a-f]{12}`).ReplaceAllString(r.stdout, "sha256 DIGEST")
	f.check("trust", r, cli.ExitOK)
	for name, run := range commands {
		r := run()
		got := net.to(attacker)
		if len(got) == 0 || got[0].authorization != "Bearer "+key {
			t.Errorf("trusted, %s sent %v to the repository's server; want the user's requests", name, got)
		}
		if strings.Contains(r.stderr, "ignoring") {
			t.Errorf("trusted, %s still warns: %s", name, r.stderr)
		}
		if name == "search json" && !json.Valid([]byte(r.stdout)) {
			t.Errorf("search --json printed %q; want one JSON document", r.stdout)
		}
	}
	f.check("trust_list", f.run("trust", "--list"), cli.ExitOK)

	// The file changes: it is no longer trusted.
	f.writeFile(repoFile, "# changed by a pull\nmemory: {base_url: "+srv.BaseURL()+"}\n")
	for name, run := range commands {
		r := run()
		if got := net.to(attacker); len(got) != 0 {
			t.Errorf("changed, %s sent %d requests to the repository's server", name, len(got))
		}
		if !strings.Contains(r.stderr, "forgemem: ignoring memory.base_url in "+repoFile+": the file changed since you trusted it") {
			t.Errorf("changed, %s: stderr %q", name, r.stderr)
		}
		if name == "search json" && !strings.HasPrefix(r.stderr, "forgemem: ignoring") {
			t.Errorf("search --json: stderr %q; want the warning on stderr first", r.stderr)
		}
	}
	f.check("trust_list_changed", f.run("trust", "--list"), cli.ExitOK)
	f.check("trust_revoke", f.run("trust", "--revoke"), cli.ExitOK)
	f.check("trust_revoke_again", f.run("trust", "--revoke"), cli.ExitOK)
	f.check("trust_list_none", f.run("trust", "--list"), cli.ExitOK)
}

// enabled: true in a repository does not turn memory back on where the
// user turned it off.
func TestRepositoryCannotTurnMemoryBackOn(t *testing.T) {
	f := newFixture(t)
	f.seed()
	f.writeFile(filepath.Join(f.home, ".forge", "config.yaml"), "memory:\n  enabled: false\n")
	f.writeFile(filepath.Join(f.repo, ".forge", "config.yaml"), "memory:\n  enabled: true\n")
	r := f.runIn(t.Context(), f.repo, conversation("How do we lock user rows?"), "recall")
	if r.code != cli.ExitOK || r.stdout != "" || !strings.Contains(r.stderr, "memory is turned off here") ||
		!strings.Contains(r.stderr, "forgemem: ignoring memory.enabled in ") || !strings.Contains(r.stderr, "cannot turn memory on") {
		t.Errorf("recall: exit %d, stdout %q, stderr %q; want nothing recalled, and why", r.code, r.stdout, r.stderr)
	}
}

// A repository's settings file that is a symbolic link is refused with an
// error saying what to do.
func TestRepositorySettingsLinkIsRefused(t *testing.T) {
	f := newFixture(t)
	if err := mkSymlink("/dev/zero", filepath.Join(f.repo, ".forge", "config.yaml")); err != nil {
		t.Skip("no symbolic links:", err)
	}
	r := f.run("list")
	if r.code != cli.ExitFailure || !strings.Contains(r.stderr, "config.yaml: cannot read the settings file: a symbolic link, which is never followed; a repository's settings file must be a regular file") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestTrustUsage(t *testing.T) {
	f := newFixture(t)
	for _, tt := range []struct {
		name string
		dir  string
		args []string
		code int
		says string
	}{
		{"list with a file", f.repo, []string{"trust", "--list", "x.yaml"}, cli.ExitUsage, "--list takes no file"},
		{"outside a repository", f.root, []string{"trust"}, cli.ExitUsage, "not inside a git repository"},
		{"missing file", f.repo, []string{"trust"}, cli.ExitFailure, "does not exist; there is nothing to trust"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := f.runIn(t.Context(), tt.dir, "", tt.args...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.says) {
				t.Errorf("exit %d, stderr %q; want %d saying %q", r.code, r.stderr, tt.code, tt.says)
			}
		})
	}
	// A file that does not load is not trusted.
	f.writeFile(filepath.Join(f.repo, ".forge", "config.yaml"), "memory:\n  provder: openai\n")
	r := f.run("trust")
	if r.code != cli.ExitFailure || !strings.Contains(r.stderr, "is not trusted:") || !strings.Contains(r.stderr, "did you mean memory.provider?") {
		t.Errorf("a bad file: exit %d, stderr %q", r.code, r.stderr)
	}
	// A named file, relative to the working directory.
	f.writeFile(filepath.Join(f.repo, "team.yaml"), "memory:\n  retrieval_top_k: 3\n")
	if r := f.run("trust", "team.yaml"); r.code != 0 || !strings.Contains(r.stdout, "It sets nothing that needs trust") {
		t.Errorf("trust team.yaml: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// forgemem help settings lists every setting with its flag, variable and
// trust; the root's and the commands' help point to it.
func TestHelpSettings(t *testing.T) {
	f := newFixture(t)
	r := f.run("help", "settings")
	f.check("help_settings", r, cli.ExitOK)
	for _, args := range [][]string{{"--help"}, {"search", "--help"}, {"recall", "--help"}, {"config", "--help"}} {
		if r := f.run(args...); !strings.Contains(r.stdout, `"forgemem help settings" lists them`) {
			t.Errorf("forgemem %v does not point to forgemem help settings", args)
		}
	}
}

// config shows the retrieval mode in effect with the fake provider, and why.
func TestConfigShowsTheModeInEffect(t *testing.T) {
	f := newFixture(t)
	r := f.run("config")
	for _, line := range strings.Split(r.stdout, "\n") {
		if fields := strings.Fields(line); len(fields) > 0 && fields[0] == "memory.retrieval_mode" {
			if want := "memory.retrieval_mode identity the fake provider always retrieves in identity mode (set to llm by default)"; strings.Join(fields, " ") != want {
				t.Errorf("config says %q; want %q", line, want)
			}
			return
		}
	}
	t.Errorf("config lacks memory.retrieval_mode:\n%s", r.stdout)
}

// mkSymlink makes link, and its folder, point at target.
func mkSymlink(target, link string) error {
	if err := os.MkdirAll(filepath.Dir(link), 0o750); err != nil {
		return err
	}
	return os.Symlink(target, link)
}

// plantingEmbedder embeds the text target as if it were the text as: what
// a repository's author would use to make the cache they commit.
type plantingEmbedder struct {
	*fake.Embedder
	target, as string
}

func (p plantingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	texts = slices.Clone(texts)
	for i, t := range texts {
		if strings.TrimSpace(t) == p.target {
			texts[i] = p.as
		}
	}
	return p.Embedder.Embed(ctx, texts)
}

// TestRepositoryCannotPlantTheCache: a repository commits its .cache
// folder, made so that one of its memories matches a turn about something
// else. A library engine without a cache secret would inject it; recall
// and search, whose engines name the cache's files after the user's key,
// neither read nor change the planted files, and the memory stays out.
func TestRepositoryCannotPlantTheCache(t *testing.T) {
	const prompt = "Which colour palette should the dashboard charts use in dark mode?"
	const target = "Migrations live in db/migrations, one file per change."
	f := newFixture(t)
	f.seed()
	repoOnly, err := memcore.NewFileStore(f.repoDir(), "", memcore.FileStoreConfig{})
	if err != nil {
		t.Fatal(err)
	}
	newEmb := func() *fake.Embedder {
		e, err := fake.NewEmbedder(fake.EmbedderConfig{})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	cfg := memretrieve.DefaultConfig()
	cfg.Mode = memretrieve.ModeIdentity
	engine := func(emb memcore.Embedder) *memretrieve.Engine {
		e, err := memretrieve.NewEngine(repoOnly, emb, nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Rebuild(t.Context()); err != nil {
			t.Fatal(err)
		}
		return e
	}
	// The author's build leaves the planted files in the repository's
	// .cache folder.
	engine(plantingEmbedder{Embedder: newEmb(), target: target, as: prompt})
	cacheDir := filepath.Join(f.repoDir(), memretrieve.CacheDirName)
	planted := make(map[string][]byte)
	entries, err := os.ReadDir(cacheDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if data, err := os.ReadFile(filepath.Join(cacheDir, e.Name())); err == nil && e.Name() != ".gitignore" {
			planted[e.Name()] = data
		}
	}
	if len(planted) < 2 {
		t.Fatalf("the author's build left %d files, want the vectors and the calibration", len(planted))
	}
	// They work on an engine without a secret.
	res, err := engine(newEmb()).Retrieve(t.Context(), "", []memcore.Message{{Role: memcore.RoleUser, Content: prompt}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(res.Memories, func(r memretrieve.Recalled) bool { return r.Memory.Content == target }) {
		t.Fatalf("an engine without a secret injected %d memories, not the planted one: the plant does not work", len(res.Memories))
	}

	// recall injects only what passes the gate; search lists every memory,
	// and must not call the planted one strong.
	r := f.runIn(t.Context(), f.repo, conversation(prompt), "recall")
	if r.code != cli.ExitOK || strings.Contains(r.stdout, target) {
		t.Errorf("recall: exit %d, printed\n%s\nwant exit 0 without the planted memory (stderr %q)", r.code, r.stdout, r.stderr)
	}
	r = f.run("search", prompt, "--json")
	var found struct {
		Hits []struct {
			Memory struct{ Content string }
			Strong bool
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &found); err != nil || r.code != cli.ExitOK {
		t.Fatalf("search --json: exit %d, %v, stderr %q", r.code, err, r.stderr)
	}
	for _, h := range found.Hits {
		if h.Memory.Content == target && h.Strong {
			t.Errorf("search called the planted memory strong:\n%s", r.stdout)
		}
	}
	for name, data := range planted {
		if got, err := os.ReadFile(filepath.Join(cacheDir, name)); err != nil || !bytes.Equal(got, data) {
			t.Errorf("the planted %s was changed or removed (%v)", name, err)
		}
	}
}
