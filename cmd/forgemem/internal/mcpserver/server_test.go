package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/fakeopenai"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/golden"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/mcpserver"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/workspace"
	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/settings"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fixture is a repository and a home folder, a server over them, and a
// client session connected to it in process.
type fixture struct {
	t       *testing.T
	session *mcp.ClientSession
	// other is a store over the same folders: another process.
	other *memcore.FileStore
}

// newFixture is a fixture with review off: an agent's memories are in
// force at once, for the tests of what the tools do with them
// (TestNoToolChangesAWaitingMemory tests them under the default review).
func newFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixtureEnv(t, "FORGEMEM_REVIEW=off")
}

// newFixtureEnv is newFixture with the settings' environment variables env
// (FORGEMEM_*, API keys).
func newFixtureEnv(t *testing.T, env ...string) *fixture {
	t.Helper()
	ws, other := newWorkspace(t, env...)
	ctx, cancel := context.WithCancel(context.Background())
	serverT, clientT := mcp.NewInMemoryTransports()
	srv := mcpserver.New(ws, mcpserver.Options{Version: "test", SessionID: "mcp-test"})
	served := make(chan error, 1)
	go func() { served <- srv.Run(ctx, serverT) }()
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	session, err := client.Connect(ctx, clientT, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = session.Close()
		cancel()
		<-served
	})
	return &fixture{t: t, session: session, other: other}
}

