package main_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/fakeopenai"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/spool"
	"github.com/forgemem/forgemem/memcapture"
	"github.com/forgemem/forgemem/memretrieve"
)

// binary is the forgemem command, built once by TestMain.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "forgemem-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "forgemem")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building forgemem: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// The models the settings name; the scripted server checks that each
// request names the right one.
const (
	classifierModel = "gpt-test-classifier"
	hypothesisModel = "gpt-test-hyde"
	embeddingModel  = "test-embedding"
)

// remember is a memory the scripted classifier keeps once a phrase is in
// the conversation.
type remember struct {
	// when is the phrase of the user's that makes the memory worth keeping.
	when     string
	content  string
	scope    string
	category string
	// supersedes, when set, is a phrase of the existing memory (in the
	// classifier's lists of existing memories) that this one changes.
	supersedes string
	// contradicts, when set, is a phrase of an existing memory this one
	// contradicts.
	contradicts string
}

// listedID matches a line of the lists of existing memories: "- [id] (scope/category) text".
var listedID = regexp.MustCompile(`(?m)^- \[(mem_[0-9a-f-]{36})\] \([a-z-]+/[a-z-]+\) (.*)$`)

// model plays the models of a session: the capture classifier (reading the
// conversation and the list of existing memories the way a model would),
// the hypothesis model of retrieval (it writes the user's last message as
// a hypothesis), and the chat model.
type model struct {
	t     *testing.T
	rules []remember
}

func (m *model) reply(req fakeopenai.ChatRequest) string {
	switch req.SchemaName {
	case memcapture.ClassifierSchemaName:
		if req.Model != classifierModel {
			m.t.Errorf("the classifier was asked with model %q, want %q", req.Model, classifierModel)
		}
		return m.classify(req.Messages[len(req.Messages)-1].Content)
	case memretrieve.HypothesisSchemaName:
		if req.Model != hypothesisModel {
			m.t.Errorf("the hypotheses were asked with model %q, want %q", req.Model, hypothesisModel)
		}
		conv := req.Messages[len(req.Messages)-1].Content
		i := strings.LastIndex(conv, "User: ")
		last := strings.TrimSpace(strings.SplitN(conv[i+len("User: "):], "\n", 2)[0])
		b, _ := json.Marshal(map[string]any{"hypotheses": []string{last}})
		return string(b)
	}
	return "Done."
}

// classify answers the classifier's user message: the existing memories,
// the conversation, then the memories added since the first list was made.
func (m *model) classify(prompt string) string {
	listed, rest, _ := strings.Cut(prompt, "CONVERSATION (oldest first):")
	conv, added, _ := strings.Cut(rest, "\nMEMORIES ADDED SINCE")
	existing := listed + added
	find := func(phrase string) string {
		for _, l := range listedID.FindAllStringSubmatch(existing, -1) {
			if strings.Contains(l[2], phrase) {
				return l[1]
			}
		}
		return ""
	}
	items := []map[string]any{}
	for _, r := range m.rules {
		if !strings.Contains(conv, r.when) || strings.Contains(existing, firstWords(r.content)) {
			continue
		}
		item := map[string]any{"content": r.content, "scope": r.scope, "category": r.category, "supersedes": "", "related": []any{},
			"evidence": map[string]any{"messages": []int{}, "quote": userQuote(conv, r.when)}}
		if r.supersedes != "" {
			item["supersedes"] = find(r.supersedes)
		}
		if r.contradicts != "" {
			if id := find(r.contradicts); id != "" {
				item["related"] = []any{map[string]any{"id": id, "relationship": "contradicts"}}
			}
		}
		items = append(items, item)
	}
	b, _ := json.Marshal(map[string]any{"memories": items})
	return string(b)
}

// userQuote is the evidence a classifier quotes for a memory it found by
// phrase: the text of the user's message that holds it.
func userQuote(conv, phrase string) string {
	for _, line := range strings.Split(conv, "\n") {
		if _, text, ok := strings.Cut(line, "] User: "); ok && strings.Contains(text, phrase) {
			return text
		}
	}
	return phrase
}

// firstWords is the beginning of a memory, as the list shows it.
func firstWords(s string) string { return s[:min(40, len(s))] }

