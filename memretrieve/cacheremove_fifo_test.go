//go:build unix

package memretrieve

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestRemoveVectorsFromSpecialFile: a FIFO put at a cache file's path after
// the folder was listed is skipped at once, never opened in a way that
// waits for a writer.
func TestRemoveVectorsFromSpecialFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), cacheFileName("m", nil))
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	t.Cleanup(func() { unblockFIFO(path) })
	done := make(chan error, 1)
	go func() {
		_, err := removeVectorsFrom(path, map[contentKey]bool{{1}: true})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("removeVectorsFrom(FIFO) = %v, want it skipped", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("removeVectorsFrom blocked on a FIFO")
	}
}
