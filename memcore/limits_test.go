package memcore

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// padded returns a valid memory file of exactly size bytes: m serialized
// with its content padded.
func padded(t *testing.T, m *MemoryFile, size int) []byte {
	t.Helper()
	base := len(mustSerialize(t, m))
	c := m.Clone()
	c.Content += strings.Repeat("x", size-base)
	data := mustSerialize(t, c)
	if len(data) != size {
		t.Fatalf("padded file is %d bytes, want %d", len(data), size)
	}
	return data
}

// A memory file over MaxFileBytes is skipped, whatever it holds, and
// Problems says why with its size and the limit; a file of exactly
// MaxFileBytes is served.
func TestFileStoreSkipsTooLargeFiles(t *testing.T) {
	ctx := context.Background()
	ts := newTestStore(t)
	atLimit := memory(ScopeRepo, 0, "at the limit")
	if err := os.WriteFile(filepath.Join(ts.repo, atLimit.Meta.ID+".md"), padded(t, atLimit, MaxFileBytes), 0o600); err != nil {
		t.Fatal(err)
	}
	over := memory(ScopeUser, 1, "one byte over")
	overPath := filepath.Join(ts.user, over.Meta.ID+".md")
	if err := os.WriteFile(overPath, padded(t, over, MaxFileBytes+1), 0o600); err != nil {
		t.Fatal(err)
	}

	if got := ids(ts.mustList(t)); !slices.Equal(got, []string{atLimit.Meta.ID}) {
		t.Errorf("List = %v, want only the file at the limit, %s", got, atLimit.Meta.ID)
	}
	_, err := ts.Read(ctx, over.Meta.ID)
	var tl *TooLargeError
	if !errors.As(err, &tl) || !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Read of a file over the limit = %v, want a *TooLargeError", err)
	}
	if tl.Size != MaxFileBytes+1 || tl.Limit != MaxFileBytes {
		t.Errorf("TooLargeError = %+v, want size %d and limit %d", tl, MaxFileBytes+1, MaxFileBytes)
	}
	probs, err := ts.Problems(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(probs) != 1 || probs[0].Path != overPath || probs[0].Served || !errors.As(probs[0].Err, &tl) {
		t.Errorf("Problems = %+v, want the file over the limit with a *TooLargeError", probs)
	}
	if !strings.Contains(ts.logs.String(), overPath) {
		t.Errorf("the skipped file was not logged with its path:\n%s", ts.logs)
	}
}

// A huge memory file costs neither its size in memory nor the time to read
// it: a sparse file of 256 MiB is skipped having read nothing of it.
func TestFileStoreNeverReadsAHugeFile(t *testing.T) {
	ts := newTestStore(t)
	kept := memory(ScopeRepo, 0, "a regular memory file")
	ts.mustWrite(t, kept)
	huge := filepath.Join(ts.repo, NewMemoryID()+".md")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	const size = 256 << 20
	if err := f.Truncate(size); err != nil { // sparse where the file system allows
		t.Fatal(err)
	}
	f.Close()

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got := ids(ts.mustList(t))
	runtime.ReadMemStats(&after)
	if !slices.Equal(got, []string{kept.Meta.ID}) {
		t.Errorf("List = %v, want only %s", got, kept.Meta.ID)
	}
	// Reading the file whole would allocate its 256 MiB; the list itself
	// allocates a few kilobytes.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("List allocated %d bytes with a %d-byte file in the folder; it must not read the file", alloc, size)
	}
}

// A file that grows past the limit between its Stat and its read is cut at
// the limit: readAll never reads more than limit+1 bytes.
func TestReadAllStopsAtTheLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "grown")
	if err := os.WriteFile(path, []byte(strings.Repeat("y", 5000)), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		statSize    int64 // what the Stat said
		limit       int64
		wantLen     int
		wantTooLong bool
	}{
		{"under the limit", 5000, 8000, 5000, false},
		{"exactly the limit", 5000, 5000, 5000, false},
		{"grew since the stat", 10, 1000, 0, true},
		{"stat already over", 5000, 4999, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			data, err := readAll(f, tt.statSize, tt.limit)
			var tl *TooLargeError
			switch {
			case tt.wantTooLong && (!errors.As(err, &tl) || tl.Limit != tt.limit || tl.Size <= tt.limit):
				t.Errorf("readAll = %d bytes, %v; want a *TooLargeError over %d", len(data), err, tt.limit)
			case !tt.wantTooLong && (err != nil || len(data) != tt.wantLen):
				t.Errorf("readAll = %d bytes, %v; want %d bytes", len(data), err, tt.wantLen)
			}
			if pos, _ := f.Seek(0, 1); pos > tt.limit+1 {
				t.Errorf("readAll read %d bytes, more than the limit %d + 1", pos, tt.limit)
			}
		})
	}
}

