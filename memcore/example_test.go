package memcore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/forgemem/forgemem/memcore"
)

// A file as a person might leave it: CRLF line endings, an unknown key,
// "supersedes: null".
func ExampleParse() {
	raw := "---\r\n" +
		"id: mem_1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b\r\n" +
		"created_at: 2025-01-15T10:30:00Z\r\n" +
		"version: 1\r\n" +
		"scope: user\r\n" +
		"category: coding-preferences\r\n" +
		"supersedes: null\r\n" +
		"reviewed: true\r\n" +
		"---\r\n" +
		"\r\n" +
		"Prefers table-driven tests.\r\n"
	m, err := memcore.Parse([]byte(raw))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.Meta.ID, m.Meta.Scope, m.Meta.Category, m.Meta.Version)
	fmt.Println("first version:", m.Meta.Supersedes == nil)
	fmt.Println("extra:", m.Meta.Extra)
	fmt.Printf("content: %q\n", m.Content)

	_, err = memcore.Parse([]byte("---\nid: ../../etc/passwd\n---\nx\n"))
	fmt.Println(errors.Is(err, memcore.ErrInvalidID))
	// Output:
	// mem_1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b user coding-preferences 1
	// first version: true
	// extra: map[reviewed:true]
	// content: "Prefers table-driven tests."
	// true
}

func ExampleSerialize() {
	m := &memcore.MemoryFile{
		Meta: memcore.MemoryMeta{
			ID:        "mem_1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b",
			CreatedAt: time.Date(2025, 1, 15, 10, 30, 0, 0, time.UTC),
			Version:   1,
			Scope:     memcore.ScopeRepo,
			Category:  memcore.CategoryProjectConventions,
			Related: []memcore.RelatedMemory{
				{ID: "mem_77aa0b1c-2d3e-4f50-8162-738495a6b7c8", Relationship: memcore.RelationshipRefines},
			},
			Trigger: memcore.TriggerManual,
		},
		Content: "Run `make check` before every commit.",
	}
	b, err := memcore.Serialize(m)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(b))
	// Output:
	// ---
	// id: mem_1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b
	// created_at: 2025-01-15T10:30:00Z
	// version: 1
	// scope: repo
	// category: project-conventions
	// related:
	//   - id: mem_77aa0b1c-2d3e-4f50-8162-738495a6b7c8
	//     relationship: refines
	// trigger: manual
	// ---
	//
	// Run `make check` before every commit.
}

