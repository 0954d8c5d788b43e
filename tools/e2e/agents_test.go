//go:build unix

package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcapture"
	"github.com/forgemem/forgemem/memretrieve"
	"github.com/forgemem/forgemem/tools/internal/fakemodel"
)

// requireAgentE2E names the environment variable that, set to a non-empty
// value, makes the agents' tests fail rather than skip when an agent cannot
// run here. scripts/test sets it.
const requireAgentE2E = "REQUIRE_AGENT_E2E"

// agentTimeout bounds one run of an agent: a turn against the fake model
// takes a few seconds; a hung agent fails the test instead of stalling it.
const agentTimeout = 3 * time.Minute

// captureBound bounds the wait for a queued capture's pass, on a loaded
// machine: the pass itself takes milliseconds against the fake model.
const captureBound = 2 * time.Minute

// realAgent skips a test that runs a real agent in -short mode: it takes
// seconds to a minute.
func realAgent(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs a real agent: not with -short")
	}
}

// cannotRun skips the test with reason, or fails it when requireAgentE2E
// is set.
func cannotRun(t *testing.T, reason string) {
	t.Helper()
	if os.Getenv(requireAgentE2E) == "" {
		t.Skipf("%s (set %s=1 to make this a failure, as scripts/test does)", reason, requireAgentE2E)
	}
	t.Fatal(reason)
}

// npmPackage returns the folder of an npm package installed in tools/e2e
// (npm ci), after checking that it is the version package.json pins.
func npmPackage(t *testing.T, name string) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join(nodeDir, "node_modules", filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	var installed struct{ Version string }
	data, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err == nil {
		err = json.Unmarshal(data, &installed)
	}
	if err != nil {
		cannotRun(t, fmt.Sprintf("%s is not installed: run npm ci in tools/e2e (scripts/test does): %v", name, err))
	}
	if want := pinnedVersion(t, name); installed.Version != want {
		t.Fatalf("%s %s is installed, package.json pins %s: run npm ci in tools/e2e", name, installed.Version, want)
	}
	return dir
}

// pinnedVersion is the version of an npm package that tools/e2e's
// package.json pins.
func pinnedVersion(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(nodeDir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct{ Dependencies map[string]string }
	if err := json.Unmarshal(data, &pkg); err != nil {
		t.Fatal(err)
	}
	v, ok := pkg.Dependencies[name]
	if !ok {
		t.Fatalf("package.json does not pin %s", name)
	}
	return v
}

// nodeBin returns the command npm installed for a package (node_modules/.bin),
// which runs with node: the test needs node.
func nodeBin(t *testing.T, pkg, command string) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		cannotRun(t, fmt.Sprintf("node is not installed: %s runs on Node.js", pkg))
	}
	npmPackage(t, pkg)
	path, err := filepath.Abs(filepath.Join(nodeDir, "node_modules", ".bin", command))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s installed no %s command: %v", pkg, command, err)
	}
	return path
}

// npmArch is Node.js's name of the machine's architecture, as npm's
// platform packages are named.
func npmArch() string {
	switch runtime.GOARCH {
	case "amd64":
		return "x64"
	default:
		return runtime.GOARCH
	}
}

// machine is a person's computer for one agent test: a home folder, a git
// repository to work in, a folder of commands first on PATH (forgemem and
// the agent), and the fake model API every model call goes to, which is
// also the proxy that refuses everything outside 127.0.0.1.
type machine struct {
	t     *testing.T
	home  string
	repo  string
	bin   string
	model *fakemodel.Server
	// env is the environment every command runs with: nothing of the test
	// process's but PATH, and no real key.
	env []string
}

// newMachine starts the fake model with opts and makes the folders.
func newMachine(t *testing.T, opts fakemodel.Options) *machine {
	t.Helper()
	model, err := fakemodel.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(model.Close)
	home := t.TempDir()
	m := &machine{t: t, home: home, repo: filepath.Join(home, "project"), bin: filepath.Join(home, "bin"), model: model}
	for _, dir := range []string{m.repo, m.bin} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A real repository: Codex refuses to work outside one.
	if out, err := exec.Command("git", "init", "-q", m.repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	m.link("forgemem", binary)
	proxy := model.URL()
	// The recall server a prompt hook starts keeps its socket here: a
	// short path (a socket's is at most 107 bytes), of this test alone.
	tmp, err := os.MkdirTemp("", "fme2e")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	t.Cleanup(m.stopRecallServers) // before the folders go
	m.env = []string{
		"HOME=" + home,
		"TMPDIR=" + tmp,
		"PATH=" + m.bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"TERM=dumb",
		// Everything but 127.0.0.1 goes to the fake, which refuses it and
		// logs the host: no agent reaches the network.
		"HTTPS_PROXY=" + proxy, "HTTP_PROXY=" + proxy, "https_proxy=" + proxy, "http_proxy=" + proxy,
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
	}
	return m
}

// link puts a command on the machine's PATH.
func (m *machine) link(name, target string) {
	m.t.Helper()
	if err := os.Symlink(target, filepath.Join(m.bin, name)); err != nil {
		m.t.Fatal(err)
	}
}

// setenv adds variables to the machine's environment.
func (m *machine) setenv(kv ...string) { m.env = append(m.env, kv...) }

// writeFile writes a file of the machine, making its folder.
func (m *machine) writeFile(path, content string) {
	m.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		m.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		m.t.Fatal(err)
	}
}

