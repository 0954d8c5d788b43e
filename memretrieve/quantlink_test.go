//go:build unix

package memretrieve

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcore"
)

// TestQuantizedSearchNeverFollowsTheCache: a quantised index reads its
// candidates' vectors back from the cache files; a file replaced by a FIFO
// or by a symbolic link (even to the very file it was) is never opened
// through, and never waited on: the search is degraded to the int8 scores
// and the turn keeps its budget.
func TestQuantizedSearchNeverFollowsTheCache(t *testing.T) {
	tests := []struct {
		name string
		trap func(t *testing.T, path string)
	}{
		{"FIFO", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			t.Cleanup(func() { unblockFIFO(path) })
		}},
		{"link to the same file", func(t *testing.T, path string) {
			moved := filepath.Join(t.TempDir(), "moved.fmv")
			if err := os.Rename(path, moved); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(moved, path); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newFileStore(t)
			ms := genMemories(40, 31)
			for _, m := range ms {
				m.Meta.Scope = memcore.ScopeRepo
			}
			write(t, fs, ms...)
			emb := newEmbedder(t)
			cfg := quantizedConfig()
			cfg.Timeout = 2 * time.Second
			e := newEngine(t, fs, emb, nil, cfg, withRetryDelay(time.Hour))
			rebuild(t, e)
			tt.trap(t, filepath.Join(fs.Dir(memcore.ScopeRepo), cacheDirName, cacheFileName(emb.Model(), nil)))

			done := make(chan *Result, 1)
			go func() {
				res, _ := e.Retrieve(context.Background(), "", userWindow(ms[3].Content))
				done <- res
			}()
			select {
			case res := <-done:
				if len(res.Memories) == 0 {
					t.Errorf("a degraded search found nothing (%v, %v)", res.Skipped, res.Err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the search blocked on the cache file")
			}
			if !e.rereadCache.Load() {
				t.Error("the search read its candidates' vectors through the trap")
			}
		})
	}
}
