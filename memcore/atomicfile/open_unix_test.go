//go:build unix

package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A FIFO is refused at once, for reading or for writing: opened without
// O_NONBLOCK, either would wait for a peer that never comes, and the test
// would hang rather than fail.
func TestOpenFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	for _, flag := range []int{os.O_RDONLY, os.O_WRONLY | os.O_APPEND, os.O_WRONLY | os.O_CREATE} {
		f, err := Open(path, flag, 0o600)
		if !errors.Is(err, ErrNotRegular) {
			t.Errorf("Open of a FIFO with flag %#x = %v, want an error wrapping ErrNotRegular", flag, err)
		}
		if f != nil {
			f.Close()
		}
	}
}
