package workspace_test

import (
	"strings"
	"testing"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/termtext"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/workspace"
)

// The ambiguous-id message lists each candidate's title cut to 60 columns
// of a terminal, not 60 characters: a title in CJK is cut at half as many
// characters as an English one.
func TestAmbiguousErrorClipsTitlesToTheirWidth(t *testing.T) {
	tests := []struct{ title, listed string }{
		{strings.Repeat("x", 100), strings.Repeat("x", 59) + "…"},
		{strings.Repeat("漢", 100), strings.Repeat("漢", 29) + "…"},
		{"排他制御には楽観的ロックを使う。", "排他制御には楽観的ロックを使う。"},
	}
	for _, tt := range tests {
		err := &workspace.AmbiguousError{Prefix: "mem_0", Candidates: []workspace.Memory{
			{ID: "mem_00000001", Title: tt.title},
			{ID: "mem_00000002", Title: "Other"},
		}}
		_, after, _ := strings.Cut(err.Error(), "\n  mem_00000001  ")
		listed, _, _ := strings.Cut(after, "\n")
		if listed != tt.listed {
			t.Errorf("the ambiguous-id message lists %q as %q, want %q", tt.title, listed, tt.listed)
		}
		if w := termtext.Width(listed); w > 60 {
			t.Errorf("the ambiguous-id message lists %q in %d columns, more than 60", tt.title, w)
		}
	}
}