// useFakeModelForMemory configures forgemem as a user with an
// OpenAI-compatible provider does (~/.forge/config.yaml), pointed at the
// fake: its classifier, hypothesis model and embedder.
func (m *machine) useFakeModelForMemory() {
	m.writeFile(filepath.Join(m.home, ".forge", "config.yaml"), fmt.Sprintf(`memory:
  provider: openai
  base_url: %s/v1
  classifier_model: fake-classifier
  retrieval_model: fake-hypotheses
  embedding_model: fake-embedder
  retrieval_timeout: 30s # a loaded test machine is not what these tests are about
`, m.model.URL()))
	m.setenv("OPENAI_API_KEY=test")
}

// run runs a command on the machine, in the repository, with no input,
// and returns its output (stdout and stderr). Its process group is killed
// if it outlives agentTimeout.
func (m *machine) run(name string, args ...string) (string, error) {
	m.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), agentTimeout)
	defer cancel()
	path := name
	if !strings.Contains(name, "/") {
		path = filepath.Join(m.bin, name)
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir, cmd.Env = m.repo, m.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("%s did not finish in %s: %w", name, agentTimeout, err)
	}
	return out.String(), err
}

// ok runs a command that must succeed and returns its output.
func (m *machine) ok(name string, args ...string) string {
	m.t.Helper()
	out, err := m.run(name, args...)
	if err != nil {
		m.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

// memoryJSON is a memory as forgemem's --json output gives it.
type memoryJSON struct {
	ID        string `json:"id"`
	Scope     string `json:"scope"`
	Category  string `json:"category"`
	Trigger   string `json:"trigger"`
	Content   string `json:"content"`
	Forgotten bool   `json:"forgotten"`
	Source    string `json:"source"`
	Status    string `json:"status"`
}

// remember writes a memory of the repository with forgemem remember and
// returns it.
func (m *machine) remember(text string) memoryJSON {
	m.t.Helper()
	var res struct{ Memory memoryJSON }
	out := m.ok("forgemem", "remember", text, "--scope", "repo", "--category", "project-conventions", "--json")
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Memory.ID == "" {
		m.t.Fatalf("forgemem remember --json: %v\n%s", err, out)
	}
	return res.Memory
}

// memories lists the current memories, those that wait for review too
// (forgemem list --pending --json).
func (m *machine) memories() []memoryJSON {
	m.t.Helper()
	var res struct{ Memories []memoryJSON }
	out := m.ok("forgemem", "list", "--pending", "--json")
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		m.t.Fatalf("forgemem list --json: %v\n%s", err, out)
	}
	return res.Memories
}

// memoryFolder is the repository's memory folder.
func (m *machine) memoryFolder() string { return filepath.Join(m.repo, ".forge", "memory") }

// hasMemory reports whether a memory file of the repository holds text.
// It reads the files, so that a test can poll it cheaply.
func (m *machine) hasMemory(text string) bool {
	files, _ := filepath.Glob(filepath.Join(m.memoryFolder(), "mem_*.md"))
	for _, f := range files {
		if data, err := os.ReadFile(f); err == nil && bytes.Contains(data, []byte(text)) {
			return true
		}
	}
	return false
}

// workerLog is the capture worker's log, "" when there is none.
func (m *machine) workerLog() string {
	data, _ := os.ReadFile(filepath.Join(m.memoryFolder(), ".spool", "worker.log"))
	return string(data)
}

// poll calls done until it reports true, for at most bound; it reports
// whether done did.
func poll(bound time.Duration, done func() bool) bool {
	deadline := time.Now().Add(bound)
	for !done() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// waitWorkerGone waits until no process holds the capture queue's worker
// lock — the worker a hook started has run the queue and exited — so that
// nothing writes in the machine's folders when the test removes them.
func (m *machine) waitWorkerGone() {
	m.t.Helper()
	f, err := os.OpenFile(filepath.Join(m.memoryFolder(), ".spool", "worker.lock"), os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return // no worker ever ran
	}
	if err != nil {
		m.t.Fatal(err)
	}
	defer f.Close()
	free := func() bool {
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
			return false
		}
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return true
	}
	if !poll(captureBound, free) {
		m.t.Fatalf("the capture worker still holds the queue after %s", captureBound)
	}
}

// stopRecallServers asks the recall server a prompt hook started, if
// any, to exit, and waits until it has, so that nothing writes in the
// machine's folders when the test removes them.
func (m *machine) stopRecallServers() {
	m.t.Helper()
	if _, err := m.run("forgemem", "recall-server", "--stop"); err != nil {
		m.t.Errorf("forgemem recall-server --stop: %v", err)
	}
	var tmp string
	for _, kv := range m.env {
		if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok {
			tmp = v
		}
	}
	locks, _ := filepath.Glob(filepath.Join(tmp, "forgemem-*", "*", "lock"))
	for _, path := range locks {
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			continue
		}
		free := func() bool {
			if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
				return false
			}
			_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
			return true
		}
		if !poll(captureBound, free) {
			m.t.Errorf("a recall server still holds %s after %s", path, captureBound)
		}
		f.Close()
	}
}

