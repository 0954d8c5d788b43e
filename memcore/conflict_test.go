package memcore

import (
	"errors"
	"strings"
	"testing"
)

func TestMergeConflict(t *testing.T) {
	tests := []struct {
		name      string
		text      string
		open, end int // 0, 0: no conflict
	}{
		{"a conflict", "intro\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> feature\n", 2, 6},
		{"bare markers", "<<<<<<<\na\n=======\nb\n>>>>>>>", 1, 5},
		{"diff3 style", "<<<<<<< ours\na\n||||||| base\nb\n=======\nc\n>>>>>>> theirs\n", 1, 7},
		{"an empty side", "<<<<<<< HEAD\n=======\ntheirs\n>>>>>>> x\n", 1, 4},
		{"the last of two openings", "<<<<<<< a\nx\n<<<<<<< b\ny\n=======\nz\n>>>>>>> c\n", 3, 7},
		{"CRLF", "<<<<<<< HEAD\r\na\r\n=======\r\nb\r\n>>>>>>> x\r\n", 1, 5},
		{"no markers", "Use tabs.\nNot spaces.\n", 0, 0},
		{"a setext heading", "Title\n=======\n\nText.\n", 0, 0},
		{"markers out of order", ">>>>>>> x\n=======\n<<<<<<< y\n", 0, 0},
		{"no closing marker", "<<<<<<< HEAD\na\n=======\nb\n", 0, 0},
		{"no separator", "<<<<<<< HEAD\na\n>>>>>>> x\n", 0, 0},
		{"eight signs", "<<<<<<<< HEAD\na\n=======\nb\n>>>>>>>> x\n", 0, 0},
		{"markers mid-line", "see <<<<<<< HEAD\n=======\nand >>>>>>> x\n", 0, 0},
		{"indented markers", " <<<<<<< HEAD\na\n=======\nb\n >>>>>>> x\n", 0, 0},
		{"in a fenced code block", "A conflict looks like:\n```\n<<<<<<< HEAD\na\n=======\nb\n>>>>>>> x\n```\n", 0, 0},
		{"in a tilde fence", "~~~text\n<<<<<<< HEAD\na\n=======\nb\n>>>>>>> x\n~~~\n", 0, 0},
		{"after a closed fence", "```\ncode\n```\n<<<<<<< HEAD\na\n=======\nb\n>>>>>>> x\n", 4, 8},
		{"a fence indented four spaces is code", "    ```\n<<<<<<< HEAD\na\n=======\nb\n>>>>>>> x\n", 2, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			open, end, found := mergeConflict(tt.text)
			if found != (tt.open != 0) || open != tt.open || end != tt.end {
				t.Errorf("mergeConflict = %d, %d, %v; want %d, %d, %v", open, end, found, tt.open, tt.end, tt.open != 0)
			}
		})
	}
}

// A memory whose content holds a conflict cannot be written (it would make
// a file that is not read); one that shows a conflict in a code block can.
func TestValidateRefusesAMergeConflict(t *testing.T) {
	m := sample(idA)
	m.Content = "<<<<<<< HEAD\nUse tabs.\n=======\nUse spaces.\n>>>>>>> feature"
	err := m.Validate()
	if !errors.Is(err, ErrInvalidMemory) || !errors.Is(err, ErrMergeConflict) || !strings.Contains(err.Error(), "lines 1–5") {
		t.Errorf("Validate() = %v; want an invalid memory with a merge conflict at lines 1–5", err)
	}
	m.Content = "Resolve a conflict such as\n```\n<<<<<<< HEAD\na\n=======\nb\n>>>>>>> x\n```\nby keeping one side."
	if err := m.Validate(); err != nil {
		t.Errorf("Validate() of a conflict shown in a code block = %v", err)
	}
	raw, err := Serialize(m)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Parse(raw); err != nil || got.Content != m.Content {
		t.Errorf("Parse of a conflict shown in a code block = %v, %v", got, err)
	}
}
