package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// entries lists the names in dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWriteNew(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	if err := WriteNew(path, []byte("first"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path); got != "first" {
		t.Errorf("file holds %q, want %q", got, "first")
	}
	// An existing name: fs.ErrExist, the file untouched, no temporary file.
	err := WriteNew(path, []byte("second"), 0o600)
	if !errors.Is(err, fs.ErrExist) {
		t.Errorf("WriteNew over an existing file = %v, want fs.ErrExist", err)
	}
	if got := readFile(t, path); got != "first" {
		t.Errorf("the existing file changed to %q", got)
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Errorf("folder holds %v, want only settings.json", names)
	}
}

func TestReplace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cache.bin")
	for _, data := range []string{"one", "two, longer", "3"} {
		if err := Replace(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, path); got != data {
			t.Errorf("file holds %q, want %q", got, data)
		}
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Errorf("folder holds %v, want only cache.bin", names)
	}
}

// Link on an existing name: fs.ErrExist, the original intact, and the
// temporary file still there to Discard or Rename.
func TestLinkOnExistingName(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "memory.md")
	if err := os.WriteFile(path, []byte("original"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := Prepare(dir, ".tmp-memory-*", []byte("newcomer"), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Link(path); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Link = %v, want fs.ErrExist", err)
	}
	if got := readFile(t, path); got != "original" {
		t.Errorf("the existing file changed to %q", got)
	}
	if got := readFile(t, p.Name()); got != "newcomer" {
		t.Errorf("the temporary file holds %q after a failed Link", got)
	}
	if err := p.Discard(); err != nil {
		t.Fatal(err)
	}
	if names := entries(t, dir); len(names) != 1 || names[0] != "memory.md" {
		t.Errorf("folder holds %v after Discard, want only memory.md", names)
	}
}

// The steps: the temporary file is hidden and complete before it is
// published; Link and Rename remove its name; Discard is a no-op after a
// publish and removes an unpublished file; a used Pending cannot publish
// again.
func TestPendingSteps(t *testing.T) {
	dir := t.TempDir()
	for _, publish := range []string{"Link", "Rename"} {
		t.Run(publish, func(t *testing.T) {
			path := filepath.Join(dir, publish+".txt")
			p, err := Prepare(dir, ".tmp-"+publish+"-*", []byte("data"), 0o600)
			if err != nil {
				t.Fatal(err)
			}
			if base := filepath.Base(p.Name()); filepath.Dir(p.Name()) != dir || !strings.HasPrefix(base, ".tmp-"+publish+"-") {
				t.Errorf("temporary file %q: want a hidden .tmp-%s-… in %s", p.Name(), publish, dir)
			}
			if got := readFile(t, p.Name()); got != "data" {
				t.Errorf("prepared file holds %q", got)
			}
			if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the final name exists before the publish: %v", err)
			}
			if publish == "Link" {
				err = p.Link(path)
			} else {
				err = p.Rename(path)
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(p.Name()); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the temporary name survived the publish: %v", err)
			}
			if err := p.Discard(); err != nil {
				t.Errorf("Discard after a publish = %v", err)
			}
			if got := readFile(t, path); got != "data" {
				t.Errorf("published file holds %q", got)
			}
			if err := p.Rename(path + ".again"); err == nil {
				t.Error("a published Pending published again")
			}
			if err := p.Link(path + ".again"); err == nil {
				t.Error("a published Pending linked again")
			}
		})
	}
	p, err := Prepare(dir, ".tmp-dropped-*", []byte("x"), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Discard(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p.Name()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Discard left the temporary file: %v", err)
	}
	if err := p.Rename(filepath.Join(dir, "dropped")); err == nil {
		t.Error("a discarded Pending was published")
	}
}

// A failed Prepare leaves nothing behind.
func TestPrepareErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Prepare(filepath.Join(dir, "missing"), ".tmp-*", []byte("x"), 0o600); err == nil {
		t.Error("Prepare in a missing folder succeeded")
	}
	if err := WriteNew(filepath.Join(dir, "missing", "f"), []byte("x"), 0o600); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("WriteNew in a missing folder = %v, want fs.ErrNotExist", err)
	}
	if _, err := Prepare(dir, "bad/pattern-*", []byte("x"), 0o600); err == nil {
		t.Error("Prepare with a path separator in the pattern succeeded")
	}
	if names := entries(t, dir); len(names) != 0 {
		t.Errorf("failed writes left %v", names)
	}
}

// The file gets exactly the permissions asked for, whatever the umask.
func TestPermissions(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows has no Unix permission bits")
	}
	dir := t.TempDir()
	for i, perm := range []fs.FileMode{0o600, 0o640, 0o644, 0o666, 0o400} {
		for _, write := range []struct {
			name string
			fn   func(string, []byte, fs.FileMode) error
		}{{"WriteNew", WriteNew}, {"Replace", Replace}} {
			path := filepath.Join(dir, fmt.Sprintf("%s-%d", write.name, i))
			if err := write.fn(path, []byte("x"), perm); err != nil {
				t.Fatal(err)
			}
			info, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := info.Mode().Perm(); got != perm {
				t.Errorf("%s with %v: file has mode %v", write.name, perm, got)
			}
		}
	}
}

// Goroutines racing to create one name: exactly one wins, and the file
// holds the winner's data whole.
func TestWriteNewRace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "contested")
	const writers = 8
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = WriteNew(path, []byte(strings.Repeat(fmt.Sprint(i), 4096)), 0o600)
		}()
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner < 0:
			winner = i
		case err == nil:
			t.Errorf("writers %d and %d both created the file", winner, i)
		case !errors.Is(err, fs.ErrExist):
			t.Errorf("writer %d: %v, want fs.ErrExist", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no writer created the file")
	}
	if got := readFile(t, path); got != strings.Repeat(fmt.Sprint(winner), 4096) {
		t.Errorf("the file does not hold the winner's data whole")
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Errorf("folder holds %v, want only the file", names)
	}
}