// Write refuses a memory whose file would be over MaxFileBytes, which no
// reader would read; nothing is written.
func TestFileStoreWriteRefusesTooLarge(t *testing.T) {
	ts := newTestStore(t)
	m := memory(ScopeRepo, 0, strings.Repeat("z", MaxFileBytes))
	err := ts.Write(context.Background(), m)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Size <= MaxFileBytes {
		t.Fatalf("Write of a memory over the limit = %v, want a *TooLargeError", err)
	}
	if entries, _ := os.ReadDir(ts.repo); len(entries) != 0 {
		t.Errorf("the refused write left %d entries in the folder", len(entries))
	}
}

// A memory folder that is a symbolic link — committed to a repository, it
// can point anywhere — is never followed: NewFileStore refuses it, and a
// folder replaced by a link later is refused by Write, List, Read and
// Remove, and named by Problems. Nothing is written where the link points.
func TestFileStoreRefusesALinkedFolder(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("creating symbolic links needs privileges on Windows")
	}
	ctx := context.Background()
	for _, scope := range Scopes() {
		t.Run(string(scope), func(t *testing.T) {
			root := t.TempDir()
			target := filepath.Join(root, "elsewhere")
			if err := os.Mkdir(target, 0o750); err != nil {
				t.Fatal(err)
			}
			dirs := map[Scope]string{ScopeRepo: filepath.Join(root, "repo"), ScopeUser: filepath.Join(root, "user")}
			if err := os.Symlink(target, dirs[scope]); err != nil {
				t.Fatal(err)
			}
			_, err := NewFileStore(dirs[ScopeRepo], dirs[ScopeUser], FileStoreConfig{})
			if !errors.Is(err, ErrUnsafeFolder) || !strings.Contains(err.Error(), dirs[scope]) {
				t.Errorf("NewFileStore over a linked %s folder = %v, want ErrUnsafeFolder naming %s", scope, err, dirs[scope])
			}

			// The folder becomes a link after the store was made.
			if err := os.Remove(dirs[scope]); err != nil {
				t.Fatal(err)
			}
			s, err := NewFileStore(dirs[ScopeRepo], dirs[ScopeUser], FileStoreConfig{})
			if err != nil {
				t.Fatal(err)
			}
			m := memory(scope, 0, "written before the link")
			if err := s.Write(ctx, m); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(dirs[scope], filepath.Join(root, "moved")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(root, "moved"), dirs[scope]); err != nil {
				t.Fatal(err)
			}
			if err := s.Write(ctx, memory(scope, 1, "through the link")); !errors.Is(err, ErrUnsafeFolder) {
				t.Errorf("Write through a linked folder = %v, want ErrUnsafeFolder", err)
			}
			if all, err := s.List(ctx); err != nil || len(all) != 0 {
				t.Errorf("List = %v, %v; want nothing read through the link", ids(all), err)
			}
			if _, err := s.Read(ctx, m.Meta.ID); !errors.Is(err, ErrUnsafeFolder) {
				t.Errorf("Read through a linked folder = %v, want ErrUnsafeFolder", err)
			}
			if err := s.Remove(ctx, m.Meta.ID); !errors.Is(err, ErrUnsafeFolder) {
				t.Errorf("Remove through a linked folder = %v, want ErrUnsafeFolder", err)
			}
			if _, err := os.Stat(filepath.Join(root, "moved", m.Meta.ID+".md")); err != nil {
				t.Errorf("the memory behind the link was touched: %v", err)
			}
			probs, err := s.Problems(ctx)
			if err != nil || len(probs) != 1 || probs[0].Path != dirs[scope] || !errors.Is(probs[0].Err, ErrUnsafeFolder) {
				t.Errorf("Problems = %+v, %v; want the linked folder %s", probs, err, dirs[scope])
			}
			if entries, _ := os.ReadDir(target); len(entries) != 0 {
				t.Errorf("%d entries were written where the first link pointed", len(entries))
			}
		})
	}
}

// A folder above the memory folder may be a link: it is the caller's
// choice of path (a home folder on another disk), not something a
// repository committed inside the memory folder's place.
func TestFileStoreAcceptsLinksAboveItsFolders(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("creating symbolic links needs privileges on Windows")
	}
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "real"), 0o750); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(filepath.Join(root, "real"), link); err != nil {
		t.Fatal(err)
	}
	s, err := NewFileStore(filepath.Join(link, "repo"), filepath.Join(link, "user"), FileStoreConfig{})
	if err != nil {
		t.Fatalf("NewFileStore under a linked folder: %v", err)
	}
	if err := s.Write(context.Background(), memory(ScopeRepo, 0, "fine")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "real", "repo")); errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the folder was not made under the link's target")
	}
}
