//go:build unix

package memretrieve

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcore"
)

// TestCacheNeverLeavesTheMemoryFolder: a .cache folder or a vectors file
// that is a symbolic link (a committed repository can hold one), or a
// special file at either place, is never followed, read, written or opened
// in a way that blocks: the build finishes, embeds every memory, keeps the
// vectors in memory, leaves what the link points at untouched, and says
// so in a log line.
func TestCacheNeverLeavesTheMemoryFolder(t *testing.T) {
	memories := genMemories(6, 11)
	// A real cache file of the fake embedder's vectors for memories, to
	// put where a link points: an engine must neither use nor change it.
	validCache := func(t *testing.T) []byte {
		dir := t.TempDir()
		store := memcore.NewMemStore()
		write(t, store, memories...)
		warmEngine(t, store, newEmbedder(t), withCacheDir(dir))
		data, err := os.ReadFile(filepath.Join(dir, cacheFileName(newEmbedder(t).Model(), nil)))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	tests := []struct {
		name string
		// plant makes the trap in repo's cache folder (repo is the repo
		// scope's memory folder) and returns the path the log must name
		// and, for a link, the outside place it points to.
		plant func(t *testing.T, repo string) (path, outside string)
	}{
		{"cache folder is a link", func(t *testing.T, repo string) (string, string) {
			outside := t.TempDir()
			if err := os.WriteFile(filepath.Join(outside, cacheFileName(newEmbedder(t).Model(), nil)), validCache(t), 0o600); err != nil {
				t.Fatal(err)
			}
			link := filepath.Join(repo, cacheDirName)
			if err := os.Symlink(outside, link); err != nil {
				t.Fatal(err)
			}
			return link, outside
		}},
		{"cache folder is a dangling link", func(t *testing.T, repo string) (string, string) {
			outside := filepath.Join(t.TempDir(), "not-yet")
			link := filepath.Join(repo, cacheDirName)
			if err := os.Symlink(outside, link); err != nil {
				t.Fatal(err)
			}
			return link, outside
		}},
		{"vectors file is a link", func(t *testing.T, repo string) (string, string) {
			outside := filepath.Join(t.TempDir(), "elsewhere.fmv")
			if err := os.WriteFile(outside, validCache(t), 0o600); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(repo, cacheDirName)
			if err := os.MkdirAll(dir, 0o750); err != nil {
				t.Fatal(err)
			}
			link := filepath.Join(dir, cacheFileName(newEmbedder(t).Model(), nil))
			if err := os.Symlink(outside, link); err != nil {
				t.Fatal(err)
			}
			return link, outside
		}},
		{"vectors file is a dangling link", func(t *testing.T, repo string) (string, string) {
			outside := filepath.Join(t.TempDir(), "created-through-the-link.fmv")
			dir := filepath.Join(repo, cacheDirName)
			if err := os.MkdirAll(dir, 0o750); err != nil {
				t.Fatal(err)
			}
			link := filepath.Join(dir, cacheFileName(newEmbedder(t).Model(), nil))
			if err := os.Symlink(outside, link); err != nil {
				t.Fatal(err)
			}
			return link, outside
		}},
		{"vectors file is a FIFO", func(t *testing.T, repo string) (string, string) {
			dir := filepath.Join(repo, cacheDirName)
			if err := os.MkdirAll(dir, 0o750); err != nil {
				t.Fatal(err)
			}
			fifo := filepath.Join(dir, cacheFileName(newEmbedder(t).Model(), nil))
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			// Unblock whatever opened it for reading once the test ends,
			// so a failing run does not leave a goroutine stuck.
			t.Cleanup(func() { unblockFIFO(fifo) })
			return fifo, ""
		}},
		{"cache folder is a FIFO", func(t *testing.T, repo string) (string, string) {
			fifo := filepath.Join(repo, cacheDirName)
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			return fifo, ""
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newFileStore(t)
			repo := fs.Dir(memcore.ScopeRepo)
			// Only repo-scope memories, so every vector belongs to the
			// trapped folder.
			var ms []*memcore.MemoryFile
			for _, m := range memories {
				c := m.Clone()
				c.Meta.Scope = memcore.ScopeRepo
				ms = append(ms, c)
			}
			write(t, fs, ms...)
			path, outside := tt.plant(t, repo)
			before := snapshotTree(t, outside)

			var logs logBuffer
			emb := newEmbedder(t)
			e := newEngine(t, fs, emb, nil, cacheConfig(), withLogger(logs.logger()))
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- e.Rebuild(ctx) }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("Rebuild = %v, want nil", err)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("Rebuild blocked on %s", path)
			}
			if emb.Inputs() != len(ms) {
				t.Errorf("embedded %d texts, want all %d: nothing may be read through %s", emb.Inputs(), len(ms), path)
			}
			if got := e.snap.Load().idx.Len(); got != len(ms) {
				t.Errorf("the index holds %d memories, want %d", got, len(ms))
			}
			if after := snapshotTree(t, outside); !bytes.Equal(before, after) {
				t.Errorf("what %s points at changed: %d bytes of listing and contents before, %d after", path, len(before), len(after))
			}
			if !containsAny(logs.lines("warn"), path) {
				t.Errorf("no warning names %s: %v", path, logs.lines("warn"))
			}
			// The cache stays in memory: a second build embeds nothing, and
			// warns no more.
			warns := len(logs.lines("warn"))
			rebuild(t, e)
			if emb.Inputs() != len(ms) {
				t.Errorf("the second build embedded %d more texts, want 0", emb.Inputs()-len(ms))
			}
			if n := len(logs.lines("warn")); n != warns {
				t.Errorf("the second build warned again: %v", logs.lines("warn")[warns:])
			}
			if after := snapshotTree(t, outside); !bytes.Equal(before, after) {
				t.Errorf("the second build changed what %s points at", path)
			}
			res, err := e.Retrieve(context.Background(), "t", userWindow(ms[0].Content))
			if err != nil || len(res.Memories) == 0 {
				t.Errorf("Retrieve = %+v, %v; want memories from the in-memory cache", res, err)
			}
		})
	}
}

// snapshotTree returns the names, kinds and contents of what is at path
// (a file, or a folder and everything in it), "" for nothing.
func snapshotTree(t *testing.T, path string) []byte {
	t.Helper()
	var b bytes.Buffer
	if path == "" {
		return nil
	}
	err := filepath.Walk(path, func(p string, info os.FileInfo, err error) error {
		if os.IsNotExist(err) {
			return nil
		}
		if err != nil {
			return err
		}
		b.WriteString(p + " " + info.Mode().String() + "\n")
		if info.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			b.Write(data)
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return b.Bytes()
}

// unblockFIFO opens the FIFO at path for writing and closes it, which lets
// a reader blocked opening it go on.
func unblockFIFO(path string) {
	if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		f.Close()
	}
}
