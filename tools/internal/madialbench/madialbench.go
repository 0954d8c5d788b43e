// Package madialbench holds the English data of the MADial-Bench benchmark
// (NAACL 2025; MIT licence, source and commit in README.md beside this
// file), the one copy in the repository: the memories and dialogues that
// forgemem eval --madial converts into an evaluation dataset and membench
// embeds as real text, and the benchmark authors' top-20 rankings that the
// evaluation's tests score to check its metrics against the published
// figures.
package madialbench

import (
	"embed"
	"io/fs"
)

//go:embed memory-en.jsonl dialogue-en.jsonl
var data embed.FS

// The files of FS.
const (
	// MemoryFile holds 160 lines, one memory each:
	// {"<id>": {"time", "scene", "emotion", "event"}}.
	MemoryFile = "memory-en.jsonl"
	// DialogueFile holds 160 lines: {"dialogue": [turns], "test-turn":
	// [i], "relevant-id": [memory ids], "user-id"}.
	DialogueFile = "dialogue-en.jsonl"
)

// FS returns the memory and dialogue files, MemoryFile and DialogueFile, at
// its root: what eval.MADial reads.
func FS() fs.FS { return data }