// world is a person's machine: a home folder with forgemem's settings
// pointing at the scripted server, and repositories.
type world struct {
	t    *testing.T
	home string
	srv  *fakeopenai.Server
	// env is added to the environment of every command.
	env []string
	// bin, when set, is the forgemem binary the commands run instead of
	// binary: one installed elsewhere.
	bin string
}

func newWorld(t *testing.T, rules ...remember) *world {
	t.Helper()
	return newWorldWith(t, (&model{t: t, rules: rules}).reply)
}

// captureKey is the world's user's capture key, which signs the entries
// its hooks queue.
func (w *world) captureKey() spool.Key {
	w.t.Helper()
	k, err := spool.LoadKey(filepath.Join(w.home, ".forge", "memory"))
	if err != nil {
		w.t.Fatal(err)
	}
	return k
}

// newWorldWith is newWorld with the models' replies given.
func newWorldWith(t *testing.T, reply fakeopenai.ReplyFunc) *world {
	t.Helper()
	w := &world{t: t, home: t.TempDir()}
	srv, err := fakeopenai.Start(reply)
	if err != nil {
		t.Fatal(err)
	}
	w.srv = srv
	t.Cleanup(srv.Close)
	writeFile(t, filepath.Join(w.home, ".forge", "config.yaml"), fmt.Sprintf(`memory:
  provider: openai
  base_url: %s
  classifier_model: %s
  retrieval_model: %s
  embedding_model: %s
  retrieval_timeout: 30s # a loaded test machine is not what these tests are about
`, w.srv.BaseURL(), classifierModel, hypothesisModel, embeddingModel))
	return w
}

// repo makes a repository (a folder holding .git).
func (w *world) repo(name string) string {
	w.t.Helper()
	dir := filepath.Join(w.t.TempDir(), name)
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o750); err != nil {
		w.t.Fatal(err)
	}
	return dir
}

// run runs the built command in dir with stdin and returns its output and
// exit code. The environment is the world's only: its home folder and the
// API key, nothing of the test process's.
func (w *world) run(dir, stdin string, args ...string) (stdout, stderr string, code int) {
	w.t.Helper()
	bin := binary
	if w.bin != "" {
		bin = w.bin
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"HOME=" + w.home, "PATH=" + os.Getenv("PATH"), "OPENAI_API_KEY=sk-test-e2e-key"}, w.env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		w.t.Fatalf("running forgemem %v: %v", args, err)
	}
	return out.String(), errOut.String(), code
}

// ok runs a command that must succeed and returns its output.
func (w *world) ok(dir, stdin string, args ...string) string {
	w.t.Helper()
	out, errOut, code := w.run(dir, stdin, args...)
	if code != 0 {
		w.t.Fatalf("forgemem %v: exit %d\n%s", args, code, errOut)
	}
	return out
}

// session is one agent session in dir: the conversation is captured, as
// the agent's capture pipeline would after its turns.
func (w *world) session(dir string, msgs ...string) string {
	w.t.Helper()
	return w.ok(dir, conversation(msgs...), "capture", "-")
}

// recall is the block an agent gets in dir for a user's message.
func (w *world) recall(dir, user string) string {
	w.t.Helper()
	return w.ok(dir, conversation(user), "recall")
}

// conversation writes alternating user and assistant messages as JSON
// Lines; a message starting with "tool:" is a tool message.
func conversation(msgs ...string) string {
	var b strings.Builder
	for i, m := range msgs {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		if rest, ok := strings.CutPrefix(m, "tool:"); ok {
			role, m = "tool", rest
		}
		line, _ := json.Marshal(map[string]string{"role": role, "content": m})
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// contains fails the test unless s holds every one of want.
func contains(t *testing.T, what, s string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("%s does not hold %q:\n%s", what, w, s)
		}
	}
}

// onDisk returns every file under the dirs, concatenated.
func onDisk(t *testing.T, dirs ...string) string {
	t.Helper()
	var b strings.Builder
	for _, d := range dirs {
		err := filepath.WalkDir(d, func(path string, e os.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			data, err := os.ReadFile(path)
			b.Write(data)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}