// newWorkspace opens a workspace over a new repository and home folder,
// with the settings' environment variables env, and returns it with a
// store over the same folders: another process.
func newWorkspace(t *testing.T, env ...string) (*workspace.Workspace, *memcore.FileStore) {
	t.Helper()
	root := t.TempDir()
	repo, home := filepath.Join(root, "repo"), filepath.Join(root, "home")
	for _, d := range []string{filepath.Join(repo, ".git"), home} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			t.Fatal(err)
		}
	}
	// Without env, the fake provider: offline, the hashing embedder,
	// identity retrieval.
	s, err := settings.Load(settings.Options{WorkDir: repo, Home: home, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(s, workspace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.Close(context.Background()) })
	other, err := memcore.NewFileStore(s.Paths.RepoDir, s.Paths.UserDir, memcore.FileStoreConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return ws, other
}

// call calls a tool, failing the test on a protocol error, and returns its
// text and whether it is an error result.
func (f *fixture) call(name string, args map[string]any) (text string, isError bool, structured map[string]any) {
	f.t.Helper()
	res, err := f.session.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		f.t.Fatalf("%s(%v): a protocol error, want a tool result: %v", name, args, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok {
			f.t.Fatalf("%s: content %T, want text", name, c)
		}
		b.WriteString(tc.Text)
	}
	if res.StructuredContent != nil {
		data, err := json.Marshal(res.StructuredContent)
		if err != nil {
			f.t.Fatal(err)
		}
		if err := json.Unmarshal(data, &structured); err != nil {
			f.t.Fatalf("%s: structured content is not an object: %s", name, data)
		}
	}
	return b.String(), res.IsError, structured
}

// ok calls a tool that must succeed.
func (f *fixture) ok(name string, args map[string]any) (string, map[string]any) {
	f.t.Helper()
	text, isErr, st := f.call(name, args)
	if isErr {
		f.t.Fatalf("%s(%v) failed: %s", name, args, text)
	}
	return text, st
}

// memIDs matches whole memory ids.
var memIDs = regexp.MustCompile(`mem_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

func contains(t *testing.T, what, s string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("%s does not hold %q:\n%s", what, w, s)
		}
	}
}

// The tool list is what a client's model reads: every tool with its
// description and input schema (testdata/tools.golden.json; go test
// -update rewrites it).
func TestToolList(t *testing.T) {
	f := newFixture(t)
	res, err := f.session.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
		if len(tl.Description) < 100 {
			t.Errorf("%s: a description of %d characters is too short to tell a model when to call it", tl.Name, len(tl.Description))
		}
	}
	if got := strings.Join(names, " "); got != "memory_forget memory_list memory_recall memory_remember memory_search memory_show" {
		t.Errorf("tools = %s", got)
	}
	data, err := json.MarshalIndent(res.Tools, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "tools.golden.json"), append(data, '\n'))
}

// The server offers tools and logging, and announces no tool list
// changes: its tools never change, and a client must get nothing before
// its initialize is answered (the SDK sends a list change for tools added
// before a client connected, a few milliseconds later, whenever the
// capability is on).
func TestCapabilities(t *testing.T) {
	f := newFixture(t)
	caps := f.session.InitializeResult().Capabilities
	if caps == nil || caps.Tools == nil || caps.Logging == nil {
		t.Fatalf("capabilities %+v, want tools and logging", caps)
	}
	if caps.Tools.ListChanged {
		t.Error("the server announces tool list changes; its tools never change")
	}
}

// A model's session: it remembers, searches, recalls, changes a memory,
// reads its history, and forgets it.
func TestRememberSearchRecallSupersedeShowForget(t *testing.T) {
	f := newFixture(t)
	text, st := f.ok("memory_remember", map[string]any{
		"content": "Use pessimistic locking (SELECT … FOR UPDATE) for user updates.", "scope": "repo", "category": "architectural-decisions",
	})
	contains(t, "memory_remember", text, "Remembered as mem_", "(repo/architectural-decisions, version 1)")
	first := st["memory"].(map[string]any)["id"].(string)
	if memIDs.FindString(text) != first {
		t.Errorf("the text names %s, the structured result %s", memIDs.FindString(text), first)
	}
	f.ok("memory_remember", map[string]any{"content": "Prefers table-driven tests.", "scope": "user", "category": "coding-preferences"})

	text, st = f.ok("memory_search", map[string]any{"query": "locking user updates", "limit": 1})
	contains(t, "memory_search", text, "1 memory matching", first, "relevance", "strong", "SELECT … FOR UPDATE")
	if hits := st["hits"].([]any); len(hits) != 1 {
		t.Errorf("%d hits, want the limit, 1", len(hits))
	}

	text, st = f.ok("memory_recall", map[string]any{"query": "how should user updates lock rows?"})
	contains(t, "memory_recall", text, "<recalled_memories>", "pessimistic locking")
	if ids := st["ids"].([]any); len(ids) == 0 || ids[0] != first {
		t.Errorf("recalled ids %v, want %s first", ids, first)
	}

	text, st = f.ok("memory_remember", map[string]any{
		"content": "Use optimistic locking with a version column for user updates: row locks caused timeouts.",
		"scope":   "repo", "category": "architectural-decisions", "supersedes": first[:12],
	})
	contains(t, "superseding", text, "version 2", "It supersedes "+first)
	second := st["memory"].(map[string]any)["id"].(string)

	text, _ = f.ok("memory_show", map[string]any{"id": second})
	contains(t, "memory_show", text, second, "version 2 of 2", "Status: current.", "optimistic locking",
		"Version history, oldest first:", "- version 1, "+first, "SELECT … FOR UPDATE", "- version 2, "+second+", ", "(this one)")
	text, _ = f.ok("memory_show", map[string]any{"id": first})
	contains(t, "memory_show of the old version", text, "an earlier version; the current one is "+second)

	text, _ = f.ok("memory_recall", map[string]any{"query": "how should user updates lock rows?"})
	contains(t, "memory_recall after the change", text, "optimistic locking", "version 2", "History")

	text, _ = f.ok("memory_forget", map[string]any{"id": second, "reason": "we moved to an event log (ADR 12)"})
	contains(t, "memory_forget", text, "Forgot "+second, "history is kept")
	text, _ = f.ok("memory_forget", map[string]any{"id": second})
	contains(t, "memory_forget again", text, "already forgotten")

	text, _ = f.ok("memory_search", map[string]any{"query": "locking user updates"})
	if strings.Contains(text, "optimistic") {
		t.Errorf("a forgotten memory was found:\n%s", text)
	}
	text, _ = f.ok("memory_list", map[string]any{})
	contains(t, "memory_list", text, "1 memory, oldest first", "Prefers table-driven tests", "1 forgotten memory left out")
	text, _ = f.ok("memory_list", map[string]any{"scope": "repo"})
	contains(t, "memory_list of the repo scope", text, "No memories in scope repo")
	text, _ = f.ok("memory_show", map[string]any{"id": second})
	contains(t, "memory_show of the forgotten memory", text, "Status: forgotten; it is not recalled, searched or listed. Why it was forgotten: we moved to an event log (ADR 12).\n", "(forgets the memory)")
}

// Secrets given to memory_remember are redacted before the file is written.
func TestRememberRedacts(t *testing.T) {
	f := newFixture(t)
	key := "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
	text, st := f.ok("memory_remember", map[string]any{"content": "The staging key is " + key + ".", "scope": "user", "category": "user-facts"})
	contains(t, "memory_remember", text, "1 secret was replaced by [REDACTED]")
	path := st["memory"].(map[string]any)["path"].(string)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), key) || !strings.Contains(string(data), "[REDACTED]") {
		t.Errorf("the file holds:\n%s", data)
	}
}

// Bad input is a tool result with IsError and a message saying what to
// do, never a protocol error.
func TestBadInput(t *testing.T) {
	f := newFixture(t)
	_, st := f.ok("memory_remember", map[string]any{"content": "Prefers tabs.", "scope": "user", "category": "coding-preferences"})
	id := st["memory"].(map[string]any)["id"].(string)
	f.ok("memory_remember", map[string]any{"content": "Prefers spaces in YAML.", "scope": "user", "category": "coding-preferences"})

	tests := []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"memory_remember", map[string]any{"content": "x", "scope": "repo", "category": "opinions"},
			[]string{"argument category", "opinions", "category (one of \"coding-preferences\""}},
		{"memory_remember", map[string]any{"content": "  ", "scope": "repo", "category": "patterns"}, []string{"the text to remember is empty"}},
		{"memory_remember", map[string]any{"content": "x", "scope": "team", "category": "patterns"}, []string{"argument scope", "team", "\"repo\", \"user\""}},
		{"memory_remember", map[string]any{"content": "x"}, []string{"missing properties", "scope", "category"}},
		{"memory_remember", map[string]any{"content": "prefers TABS.", "scope": "user", "category": "coding-preferences"}, []string{"already remembered", id}},
		{"memory_remember", map[string]any{"content": "y", "scope": "repo", "category": "patterns", "supersedes": "mem_deadbeef"},
			[]string{"no memory has the id mem_deadbeef", "memory_search and memory_list give the ids"}},
		{"memory_remember", map[string]any{"content": "Prefers tabs, width 4.", "scope": "repo", "category": "coding-preferences", "supersedes": id},
			[]string{"a new version keeps its chain's scope (user)"}},
		{"memory_show", map[string]any{"id": "mem_0000"}, []string{"no memory has the id mem_0000"}},
		{"memory_show", map[string]any{"id": ""}, []string{"memory_show: invalid arguments: no memory id given", "It takes id (string of at most 128 characters, required)."}},
		{"memory_show", map[string]any{"id": "  "}, []string{"no memory id given", "It takes id (string of at most 128 characters, required)."}},
		{"memory_forget", map[string]any{"id": ""}, []string{"memory_forget: invalid arguments: no memory id given", "It takes id (string of at most 128 characters, required)"}},
		{"memory_show", map[string]any{}, []string{"missing properties", "id (string of at most 128 characters, required)"}},
		{"memory_show", map[string]any{"id": 42}, []string{"argument id", "want \"string\""}},
		{"memory_forget", map[string]any{"id": "not-an-id"}, []string{"no memory has the id not-an-id"}},
		{"memory_search", map[string]any{"query": ""}, []string{"memory_search: invalid arguments: the search text is empty", "It takes query (string of at most 8000 characters, required)"}},
		{"memory_search", map[string]any{"query": "tabs", "limit": 0}, []string{"memory_search: invalid arguments: limit is 0, want 1–100. It takes"}},
		{"memory_search", map[string]any{"query": "tabs", "limit": 101}, []string{"invalid arguments: limit is 101, want 1–100. It takes"}},
		{"memory_search", map[string]any{"query": "tabs", "limit": 1000}, []string{"invalid arguments: limit is 1000, want 1–100. It takes"}},
		{"memory_search", map[string]any{"query": "tabs", "limit": "ten"}, []string{"argument limit", "want \"integer\""}},
		{"memory_search", map[string]any{"query": "tabs", "top": 3}, []string{"unexpected additional properties [\"top\"]", "limit (integer 1 to 100, optional)"}},
		{"memory_search", map[string]any{"query": "tabs", "limit": 2.5}, []string{"argument limit", "want \"integer\""}},
		{"memory_search", map[string]any{"query": strings.Repeat("tabs ", 2000)}, []string{"invalid arguments: query is 10000 characters long, want at most 8000. It takes"}},
		{"memory_search", map[string]any{"query": nil}, []string{"argument query", "want \"string\""}},
		{"memory_list", map[string]any{"offset": -1}, []string{"invalid arguments: offset is -1, want 0 or more. It takes"}},
		{"memory_forget", map[string]any{"id": strings.Repeat("a", 129)}, []string{"invalid arguments: id is 129 characters long, want at most 128. It takes"}},
		{"memory_recall", map[string]any{}, []string{"missing properties", "query"}},
		{"memory_recall", map[string]any{"query": []string{"tabs"}}, []string{"argument query", "want \"string\""}},
		{"memory_recall", map[string]any{"query": " "}, []string{"the query is empty"}},
		{"memory_list", map[string]any{"category": "misc"}, []string{"argument category", "misc"}},
		{"memory_remember", map[string]any{"content": "Orders are read in one place.", "scope": "repo", "category": "patterns", "anchors": manyAnchors(17)},
			[]string{"invalid arguments: anchors has 17 items, want at most 16. It takes", "anchors (array of at most 16 items, optional)"}},
	}
	for _, tt := range tests {
		text, isErr, _ := f.call(tt.tool, tt.args)
		if !isErr {
			t.Errorf("%s(%v) succeeded, want an error result: %s", tt.tool, tt.args, text)
			continue
		}
		contains(t, tt.tool+" error", text, append([]string{tt.tool}, tt.want...)...)
	}
	// An ambiguous prefix lists the candidates.
	text, isErr, _ := f.call("memory_show", map[string]any{"id": "mem_"})
	if !isErr {
		t.Errorf("an ambiguous prefix succeeded: %s", text)
	}
	contains(t, "memory_show of an ambiguous prefix", text, "matches 2 memories", id)
}

// The server keeps one index for its life, and sees what other processes
// write — another session's capture, a forgemem remember in a terminal —
// at the next call.
func TestSeesWhatOtherProcessesWrite(t *testing.T) {
	f := newFixture(t)
	f.ok("memory_remember", map[string]any{"content": "Prefers tabs.", "scope": "user", "category": "coding-preferences"})
	text, _ := f.ok("memory_search", map[string]any{"query": "release notes changelog"})
	if strings.Contains(text, "CHANGELOG") {
		t.Fatalf("found before it was written:\n%s", text)
	}
	m := &memcore.MemoryFile{Meta: memcore.MemoryMeta{ID: memcore.NewMemoryID(), CreatedAt: time.Now().UTC().Truncate(time.Second),
		Version: 1, Scope: memcore.ScopeRepo, Category: memcore.CategoryProjectConventions, Trigger: memcore.TriggerCadence},
		Content: "Release notes go in CHANGELOG.md under Unreleased."}
	if err := f.other.Write(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	text, _ = f.ok("memory_search", map[string]any{"query": "release notes changelog"})
	contains(t, "memory_search after another process wrote", text, m.Meta.ID, "CHANGELOG.md")
	text, _ = f.ok("memory_recall", map[string]any{"query": "where do release notes go?"})
	contains(t, "memory_recall after another process wrote", text, "CHANGELOG.md")
	text, _ = f.ok("memory_list", map[string]any{"scope": "repo"})
	contains(t, "memory_list", text, m.Meta.ID)
}

// A provider failure is a tool result that says so, and an API key the
// provider quotes in its error never reaches the model; what the lexical
// index finds without the embedder is still returned.
func TestProviderFailureIsRedacted(t *testing.T) {
	const key = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
	srv := httptest.NewServer(fakeopenai.RejectKey(key))
	t.Cleanup(srv.Close)
	f := newFixtureEnv(t, "FORGEMEM_PROVIDER=openai", "FORGEMEM_BASE_URL="+srv.URL+"/v1", "OPENAI_API_KEY="+key,
		"FORGEMEM_CLASSIFIER_MODEL=classifier", "FORGEMEM_EMBEDDING_MODEL=embedder", "FORGEMEM_RETRIEVAL_MODE=identity", "FORGEMEM_REVIEW=off")
	// With no memories there is nothing to search: the provider is not
	// called, and the tools say there is nothing.
	for _, tool := range []string{"memory_search", "memory_recall"} {
		if text, isErr, _ := f.call(tool, map[string]any{"query": "how are migrations numbered?"}); isErr || strings.Contains(text, "401") {
			t.Errorf("%s over no memories: error %v, %q; want nothing found, and no call to the provider", tool, isErr, text)
		}
	}

	// A memory the query shares words with is found by the lexical index:
	// a result, not an error, that says some memories may be missing, and
	// why, with the key redacted.
	f.ok("memory_remember", map[string]any{"content": "Migrations are numbered by date.", "scope": "repo", "category": "project-conventions"})
	for _, tool := range []string{"memory_search", "memory_recall"} {
		text, _ := f.ok(tool, map[string]any{"query": "how are migrations numbered?"})
		if !strings.Contains(text, "Migrations are numbered by date.") || !strings.Contains(text, "Some memories may be missing") ||
			strings.Contains(text, key) || !strings.Contains(text, "[REDACTED]") || !strings.Contains(text, "401") {
			t.Errorf("%s with the embedder failing: %q; want the memory found by words, and why", tool, text)
		}
	}
}

// Arguments that are not an object, absent or null, are read as the SDK's
// typed tools cannot: a tool error for what is not an object, and no
// arguments for null — never a protocol error or a crash.
func TestArgumentsThatAreNotAnObject(t *testing.T) {
	f := newFixture(t)
	f.ok("memory_remember", map[string]any{"content": "Prefers tabs.", "scope": "user", "category": "coding-preferences"})
	tests := []struct {
		tool string
		args any
		// want is what the text holds; isError says whether it is an error.
		want    string
		isError bool
	}{
		{"memory_list", json.RawMessage(`[1, 2]`), "the arguments are not a JSON object", true},
		{"memory_list", json.RawMessage(`"scope"`), "the arguments are not a JSON object", true},
		{"memory_list", json.RawMessage(`42`), "the arguments are not a JSON object", true},
		{"memory_list", json.RawMessage(`null`), "1 memory, oldest first", false},
		{"memory_list", nil, "1 memory, oldest first", false},
		{"memory_search", json.RawMessage(`null`), "missing properties", true},
		{"memory_search", json.RawMessage(`{"query": "tabs"}`), "1 memory matching", false}, // limit's default
	}
	for _, tt := range tests {
		res, err := f.session.CallTool(context.Background(), &mcp.CallToolParams{Name: tt.tool, Arguments: tt.args})
		if err != nil {
			t.Errorf("%s(%s): a protocol error, want a tool result: %v", tt.tool, tt.args, err)
			continue
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if res.IsError != tt.isError || !strings.Contains(text, tt.want) {
			t.Errorf("%s(%s): error %v, %q; want error %v holding %q", tt.tool, tt.args, res.IsError, text, tt.isError, tt.want)
		}
	}
}

// An argument the schema refuses is quoted back by the schema's check at
// most maxQuoted characters of it; a megabyte of it still makes a short
// message, and one over its length is not quoted at all.
func TestHugeArgumentMakesAShortMessage(t *testing.T) {
	f := newFixture(t)
	const maxQuoted = 100
	huge := strings.Repeat("Z", 1<<20)
	tests := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"memory_list", map[string]any{"category": huge}, "argument category: enum: ZZZ"},
		{"memory_recall", map[string]any{"query": huge}, "query is 1048576 characters long, want at most 8000"},
		{"memory_show", map[string]any{"id": huge}, "id is 1048576 characters long, want at most 128"},
		{"memory_search", map[string]any{"query": "tabs", "limit": huge}, "argument limit: type: ZZZ"},
		{"memory_remember", map[string]any{"content": "x", "scope": huge, "category": "patterns"}, "argument scope: enum: ZZZ"},
	}
	for _, tt := range tests {
		text, isErr, _ := f.call(tt.tool, tt.args)
		if !isErr || len(text) > 1<<10 || strings.Count(text, "Z") > maxQuoted || !strings.Contains(text, tt.want) {
			t.Errorf("%s with a 1 MiB argument: error %v, a message of %d bytes quoting %d characters of it; want an error under 1 KiB quoting at most %d, holding %q:\n%.600s",
				tt.tool, isErr, len(text), strings.Count(text, "Z"), maxQuoted, tt.want, text)
		}
	}
}

// An unknown tool stays what the protocol says it is: a protocol error.
func TestUnknownToolIsAProtocolError(t *testing.T) {
	f := newFixture(t)
	_, err := f.session.CallTool(context.Background(), &mcp.CallToolParams{Name: "memory_nope", Arguments: map[string]any{}})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("calling an unknown tool: %v; want the protocol's invalid params error", err)
	}
}

// manyAnchors returns n anchors, each a different file.
func manyAnchors(n int) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		out[i] = map[string]any{"path": fmt.Sprintf("internal/f%d.go", i)}
	}
	return out
}
