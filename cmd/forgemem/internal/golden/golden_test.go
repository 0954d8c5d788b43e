package golden

import (
	"strings"
	"testing"
)

func TestFirstDifference(t *testing.T) {
	tests := []struct{ got, want, says string }{
		{"a\nb\nc", "a\nx\nc", "line 2:\n got: \"b\"\nwant: \"x\""},
		{"a\nb", "a\nb\nc", "line 3:\n got: \"\"\nwant: \"c\""},
		{"a", "a", "(no line differs)"},
	}
	for _, tt := range tests {
		if got := FirstDifference(tt.got, tt.want); !strings.Contains(got, tt.says) {
			t.Errorf("FirstDifference(%q, %q) = %q, want %q", tt.got, tt.want, got, tt.says)
		}
	}
}
