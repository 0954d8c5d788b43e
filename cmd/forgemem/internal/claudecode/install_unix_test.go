//go:build unix

package claudecode_test

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/claudecode"
)

// A repository can commit anything as .claude/settings.json: a FIFO is
// never waited on and a file over the cap never read; nothing is written.
func TestInstallRefusesWhatIsNotASettingsFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo", claudecode.SettingsFile)
	huge := filepath.Join(dir, "huge", claudecode.SettingsFile)
	for _, p := range []string{fifo, huge} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	if err := os.WriteFile(huge, append([]byte(`{"a": "`), make([]byte, claudecode.MaxSettingsBytes)...), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, huge} {
		if _, err := claudecode.Install(path, command); !errors.Is(err, claudecode.ErrSettingsFile) {
			t.Errorf("Install(%s) = %v, want ErrSettingsFile", path, err)
		}
		if _, err := os.Stat(path + ".bak"); !os.IsNotExist(err) {
			t.Errorf("a backup was written: %v", err)
		}
	}
}
