package atomicfile_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/forgemem/forgemem/memcore/atomicfile"
)

func ExampleWriteNew() {
	dir, _ := os.MkdirTemp("", "atomicfile")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "trigger-0001.json")

	fmt.Println(atomicfile.WriteNew(path, []byte(`{"kind":"cadence"}`), 0o600))
	err := atomicfile.WriteNew(path, []byte(`{"kind":"compaction"}`), 0o600)
	fmt.Println(errors.Is(err, fs.ErrExist))
	data, _ := os.ReadFile(path)
	fmt.Println(string(data))
	// Output:
	// <nil>
	// true
	// {"kind":"cadence"}
}

func ExampleReplace() {
	dir, _ := os.MkdirTemp("", "atomicfile")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "settings.json")

	for _, v := range []string{`{"cadence_turns":1}`, `{"cadence_turns":3}`} {
		if err := atomicfile.Replace(path, []byte(v), 0o600); err != nil {
			fmt.Println(err)
		}
	}
	data, _ := os.ReadFile(path)
	fmt.Println(string(data))
	// Output:
	// {"cadence_turns":3}
}

// The steps, for a writer that must check something under a lock between
// the write and the publish.
func ExamplePrepare() {
	dir, _ := os.MkdirTemp("", "atomicfile")
	defer os.RemoveAll(dir)
	var mu sync.Mutex

	p, err := atomicfile.Prepare(dir, ".tmp-note-*", []byte("remember this\n"), 0o600)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Discard() // removes the temporary file unless it was published
	mu.Lock()
	err = p.Link(filepath.Join(dir, "note.md"))
	mu.Unlock()
	fmt.Println(err)

	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		fmt.Println(e.Name())
	}
	// Output:
	// <nil>
	// note.md
}
