package cli_test

import (
	"os"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/settings"
)

// readme is the repository's README.
func readme(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestREADMEDocumentsEveryCommand checks that the command reference names
// every command of the tree.
func TestREADMEDocumentsEveryCommand(t *testing.T) {
	f := newFixture(t)
	help := f.run("--help").stdout
	doc := readme(t)
	for _, line := range strings.Split(help, "\n") {
		fields := strings.Fields(line)
		if !strings.HasPrefix(line, "  ") || len(fields) < 2 || fields[0] == "forgemem" || fields[0] == "help" || fields[0] == "completion" || strings.HasPrefix(fields[0], "-") {
			continue
		}
		if !strings.Contains(doc, "| `forgemem "+fields[0]) {
			t.Errorf("README.md's command reference lacks forgemem %s", fields[0])
		}
	}
}

// TestREADMEListsTheSettings checks that the README's settings table is
// the settings module's.
func TestREADMEListsTheSettings(t *testing.T) {
	if !strings.Contains(readme(t), settings.Reference()) {
		t.Errorf("README.md's settings table differs from settings.Reference(); paste it again:\n%s", settings.Reference())
	}
}