// noOutsideRequests fails the test if an agent tried to reach a host other
// than 127.0.0.1 (through the proxy, which refused it): its settings for
// telemetry, updates and the like are not what they should be.
func (m *machine) noOutsideRequests() {
	m.t.Helper()
	var hosts []string
	for _, r := range m.model.Requests() {
		if r.API == fakemodel.APIProxy {
			hosts = append(hosts, r.Method+" "+r.Host)
		}
	}
	if len(hosts) > 0 {
		m.t.Errorf("the agent tried to reach the network (refused): %v", hosts)
	}
}

// unknownRequests fails the test for every request the fake did not know:
// an endpoint of a model API it does not serve.
func (m *machine) unknownRequests() {
	m.t.Helper()
	for _, r := range m.model.RequestsOf(fakemodel.APIOther) {
		m.t.Errorf("the fake model got a request it does not serve: %s %s?%s\n%s", r.Method, r.Path, r.RawQuery, r.Body)
	}
}

// rule is one thing the fake classifier extracts: when a conversation
// holds the phrase, the memory content (once: not when it is already among
// the memories the prompt lists).
type rule struct{ when, content string }

// classifier answers forgemem's chat completions as its models would: the
// capture classifier with the first rule that matches the conversation
// and is not remembered yet, and the hypothesis model with the user's
// latest line.
func classifier(rules ...rule) fakemodel.Script {
	return func(r *fakemodel.Request) fakemodel.Reply {
		text := strings.Join(r.UserTexts(), "\n")
		switch r.Schema {
		case memcapture.ClassifierSchemaName:
			listed, rest, _ := strings.Cut(text, "CONVERSATION (oldest first):")
			conv, added, _ := strings.Cut(rest, "\nMEMORIES ADDED SINCE")
			items := []any{}
			for _, ru := range rules {
				if strings.Contains(conv, ru.when) && !strings.Contains(listed+added, ru.content) {
					items = append(items, map[string]any{"content": ru.content, "scope": "repo", "category": "project-conventions", "supersedes": "", "related": []any{},
						"evidence": map[string]any{"messages": []int{}, "quote": ru.when}})
					break
				}
			}
			return replyJSON(map[string]any{"memories": items})
		case memretrieve.HypothesisSchemaName:
			lines := strings.Split(strings.TrimSpace(text), "\n")
			return replyJSON(map[string]any{"hypotheses": []string{lines[len(lines)-1]}})
		}
		return fakemodel.Say("{}")
	}
}

// classifierRequests are the capture classifier's requests the fake got.
func (m *machine) classifierRequests() []*fakemodel.Request {
	var out []*fakemodel.Request
	for _, r := range m.model.RequestsOf(fakemodel.APIChat) {
		if r.Schema == memcapture.ClassifierSchemaName {
			out = append(out, r)
		}
	}
	return out
}

func replyJSON(v any) fakemodel.Reply {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return fakemodel.Say(string(b))
}