func ExampleFileStore() {
	root, err := os.MkdirTemp("", "memcore-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(root)

	ctx := context.Background()
	store, err := memcore.NewFileStore(filepath.Join(root, "repo", ".forge", "memory"), filepath.Join(root, "home", ".forge", "memory"), memcore.FileStoreConfig{})
	if err != nil {
		fmt.Println(err)
		return
	}
	newMemory := func(id string, scope memcore.Scope, minute int, content string) *memcore.MemoryFile {
		return &memcore.MemoryFile{
			Meta: memcore.MemoryMeta{
				ID: id, Version: 1, Scope: scope, Category: memcore.CategoryCodingPreferences,
				CreatedAt: time.Date(2025, 1, 15, 10, minute, 0, 0, time.UTC), Trigger: memcore.TriggerCadence,
			},
			Content: content,
		}
	}
	for _, m := range []*memcore.MemoryFile{
		newMemory("mem_1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b", memcore.ScopeUser, 30, "Prefers table-driven tests."),
		newMemory("mem_0c9d2f4e-8a1b-4c3d-9e5f-6a7b8c9d0e1f", memcore.ScopeRepo, 10, "This repository uses zerolog."),
	} {
		if err := store.Write(ctx, m); err != nil {
			fmt.Println(err)
			return
		}
	}

	m, err := store.Read(ctx, "mem_1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("read:", m.Title())

	all, err := store.List(ctx) // oldest first
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range all {
		fmt.Println(m.Meta.Scope, m.Title())
	}

	// Files are never overwritten.
	err = store.Write(ctx, newMemory("mem_1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b", memcore.ScopeUser, 0, "x"))
	fmt.Println(errors.Is(err, memcore.ErrAlreadyExists))
	_, err = store.Read(ctx, "../../etc/passwd")
	fmt.Println(errors.Is(err, memcore.ErrInvalidID))
	// Output:
	// read: Prefers table-driven tests.
	// repo This repository uses zerolog.
	// user Prefers table-driven tests.
	// true
	// true
}

func ExampleNewVersion() {
	ctx := context.Background()
	store := memcore.NewMemStore()
	first := &memcore.MemoryFile{
		Meta: memcore.MemoryMeta{
			ID: "mem_1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b", Version: 1,
			CreatedAt: time.Date(2025, 1, 15, 10, 30, 0, 0, time.UTC),
			Scope:     memcore.ScopeUser, Category: memcore.CategoryCodingPreferences,
		},
		Content: "Prefers pessimistic locking.",
	}
	second := memcore.NewVersion(first, "session-2", memcore.TriggerCadence)
	second.Content = "Prefers optimistic locking with retry (changed after a performance issue)."
	for _, m := range []*memcore.MemoryFile{first, second} {
		if err := store.Write(ctx, m); err != nil {
			fmt.Println(err)
			return
		}
	}
	fmt.Println("version:", second.Meta.Version, "supersedes the first:", *second.Meta.Supersedes == first.Meta.ID)

	head, err := memcore.LatestVersion(ctx, store, first.Meta.ID)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("head is the second:", head == second.Meta.ID)

	chain, err := memcore.VersionChain(ctx, store, head, 10)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range chain {
		fmt.Println(m.Meta.Version, m.Title())
	}
	// Output:
	// version: 2 supersedes the first: true
	// head is the second: true
	// 1 Prefers pessimistic locking.
	// 2 Prefers optimistic locking with retry (changed after a performance issue).
}

func ExampleGraph() {
	mk := func(id string, version int, supersedes string, related ...memcore.RelatedMemory) *memcore.MemoryFile {
		m := &memcore.MemoryFile{Meta: memcore.MemoryMeta{ID: id, Version: version, Related: related}}
		if supersedes != "" {
			m.Meta.Supersedes = &supersedes
		}
		return m
	}
	const (
		a1 = "mem_00000000-0000-4000-8000-00000000000a"
		a2 = "mem_00000000-0000-4000-8000-0000000000a2"
		b  = "mem_00000000-0000-4000-8000-00000000000b"
		c  = "mem_00000000-0000-4000-8000-00000000000c"
	)
	g := memcore.NewGraph([]*memcore.MemoryFile{
		mk(a1, 1, ""),
		mk(a2, 2, a1, memcore.RelatedMemory{ID: b, Relationship: memcore.RelationshipRefines}),
		mk(b, 1, ""),
		mk(c, 1, "", memcore.RelatedMemory{ID: b, Relationship: memcore.RelationshipContradicts}),
	})
	head, _ := g.Head(a1)
	fmt.Println("head of a1:", head.Meta.ID == a2, "a1 superseded:", g.IsSuperseded(a1))
	fmt.Println("chain length:", len(g.Chain(a2)))
	for _, n := range g.Neighbors(a2, 2) {
		fmt.Println(n.Hops, n.Relationship, n.Memory.Meta.ID == b, n.Incoming)
	}
	// Output:
	// head of a1: true a1 superseded: true
	// chain length: 2
	// 1 refines true false
	// 2 contradicts false true
}

func ExampleStripToolContent() {
	conversation := []memcore.Message{
		{Role: memcore.RoleSystem, Content: "You are a coding agent."},
		{Role: memcore.RoleUser, Content: "Why did the build fail?"},
		{Role: memcore.RoleAssistant, Content: `Let me look. <tool_call name="sh">go build ./...</tool_call>`},
		{Role: memcore.RoleTool, Content: "main.go:3: undefined: x"},
		{Role: memcore.RoleAssistant, Content: "<tool_result>main.go:3: undefined: x</tool_result>\nA variable is undefined."},
	}
	for _, m := range memcore.StripToolContent(conversation) {
		fmt.Printf("%s: %s\n", m.Role, m.Content)
	}
	// Output:
	// user: Why did the build fail?
	// assistant: Let me look.
	// assistant: A variable is undefined.
}

func ExampleCapWindow() {
	conversation := []memcore.Message{
		{Role: memcore.RoleUser, Content: "An old question that no longer fits in the window."},
		{Role: memcore.RoleAssistant, Content: "A reply."},
		{Role: memcore.RoleUser, Content: "The newest message."},
	}
	// 15 tokens: the two newest whole (7 + 4), and the last 8 runes of the oldest (2 + 2).
	for _, m := range memcore.CapWindow(conversation, 15) {
		fmt.Printf("%s: %q\n", m.Role, m.Content)
	}
	fmt.Println("tokens:", memcore.WindowTokens(memcore.CapWindow(conversation, 15)))
	// Output:
	// user: " window."
	// assistant: "A reply."
	// user: "The newest message."
	// tokens: 15
}

// A field out of range is an error naming it and its range, never a
// silent clamp.
func ExampleFileStoreConfig_Validate() {
	root, err := os.MkdirTemp("", "memcore-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(root)

	_, err = memcore.NewFileStore(filepath.Join(root, "repo"), filepath.Join(root, "user"), memcore.FileStoreConfig{Parallelism: -1})
	fmt.Println(err)
	fmt.Println(errors.Is(err, memcore.ErrInvalidConfig))
	// Output:
	// memcore: invalid config: Parallelism is -1, want at least 1 (0 means runtime.GOMAXPROCS(0))
	// true
}
