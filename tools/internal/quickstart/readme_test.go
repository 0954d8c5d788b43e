package quickstart_test

import (
	"os"
	"strings"
	"testing"
)

// TestREADMEShowsTheQuickStart checks that the repository's README shows
// the code of quickstart.go between its markers, so the snippet people copy
// is code that compiles and runs.
func TestREADMEShowsTheQuickStart(t *testing.T) {
	src, err := os.ReadFile("quickstart.go")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(src), "// quickstart:begin\n")
	code, _, ok2 := strings.Cut(rest, "// quickstart:end")
	if !ok || !ok2 {
		t.Fatal("quickstart.go lacks its markers")
	}
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```go\n"+strings.TrimRight(code, "\n")+"\n```") {
		t.Fatalf("README.md does not show quickstart.go's code in a go block; paste it again:\n%s", code)
	}
}
