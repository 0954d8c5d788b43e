// Package madialbench finds the English data of the MADial-Bench benchmark
// (NAACL 2025; MIT licence, source and commit in the README beside the
// data) in the repository: the memories and dialogues that membench embeds
// as real text. The repository's one copy is the test data of forgemem
// eval (cmd/forgemem/internal/eval/testdata/madial), which converts it
// into an evaluation dataset (forgemem eval --madial) and scores the
// benchmark authors' rankings in its tests.
package madialbench

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// The files of the folder [FS] returns.
const (
	// MemoryFile holds 160 lines, one memory each:
	// {"<id>": {"time", "scene", "emotion", "event"}}.
	MemoryFile = "memory-en.jsonl"
	// DialogueFile holds 160 lines: {"dialogue": [turns], "test-turn":
	// [i], "relevant-id": [memory ids], "user-id"}.
	DialogueFile = "dialogue-en.jsonl"
)

// Dir is the data's folder relative to the repository root.
const Dir = "cmd/forgemem/internal/eval/testdata/madial"

// FS returns the data folder of the repository around the working
// directory (the working directory or the nearest of its parents that
// holds [Dir]), with [MemoryFile] and [DialogueFile] at its root.
func FS() (fs.FS, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("madialbench: %w", err)
	}
	for d := wd; ; {
		candidate := filepath.Join(d, filepath.FromSlash(Dir))
		if _, err := os.Stat(filepath.Join(candidate, MemoryFile)); err == nil {
			return os.DirFS(candidate), nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return nil, fmt.Errorf("madialbench: no %s/%s in %s or its parents: run inside a forgemem checkout", Dir, MemoryFile, wd)
		}
		d = parent
	}
}
