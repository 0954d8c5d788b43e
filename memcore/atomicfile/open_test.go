package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Open hands back regular files, creates one only when asked, and refuses
// a folder or a symbolic link with the sentinel that says which.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "regular")
	if err := os.WriteFile(regular, []byte("contents"), 0o600); err != nil {
		t.Fatal(err)
	}
	folder := filepath.Join(dir, "folder")
	if err := os.Mkdir(folder, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	haveLinks := runtime.GOOS != "windows"
	if haveLinks {
		if err := os.Symlink(regular, link); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		path    string
		flag    int
		links   bool // needs symbolic links
		wantErr error
	}{
		{name: "regular file read", path: regular, flag: os.O_RDONLY},
		{name: "regular file appended to", path: regular, flag: os.O_WRONLY | os.O_APPEND},
		{name: "missing file", path: filepath.Join(dir, "missing"), flag: os.O_RDONLY, wantErr: fs.ErrNotExist},
		{name: "missing file created", path: filepath.Join(dir, "created"), flag: os.O_WRONLY | os.O_CREATE},
		{name: "folder", path: folder, flag: os.O_RDONLY, wantErr: ErrNotRegular},
		{name: "folder opened to write", path: folder, flag: os.O_WRONLY, wantErr: ErrNotRegular},
		{name: "link to a regular file read", path: link, flag: os.O_RDONLY, links: true, wantErr: ErrSymlink},
		{name: "link to a regular file created", path: link, flag: os.O_WRONLY | os.O_CREATE, links: true, wantErr: ErrSymlink},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.links && !haveLinks {
				t.Skip("creating symbolic links needs privileges on Windows")
			}
			f, err := Open(tt.path, tt.flag, 0o600)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Open(%s) = %v, want an error wrapping %v", tt.name, err, tt.wantErr)
				}
				if f != nil {
					t.Errorf("Open returned a file with its error")
				}
				return
			}
			if err != nil {
				t.Fatalf("Open(%s): %v", tt.name, err)
			}
			defer f.Close()
			info, err := f.Stat()
			if err != nil || !info.Mode().IsRegular() {
				t.Errorf("Stat of the opened file = %v, %v; want a regular file", info, err)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "created")); err != nil {
		t.Errorf("O_CREATE did not create the missing file: %v", err)
	}
	// The link's target was neither read through nor changed.
	if got := readFile(t, regular); got != "contents" {
		t.Errorf("the link's target holds %q, want it untouched", got)
	}
}

// A file Open hands back reads and writes as one from os.OpenFile does.
func TestOpenReadsAndWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	f, err := Open(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(f, "one,"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	f, err = Open(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(f, "two"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	f, err = Open(path, os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil || string(b) != "one,two" {
		t.Errorf("read back %q, %v; want %q", b, err, "one,two")
	}
}
