package cli

import "testing"

// The keys that end what is typed at a terminal are named as the terminal
// of each operating system takes them: Ctrl-D ends nothing in a Windows
// console.
func TestEndOfInput(t *testing.T) {
	tests := []struct{ goos, want string }{
		{"linux", "Ctrl-D"},
		{"darwin", "Ctrl-D"},
		{"freebsd", "Ctrl-D"},
		{"windows", "Ctrl-Z then Enter"},
	}
	for _, tt := range tests {
		if got := endOfInput(tt.goos); got != tt.want {
			t.Errorf("endOfInput(%q) = %q, want %q", tt.goos, got, tt.want)
		}
	}
}
