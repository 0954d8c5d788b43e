package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestGeneratedFilesAreCurrent: the committed assembly and stubs are what
// the generator writes now, so `go generate` would change nothing.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	for _, o := range outputs {
		asm, stubs, err := o.generate()
		if err != nil {
			t.Fatalf("%s: %v", o.dir, err)
		}
		for name, want := range map[string][]byte{o.asm: asm, o.stubs: stubs} {
			path := filepath.Join("../../..", o.dir, name)
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s is not what the generator writes: run `go run -C tools ./internal/asmgen` from the repository root and commit the result", path)
			}
		}
	}
}
