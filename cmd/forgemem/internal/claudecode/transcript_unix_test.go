//go:build unix

package claudecode_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/claudecode"
	"github.com/forgemem/forgemem/memcore/atomicfile"
)

// A transcript path names whatever a payload says: a FIFO is never waited
// on, a link never followed, a file larger than MaxTranscriptBytes never
// read, and a missing one is fs.ErrNotExist (the first prompt of a
// session, before Claude Code writes its transcript).
func TestReadWindowRefusesWhatIsNotATranscript(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.jsonl")
	if err := os.WriteFile(real, []byte(transcript(user("one"))), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge.jsonl")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: it takes no room on the disk.
	if err := f.Truncate(claudecode.MaxTranscriptBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, tt := range []struct {
		name, path string
		want       error
	}{
		{"a FIFO", fifo, atomicfile.ErrNotRegular},
		{"a folder", dir, atomicfile.ErrNotRegular},
		{"a symbolic link", link, atomicfile.ErrSymlink},
		{"a file over the cap", huge, claudecode.ErrTranscriptTooLarge},
		{"a missing file", filepath.Join(dir, "gone.jsonl"), fs.ErrNotExist},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := claudecode.ReadWindow(tt.path); !errors.Is(err, tt.want) {
				t.Errorf("ReadWindow = %v, want %v", err, tt.want)
			}
		})
	}
}
