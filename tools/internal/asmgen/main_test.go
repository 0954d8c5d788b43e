package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// vecmathDir is the vecmath package, from this directory.
const vecmathDir = "../../../memretrieve/internal/vecmath"

// TestGeneratedFilesAreCurrent: the committed assembly and stubs are what
// the generator writes now, so `go generate` in the vecmath package would
// change nothing.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	asm, stubs, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]byte{asmFile: asm, stubFile: stubs} {
		got, err := os.ReadFile(filepath.Join(vecmathDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what the generator writes: run `go generate` in memretrieve/internal/vecmath and commit the result", name)
		}
	}
}

// TestGenerateLineMatchesHeader: the vecmath package's //go:generate line
// is the command the generated files say made them.
func TestGenerateLineMatchesHeader(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(vecmathDir, "vecmath.go"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(src), "\n") {
		if after, ok := strings.CutPrefix(l, "//go:generate "); ok {
			lines = append(lines, after)
		}
	}
	if want := strings.Join(command, " "); len(lines) != 1 || lines[0] != want {
		t.Errorf("vecmath.go's go:generate lines are %q, want exactly %q", lines, want)
	}
}
