package memcore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// ReadIn serves a file exactly as List does, and reports why List would
// skip it.
func TestReadInAgreesWithList(t *testing.T) {
	ctx := context.Background()
	ts := newTestStore(t)
	good := memory(ScopeRepo, 0, "the user prefers tabs")
	user := memory(ScopeUser, 1, "a user-scope memory")
	ts.mustWrite(t, good, user)
	noCreated := memory(ScopeRepo, 2, "served repaired: no created_at")
	data := strings.Replace(string(mustSerialize(t, noCreated)), "created_at: "+noCreated.Meta.CreatedAt.Format(time.RFC3339)+"\n", "", 1)
	writeRaw := func(dir, name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeRaw(ts.repo, noCreated.Meta.ID+".md", data)
	corrupt, wrongScope, tooLarge, link := NewMemoryID(), memory(ScopeUser, 3, "in the wrong folder"), NewMemoryID(), NewMemoryID()
	writeRaw(ts.repo, corrupt+".md", "---\nversion: [\n---\n")
	writeRaw(ts.repo, wrongScope.Meta.ID+".md", string(mustSerialize(t, wrongScope)))
	writeRaw(ts.repo, tooLarge+".md", strings.Repeat("x", MaxFileBytes+1))
	if err := os.Symlink(filepath.Join(ts.user, user.Meta.ID+".md"), filepath.Join(ts.repo, link+".md")); err != nil {
		t.Fatal(err)
	}

	listed := map[string]*MemoryFile{}
	for _, m := range ts.mustList(t) {
		listed[string(m.Meta.Scope)+"/"+m.Meta.ID] = m
	}
	tests := []struct {
		name    string
		scope   Scope
		id      string
		wantErr error
	}{
		{"a memory", ScopeRepo, good.Meta.ID, nil},
		{"the user's", ScopeUser, user.Meta.ID, nil},
		{"served repaired", ScopeRepo, noCreated.Meta.ID, nil},
		{"in the other folder", ScopeUser, good.Meta.ID, ErrNotFound},
		{"missing", ScopeRepo, NewMemoryID(), ErrNotFound},
		{"corrupt", ScopeRepo, corrupt, ErrMalformed},
		{"wrong scope", ScopeRepo, wrongScope.Meta.ID, ErrInvalidMemory},
		{"too large", ScopeRepo, tooLarge, ErrTooLarge},
		{"a symbolic link", ScopeRepo, link, ErrMalformed},
		{"not an id", ScopeRepo, "notes", ErrInvalidID},
		{"unknown scope", Scope("team"), good.Meta.ID, ErrUnknownScope},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ts.ReadIn(ctx, tt.scope, tt.id)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("ReadIn = %v, want %v", err, tt.wantErr)
			}
			want := listed[string(tt.scope)+"/"+tt.id]
			if (err == nil) != (want != nil) {
				t.Fatalf("ReadIn served %v, List %v", got != nil, want != nil)
			}
			if err == nil && !reflect.DeepEqual(got, want) {
				t.Errorf("ReadIn = %+v\nList  = %+v", got, want)
			}
		})
	}
}

// ReadIn reads the file as it is now, even when the parse cache holds a
// copy of the same size and modification time; the scope off is an error.
func TestReadInIsFresh(t *testing.T) {
	ctx := context.Background()
	ts := newTestStore(t)
	m := memory(ScopeRepo, 0, "first text")
	ts.mustWrite(t, m)
	path := filepath.Join(ts.repo, m.Meta.ID+".md")
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	ts.mustList(t) // the cache holds "first text"
	e := m.Clone()
	e.Content = "FIRST TEXT" // same size
	if err := os.WriteFile(path, mustSerialize(t, e), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, info.ModTime(), info.ModTime()); err != nil { // the same tick
		t.Fatal(err)
	}
	got, err := ts.ReadIn(ctx, ScopeRepo, m.Meta.ID)
	if err != nil || got.Content != "FIRST TEXT" {
		t.Fatalf("ReadIn = %v, %v; want the file as it is now", got, err)
	}
	got.Content = "changed by the caller"
	if again, _ := ts.ReadIn(ctx, ScopeRepo, m.Meta.ID); again.Content != "FIRST TEXT" {
		t.Errorf("ReadIn handed out the cache's copy: %q", again.Content)
	}

	userOnly, err := NewFileStore("", filepath.Join(t.TempDir(), "user"), FileStoreConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := userOnly.ReadIn(ctx, ScopeRepo, m.Meta.ID); !errors.Is(err, ErrScopeOff) {
		t.Errorf("ReadIn of a scope that is off = %v, want ErrScopeOff", err)
	}
}
