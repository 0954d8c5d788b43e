package workspace_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/jsonlines"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/workspace"
	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/settings"
)

// open returns a workspace over a temporary repository and home folder,
// with the settings env gives, and its store.
func open(t *testing.T, env ...string) *workspace.Workspace {
	t.Helper()
	root := t.TempDir()
	repo, home := filepath.Join(root, "repo"), filepath.Join(root, "home")
	for _, d := range []string{filepath.Join(repo, ".git"), home} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			t.Fatal(err)
		}
	}
	s, err := settings.Load(settings.Options{WorkDir: repo, Home: home, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(s, workspace.Options{Now: func() time.Time { return time.Date(2025, 3, 10, 0, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.Close(context.Background()) })
	return ws
}

func id(n int) string { return fmt.Sprintf("mem_%08d-0000-4000-8000-%012d", n, n) }

func mem(n int, scope memcore.Scope, content string, pred ...int) *memcore.MemoryFile {
	m := &memcore.MemoryFile{Meta: memcore.MemoryMeta{
		ID: id(n), CreatedAt: time.Date(2025, 3, n, 0, 0, 0, 0, time.UTC), Version: 1,
		Scope: scope, Category: memcore.CategoryPatterns,
	}, Content: content}
	if len(pred) > 0 {
		p := id(pred[0])
		m.Meta.Supersedes, m.Meta.Version = &p, 2
	}
	return m
}

// handWrite stores m as a person would, without any check of its chain.
func handWrite(t *testing.T, ws *workspace.Workspace, ms ...*memcore.MemoryFile) {
	t.Helper()
	for _, m := range ms {
		data, err := memcore.Serialize(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws.Store().Dir(m.Meta.Scope), m.Meta.ID+".md"), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func TestResolve(t *testing.T) {
	ws := open(t)
	handWrite(t, ws, mem(1, memcore.ScopeRepo, "One."), mem(2, memcore.ScopeUser, "Two."))
	ctx := context.Background()
	tests := []struct {
		ref     string
		want    string
		wantErr error
	}{
		{id(1), id(1), nil},
		{"mem_00000002", id(2), nil},
		{"00000002-0000", id(2), nil},
		{"  MEM_00000001 ", id(1), nil},
		{"0000000", "", workspace.ErrAmbiguous},
		{"mem_ffff", "", memcore.ErrNotFound},
		{"", "", workspace.ErrInvalidInput},
	}
	for _, tt := range tests {
		m, err := ws.Resolve(ctx, tt.ref)
		if !errors.Is(err, tt.wantErr) || err == nil && m.ID != tt.want {
			t.Errorf("Resolve(%q) = %s, %v; want %s, %v", tt.ref, m.ID, err, tt.want, tt.wantErr)
		}
	}
	_, err := ws.Resolve(ctx, "0000000")
	var ae *workspace.AmbiguousError
	if !errors.As(err, &ae) || len(ae.Candidates) != 2 {
		t.Fatalf("an ambiguous prefix gave %v, want an *AmbiguousError with both candidates", err)
	}
}

func TestReadConversation(t *testing.T) {
	want := `; want one {"role": "user", "content": "…"} object per line`
	tests := []struct {
		name    string
		in      string
		want    int
		wantErr string
	}{
		{"messages", `{"role":"user","content":"a"}` + "\n\n" + `{"role":"assistant","content":"b","ts":3}`, 2, ""},
		{"tool and system roles", `{"role":"system","content":"s"}` + "\n" + `{"role":"tool","content":"t"}` + "\n", 2, ""},
		{"empty", "", 0, ""},
		{"fields named in another case", `{"Role":"user","Content":"a"}`, 1, ""},
		{"a null time", `{"role":"user","content":"a","at":null}`, 1, ""},
		{"a byte order mark first", "\ufeff" + `{"role":"user","content":"a"}` + "\r\n" + `{"role":"assistant","content":"b"}`, 2, ""},
		{"a byte order mark alone", "\ufeff", 0, ""},
		{"a byte order mark, then a blank line", "\ufeff\n" + `{"role":"user","content":"a"}`, 1, ""},
		{"a byte order mark on line 2", `{"role":"user","content":"a"}` + "\n\ufeff" + `{"role":"user","content":"b"}`, 0,
			`line 2: not valid JSON: unexpected "\ufeff" at column 1`},
		{"unknown role", `{"role":"bot","content":"x"}`, 0, `line 1: role "bot" is not one of user, assistant, system or tool`},
		{"no role", `{"content":"x"}`, 0, `line 1: no "role"` + want},
		{"a null role", `{"role":null,"content":"x"}`, 0, `line 1: no "role"` + want},
		{"no content", "{\"role\":\"user\",\"content\":\"a\"}\n{\"role\":\"user\"}", 0, `line 2: no "content"` + want},
		{"not JSON", "User: hi", 0, `line 1: not valid JSON: unexpected "U" at column 1` + want},
		{"not JSON, indented", "\t  User: hi", 0, `line 1: not valid JSON: unexpected "U" at column 4` + want},
		{"not JSON after a non-ASCII letter", `{"role":"user","content":"é", x}`, 0, `line 1: not valid JSON: unexpected "x" at column 31` + want},
		{"cut off", `{"role":"user","content":"a`, 0, "line 1: not valid JSON: the line ends inside a value" + want},
		{"two objects on a line", `{"role":"user","content":"a"} {"role":"user","content":"b"}`, 0, "line 1: more than one JSON value on the line" + want},
		{"a trailing ]", `{"role":"user","content":"a"}` + "\n" + `{"role":"user","content":"b"}]`, 0, `line 2: not valid JSON: unexpected "]" at column 30, after the object` + want},
		{"a trailing comma", `{"role":"user","content":"a"},`, 0, `line 1: not valid JSON: unexpected "," at column 30, after the object` + want},
		{"trailing garbage", `{"role":"user","content":"a"} xyz`, 0, `line 1: not valid JSON: unexpected "x" at column 31, after the object` + want},
		{"trailing space", "{\"role\":\"user\",\"content\":\"a\"} \t\u00a0\r\n", 1, ""},
		{"an array", `[1,2]`, 0, "line 1: want a JSON object with role and content, got an array"},
		{"a string", `"hi"`, 0, "line 1: want a JSON object with role and content, got a string"},
		{"a number", `42`, 0, "line 1: want a JSON object with role and content, got a number"},
		{"null", `null`, 0, "line 1: want a JSON object with role and content, got null"},
		{"role not a string", `{"role":5,"content":"x"}`, 0, "line 1: role: want a string (user, assistant, system or tool), got a number"},
		{"content not a string", `{"role":"user","content":[{"type":"text"}]}`, 0, "line 1: content: want a string, got an array"},
		{"a time", `{"role":"user","content":"a","at":"2025-01-15T09:29:41+01:00"}`, 1, ""},
		{"a time that is not one", `{"role":"user","content":"a","at":"yesterday"}`, 0, `line 1: at: want an RFC 3339 time such as 2026-11-26T10:00:00Z, got "yesterday"`},
		{"a time that is a number", `{"role":"user","content":"a","at":1736929781}`, 0, "line 1: at: want an RFC 3339 time such as 2026-11-26T10:00:00Z, got a number"},
		{"a long value, cut", `{"role":"user","content":"a","at":"` + strings.Repeat("x", 100) + `"}`, 0, `got "` + strings.Repeat("x", 64) + `…"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msgs, err := workspace.ReadConversation(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if !errors.Is(err, workspace.ErrBadConversation) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want ErrBadConversation with %q", err, tt.wantErr)
				}
				// A line that is not one JSON value is jsonlines' error too.
				if notOne := strings.Contains(tt.wantErr, "not valid JSON") || strings.Contains(tt.wantErr, "more than one JSON value"); notOne != errors.Is(err, jsonlines.ErrNotOneValue) {
					t.Errorf("error %v: errors.Is(err, jsonlines.ErrNotOneValue) = %v, want %v", err, !notOne, notOne)
				}
				// What is wrong is said in the file's terms, not Go's.
				for _, internal := range []string{"Go value", "Go struct", "json:", "2006-01-02", "*string", "time.Time"} {
					if strings.Contains(err.Error(), internal) {
						t.Errorf("error %q shows Go's %q", err, internal)
					}
				}
				return
			}
			if err != nil || len(msgs) != tt.want {
				t.Fatalf("got %d messages, %v; want %d", len(msgs), err, tt.want)
			}
			if want := time.Date(2025, 1, 15, 8, 29, 41, 0, time.UTC); tt.name == "a time" && msgs[0].At != want {
				t.Errorf("at %v, want %v (in UTC)", msgs[0].At, want)
			}
		})
	}
}

func TestPurgeDeletesEveryBranchOfAFork(t *testing.T) {
	ws := open(t)
	// 1 ← 2, and 1 ← 3: a fork made by hand; 4 links into the chain.
	four := mem(4, memcore.ScopeRepo, "Links to the chain.")
	four.Meta.Related = []memcore.RelatedMemory{{ID: id(2), Relationship: memcore.RelationshipRefines}}
	handWrite(t, ws, mem(1, memcore.ScopeRepo, "Root."), mem(2, memcore.ScopeRepo, "Branch a.", 1), mem(3, memcore.ScopeRepo, "Branch b.", 1), four)
	ctx := context.Background()

	dry, err := ws.Purge(ctx, id(3), true)
	if err != nil {
		t.Fatal(err)
	}
	if len(dry.Chain) != 3 || !dry.DryRun {
		t.Fatalf("a dry run lists %d versions, want 3", len(dry.Chain))
	}
	if _, err := ws.Resolve(ctx, id(1)); err != nil {
		t.Fatalf("the dry run deleted something: %v", err)
	}

	res, err := ws.Purge(ctx, id(3), false)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.LinkedFrom) != 1 || res.LinkedFrom[0] != id(4) {
		t.Errorf("linked from %v, want %s", res.LinkedFrom, id(4))
	}
	for _, n := range []int{1, 2, 3} {
		if _, err := ws.Resolve(ctx, id(n)); !errors.Is(err, memcore.ErrNotFound) {
			t.Errorf("%s after the purge: %v, want ErrNotFound", id(n), err)
		}
	}
	if _, err := ws.Resolve(ctx, id(4)); err != nil {
		t.Errorf("the memory linking to the chain was deleted: %v", err)
	}
}

func TestRememberSupersedesTheHead(t *testing.T) {
	ws := open(t)
	handWrite(t, ws, mem(1, memcore.ScopeRepo, "First."), mem(2, memcore.ScopeRepo, "Second.", 1))
	ctx := context.Background()
	res, err := ws.Remember(ctx, workspace.RememberInput{Text: "Third.", Supersedes: id(1)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Superseded != id(2) || res.NotHead != id(1) || res.Memory.Version != 3 || res.Memory.Trigger != "manual" {
		t.Fatalf("result %+v; want version 3 superseding %s, the head, with NotHead %s", res, id(2), id(1))
	}
	d, err := ws.Show(ctx, id(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Chain) != 3 || d.Chain[2].ID != res.Memory.ID {
		t.Fatalf("the chain has %d versions ending at %s; want 3 ending at the new one", len(d.Chain), d.Chain[len(d.Chain)-1].ID)
	}
}

func TestNewModels(t *testing.T) {
	tests := []struct {
		name       string
		env        []string
		wantErr    error
		llmErr     error
		embedErr   error
		classifier error
	}{
		{"fake", nil, nil, workspace.ErrNeedsModel, nil, workspace.ErrNeedsModel},
		{"openai without a key", []string{"FORGEMEM_PROVIDER=openai"}, workspace.ErrProviderSetup, nil, nil, nil},
		{"openai with a local server and no key", []string{"FORGEMEM_PROVIDER=openai", "OPENAI_BASE_URL=http://localhost:11434/v1", "FORGEMEM_CLASSIFIER_MODEL=llama3.2", "FORGEMEM_EMBEDDING_MODEL=nomic-embed-text"}, nil, nil, nil, nil},
		{"openai without models: the chat default, no embedding model", []string{"FORGEMEM_PROVIDER=openai", "OPENAI_API_KEY=sk-x"}, nil, nil, workspace.ErrProviderSetup, nil},
		{"a local server needs its classifier model named", []string{"FORGEMEM_PROVIDER=openai", "FORGEMEM_BASE_URL=http://localhost:11434/v1", "FORGEMEM_EMBEDDING_MODEL=nomic-embed-text"}, nil, nil, nil, workspace.ErrProviderSetup},
		{"openai refusing a model", []string{"FORGEMEM_PROVIDER=openai", "OPENAI_API_KEY=sk-x", "FORGEMEM_CLASSIFIER_MODEL=text-embedding-3-small"}, workspace.ErrProviderSetup, nil, nil, nil},
		{"gemini without a key", []string{"FORGEMEM_PROVIDER=gemini"}, workspace.ErrProviderSetup, nil, nil, nil},
		{"gemini", []string{"FORGEMEM_PROVIDER=gemini", "GEMINI_API_KEY=k", "FORGEMEM_EMBEDDING_MODEL=gemini-embedding-001"}, nil, nil, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := settings.Load(settings.Options{Env: tt.env})
			if err != nil {
				t.Fatal(err)
			}
			m, err := workspace.NewModels(s, nil)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("NewModels: %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if _, err := m.NeedLLM(); !errors.Is(err, tt.llmErr) {
				t.Errorf("NeedLLM: %v, want %v", err, tt.llmErr)
			}
			if _, err := m.NeedEmbedder(); !errors.Is(err, tt.embedErr) {
				t.Errorf("NeedEmbedder: %v, want %v", err, tt.embedErr)
			}
			if _, _, err := m.NeedClassifier(); !errors.Is(err, tt.classifier) {
				t.Errorf("NeedClassifier: %v, want %v", err, tt.classifier)
			}
		})
	}
}

// memory.embedding_dimensions reaches every provider's embedder: the
// vectors' length, which each embedder's Model names.
func TestEmbeddingDimensions(t *testing.T) {
	tests := []struct {
		name      string
		env       []string
		wantModel string
	}{
		{"fake, default", nil, "fake-hash-v2-1024"},
		{"fake", []string{"FORGEMEM_EMBEDDING_DIMENSIONS=1536"}, "fake-hash-v2-1536"},
		{"openai", []string{"FORGEMEM_PROVIDER=openai", "OPENAI_API_KEY=sk-x", "FORGEMEM_EMBEDDING_MODEL=text-embedding-3-small", "FORGEMEM_EMBEDDING_DIMENSIONS=512"}, "text-embedding-3-small@512"},
		{"gemini", []string{"FORGEMEM_PROVIDER=gemini", "GEMINI_API_KEY=k", "FORGEMEM_EMBEDDING_MODEL=gemini-embedding-001", "FORGEMEM_EMBEDDING_DIMENSIONS=768"}, "gemini-embedding-001@768"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := settings.Load(settings.Options{Env: tt.env})
			if err != nil {
				t.Fatal(err)
			}
			m, err := workspace.NewModels(s, nil)
			if err != nil {
				t.Fatal(err)
			}
			emb, err := m.NeedEmbedder()
			if err != nil {
				t.Fatal(err)
			}
			if got := emb.Model(); got != tt.wantModel {
				t.Errorf("Model() = %q, want %q", got, tt.wantModel)
			}
		})
	}
}

// A chain of a hand-made shape lists its head, the one version search and
// recall take as current: the member heading a supersedes cycle (which a
// check of "superseded" would hide), and of a fork only the winning tip
// (the losing tip is superseded by nothing, yet is not current).
func TestListShowsEachChainsHead(t *testing.T) {
	ctx := context.Background()
	ws := open(t)
	a, b := mem(1, memcore.ScopeRepo, "Cycle, first.", 2), mem(2, memcore.ScopeRepo, "Cycle, second.", 1)
	root := mem(3, memcore.ScopeRepo, "Fork root.")
	left, right := mem(4, memcore.ScopeRepo, "Fork, one branch.", 3), mem(5, memcore.ScopeRepo, "Fork, the other branch.", 3)
	handWrite(t, ws, a, b, root, left, right)

	res, err := ws.List(ctx, workspace.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, m := range res.Memories {
		listed = append(listed, m.ID)
		if !m.Head {
			t.Errorf("%s is listed as current but not marked the head", m.ID)
		}
	}
	// The cycle is headed by its best member (the same version, the later
	// created_at: id(2)); the fork by its best tip (id(5), the later one).
	if want := []string{id(2), id(5)}; !slices.Equal(listed, want) {
		t.Errorf("list = %v, want %v", listed, want)
	}
	for _, ref := range []string{id(1), id(4)} {
		d, err := ws.Show(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		if d.Memory.Head {
			t.Errorf("show %s: marked the head, want a past version", ref)
		}
	}
}

// A Claude Code transcript given as a conversation is told apart by its
// first line, which has a "type" and no "role", so that the command can
// read it as the hooks do; a conversation with such a line further on is
// a conversation with a bad line.
func TestReadConversationKnowsAClaudeCodeTranscript(t *testing.T) {
	tests := []struct {
		name       string
		in         string
		transcript bool
	}{
		{"a summary first", `{"type":"summary","summary":"Errors","leafUuid":"9a1c"}` + "\n" + `{"type":"user","message":{"role":"user","content":"hi"}}`, true},
		{"a user line first", `{"parentUuid":null,"sessionId":"3f2a","type":"user","message":{"role":"user","content":"hi"},"uuid":"1111"}`, true},
		{"a snapshot first", "\n" + `{"type":"file-history-snapshot","messageId":"0b1c","snapshot":{}}` + "\n", true},
		{"a type alone", `{"type":"user","content":"hi"}`, false},
		{"a type with a role", `{"type":"user","role":"bot","content":"hi","uuid":"1"}`, false},
		{"a transcript line after a message", `{"role":"user","content":"a"}` + "\n" + `{"type":"summary","leafUuid":"9a1c"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := workspace.ReadConversation(strings.NewReader(tt.in))
			if !errors.Is(err, workspace.ErrBadConversation) || errors.Is(err, workspace.ErrClaudeCodeTranscript) != tt.transcript {
				t.Errorf("error %v; want ErrBadConversation, and ErrClaudeCodeTranscript %v", err, tt.transcript)
			}
		})
	}
}