// steps scripts an agent's model turn by turn in one session: the reply to
// a request that carries n tool results is steps[n](request); past the
// last step, the model says "Done.".
func steps(replies ...func(r *fakemodel.Request) fakemodel.Reply) fakemodel.Script {
	return func(r *fakemodel.Request) fakemodel.Reply {
		if n := len(r.Results()); n < len(replies) {
			return replies[n](r)
		}
		return fakemodel.Say("Done.")
	}
}

// call is a step that calls the offered tool whose name ends with name
// (the agent prefixes its MCP server's name) with args.
func call(name string, args map[string]any) func(r *fakemodel.Request) fakemodel.Reply {
	return func(r *fakemodel.Request) fakemodel.Reply {
		full := r.Tool(name)
		if full == "" {
			return fakemodel.Say(fmt.Sprintf("The tool %s is not offered: %v", name, r.Tools))
		}
		return fakemodel.Call(full, args)
	}
}

// snippet returns the first code block of the language lang under the
// section heading of docs/INTEGRATIONS.md: the set-up the user follows.
func snippet(t *testing.T, heading, lang string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "INTEGRATIONS.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## "+heading+"\n")
	if ok {
		section, _, _ = strings.Cut(section, "\n## ")
		_, block, found := strings.Cut(section, "```"+lang+"\n")
		if found {
			block, _, _ = strings.Cut(block, "```")
			return block
		}
	}
	t.Fatalf("docs/INTEGRATIONS.md has no %s block under ## %s", lang, heading)
	return ""
}

// The agents' versions that docs/INTEGRATIONS.md says were tested are
// those package.json pins.
func TestDocsNameTheTestedVersions(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "INTEGRATIONS.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"@anthropic-ai/claude-code", "@openai/codex", "@google/gemini-cli"} {
		want := pkg + " " + pinnedVersion(t, pkg)
		if !strings.Contains(string(data), want) {
			t.Errorf("docs/INTEGRATIONS.md does not name %q, the version tools/e2e tests", want)
		}
	}
}

// The memory tools' check for the agents that offer MCP tools to the
// model as they are, or behind a tool search (Codex, Gemini CLI): the
// scripted model calls memory_recall, then memory_remember, then answers.
const rememberedByTheModel = "Tests are table-driven, with t.Run subtests."

// memoryTools are the tools forgemem's MCP server offers.
var memoryTools = []string{"memory_recall", "memory_search", "memory_remember", "memory_show", "memory_forget", "memory_list"}

// memoryToolsScript is the model's script of checkMemoryTools; before it
// the model takes the steps of first (a tool search).
func memoryToolsScript(first ...func(*fakemodel.Request) fakemodel.Reply) fakemodel.Script {
	return steps(append(first,
		call("memory_recall", map[string]any{"query": "how do we wrap errors here?"}),
		call("memory_remember", map[string]any{"content": rememberedByTheModel, "scope": "repo", "category": "project-conventions"}),
	)...)
}

// checkMemoryTools checks a session run with memoryToolsScript, whose
// first searches steps were tool searches: the agent offered the model
// the memory_* tools (once searched for), the result of each call came
// back in the model's next request (the recall holding the memory
// remembered beforehand, seed), and the remembered memory is in the store.
func checkMemoryTools(t *testing.T, m *machine, api fakemodel.API, searches int, seed memoryJSON) {
	t.Helper()
	reqs := m.model.RequestsOf(api)
	if len(reqs) < searches+3 {
		t.Fatalf("the agent made %d model requests, want %d (%d tool searches, recall, remember, answer)", len(reqs), searches+3, searches)
	}
	offered := reqs[searches]
	for _, tool := range memoryTools {
		if !offered.HasTool(tool) {
			t.Errorf("the agent does not offer the model %s: %v", tool, offered.Tools)
		}
	}
	for k, want := range [][]string{{seed.ID, seed.Content}, {"mem_"}} {
		r := requestWithResults(reqs, searches+k+1)
		if r == nil {
			t.Fatalf("no request carried the result of call %d back to the model", searches+k+1)
		}
		ex := r.Exchanges()
		last := ex[len(ex)-1]
		for _, w := range want {
			if last.Result == nil || last.Result.IsError || !strings.Contains(last.Result.Text, w) {
				t.Errorf("call %d, %s %s: result %+v, want one holding %q", searches+k+1, last.Call.Name, last.Call.Args, last.Result, w)
			}
		}
	}
	found := false
	for _, mem := range m.memories() {
		found = found || (mem.Content == rememberedByTheModel && mem.Trigger == "manual")
	}
	if !found {
		t.Errorf("forgemem list has no memory %q after the model remembered it", rememberedByTheModel)
	}
}
