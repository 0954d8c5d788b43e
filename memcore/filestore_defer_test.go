package memcore

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// A store opened with DeferCreate over folders that do not exist creates
// nothing: every read lists and reads them as empty, and the disk is as it
// was.
func TestDeferCreateReadsCreateNothing(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		op   func(s *FileStore) error
		want error // nil, or what the error must match
	}{
		{"List", func(s *FileStore) error {
			ms, err := s.List(ctx)
			if err == nil && len(ms) != 0 {
				t.Errorf("List = %v, want none", ids(ms))
			}
			return err
		}, nil},
		{"ListByScope", func(s *FileStore) error {
			for _, scope := range Scopes() {
				if ms, err := s.ListByScope(ctx, scope); err != nil || len(ms) != 0 {
					t.Errorf("ListByScope(%s) = %v, %v; want none", scope, ids(ms), err)
				}
			}
			return nil
		}, nil},
		{"Problems", func(s *FileStore) error {
			probs, err := s.Problems(ctx)
			if err == nil && len(probs) != 0 {
				t.Errorf("Problems = %+v, want none: a missing folder is not a problem", probs)
			}
			return err
		}, nil},
		{"Read", func(s *FileStore) error { _, err := s.Read(ctx, idA); return err }, ErrNotFound},
		{"ReadIn", func(s *FileStore) error { _, err := s.ReadIn(ctx, ScopeUser, idA); return err }, ErrNotFound},
		{"Remove", func(s *FileStore) error { return s.Remove(ctx, idA) }, ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			before := snapshot(t, root)
			s, err := NewFileStore(filepath.Join(root, "repo"), filepath.Join(root, "nested", "user"), FileStoreConfig{DeferCreate: true})
			if err != nil {
				t.Fatalf("NewFileStore: %v", err)
			}
			err = tt.op(s)
			if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("%s = %v, want %v", tt.name, err, tt.want)
			}
			if after := snapshot(t, root); len(after) != len(before) {
				t.Errorf("%s created %v", tt.name, after)
			}
		})
	}
}

// The first write into a folder a DeferCreate store did not find creates
// it, 0750 as NewFileStore would have, and only that one: a write that
// supersedes locks the other scope's folder only if it exists. A default
// store behaves the same once a folder is deleted by hand.
func TestDeferCreateWriteCreatesItsFolder(t *testing.T) {
	allowed := umaskAllowed(t)
	ctx := context.Background()
	for _, deferCreate := range []bool{true, false} {
		name := map[bool]string{true: "DeferCreate", false: "default, repo folder deleted"}[deferCreate]
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			repo, user := filepath.Join(root, "repo"), filepath.Join(root, "a", "user")
			s, err := NewFileStore(repo, user, FileStoreConfig{DeferCreate: deferCreate})
			if err != nil {
				t.Fatal(err)
			}
			if !deferCreate {
				if err := os.RemoveAll(repo); err != nil {
					t.Fatal(err)
				}
			}
			v1 := memory(ScopeUser, 0, "Use tabs.")
			if err := s.Write(ctx, v1); err != nil {
				t.Fatalf("Write: %v", err)
			}
			if err := s.Write(ctx, next(v1, ScopeUser, "Use four spaces.")); err != nil {
				t.Fatalf("Write superseding: %v", err)
			}
			if _, err := os.Lstat(repo); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("writes into the user scope made the repo folder: %v", err)
			}
			for _, dir := range []string{user, filepath.Join(user, lockDirName)} {
				info, err := os.Lstat(dir)
				if err != nil || !info.IsDir() {
					t.Fatalf("%s: %v, %v; want a folder", dir, info, err)
				}
				if runtime.GOOS != "windows" && info.Mode().Perm() != dirPerm&allowed {
					t.Errorf("%s has mode %v, want %v", dir, info.Mode().Perm(), dirPerm&allowed)
				}
			}
			if ms, err := s.List(ctx); err != nil || len(ms) != 2 {
				t.Errorf("List = %v, %v; want the two versions", ids(ms), err)
			}
			// The repo folder is made by the first write into it.
			if err := s.Write(ctx, memory(ScopeRepo, 1, "Run make test.")); err != nil {
				t.Fatalf("Write into the repo scope: %v", err)
			}
			if ms, err := s.ListByScope(ctx, ScopeRepo); err != nil || len(ms) != 1 {
				t.Errorf("ListByScope(repo) = %v, %v; want one", ids(ms), err)
			}
		})
	}
}

// umaskAllowed returns the permission bits the process's umask lets a new
// folder have.
func umaskAllowed(t *testing.T) fs.FileMode {
	t.Helper()
	probe := filepath.Join(t.TempDir(), "probe")
	if err := os.Mkdir(probe, 0o777); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(probe)
	if err != nil {
		t.Fatal(err)
	}
	return info.Mode().Perm()
}

// A DeferCreate store checks the folders it finds as NewFileStore always
// does, and a folder it did not find when the first write creates it: a
// memory folder that is a symbolic link or a file is refused
// (ErrUnsafeFolder), and so are the two scopes' folders when they are one
// folder under two names (ErrInvalidConfig) — also when that shows only
// once the first write made the folder.
func TestDeferCreateChecksTheFolders(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	cfg := FileStoreConfig{DeferCreate: true}
	root := t.TempDir()
	real := filepath.Join(root, "real")
	if err := os.Mkdir(real, 0o750); err != nil {
		t.Fatal(err)
	}
	alias := filepath.Join(root, "alias")
	if err := os.Symlink(real, alias); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	user := filepath.Join(root, "user")
	found := filepath.Join(real, "found")
	if err := os.Mkdir(found, 0o750); err != nil {
		t.Fatal(err)
	}

	for name, tt := range map[string]struct {
		repo, user string
		want       error
	}{
		"a link as the folder":      {alias, user, ErrUnsafeFolder},
		"a file as the folder":      {file, user, ErrUnsafeFolder},
		"one folder spelt two ways": {found, filepath.Join(root, "x", "..", "real", "found"), ErrInvalidConfig},
		"one folder through a link": {found, filepath.Join(alias, "found"), ErrInvalidConfig},
	} {
		if _, err := NewFileStore(tt.repo, tt.user, cfg); !errors.Is(err, tt.want) {
			t.Errorf("%s: NewFileStore = %v, want %v", name, err, tt.want)
		}
	}

	// Neither folder exists: the store opens, and the first write finds
	// that the other folder came into being with it.
	s, err := NewFileStore(filepath.Join(real, "mem"), filepath.Join(alias, "mem"), cfg)
	if err != nil {
		t.Fatalf("NewFileStore over two missing folders: %v", err)
	}
	err = s.Write(context.Background(), memory(ScopeRepo, 0, "Use tabs."))
	if !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("the first write into one folder under two names = %v, want ErrInvalidConfig", err)
	}
	if entries, _ := os.ReadDir(filepath.Join(real, "mem")); len(entries) != 0 {
		t.Errorf("the refused write left %v", entries)
	}
}
