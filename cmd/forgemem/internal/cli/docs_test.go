package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/claudecode"
	"github.com/forgemem/forgemem/settings"
)

// readme is the repository's README.
func readme(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../../../../README.md")
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

// TestIntegrationSnippets checks docs/INTEGRATIONS.md's copyable snippets:
// every JSON one parses; the Claude Code hooks are what hook install
// writes; every MCP server entry runs forgemem mcp with arguments the
// command takes; and Codex's TOML table is there.
func TestIntegrationSnippets(t *testing.T) {
	data, err := os.ReadFile("../../../../docs/INTEGRATIONS.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	blocks := regexp.MustCompile("(?s)```json\n(.*?)```").FindAllStringSubmatch(doc, -1)
	if len(blocks) < 5 {
		t.Fatalf("found %d JSON snippets, want the hooks, .mcp.json, Cursor, Cline and Gemini CLI", len(blocks))
	}
	f := newFixture(t)
	var servers, hooks int
	for _, b := range blocks {
		var snippet struct {
			Hooks      json.RawMessage `json:"hooks"`
			MCPServers map[string]struct {
				Command string   `json:"command"`
				Args    []string `json:"args"`
			} `json:"mcpServers"`
		}
		if err := json.Unmarshal([]byte(b[1]), &snippet); err != nil {
			t.Errorf("a JSON snippet does not parse: %v\n%s", err, b[1])
			continue
		}
		if snippet.Hooks != nil {
			hooks++
			path := filepath.Join(t.TempDir(), "settings.json")
			if _, err := claudecode.Install(path, "forgemem "+claudecode.HookArgs); err != nil {
				t.Fatal(err)
			}
			written, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var want, got any
			if err := json.Unmarshal(written, &want); err != nil {
				t.Fatal(err)
			}
			_ = json.Unmarshal([]byte(b[1]), &got)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("the hooks snippet differs from what hook install writes:\n%s\nwant:\n%s", b[1], written)
			}
		}
		for name, s := range snippet.MCPServers {
			servers++
			if name != "forgemem" || s.Command != "forgemem" || len(s.Args) == 0 || s.Args[0] != "mcp" {
				t.Errorf("MCP server %q runs %s %v, want forgemem mcp", name, s.Command, s.Args)
				continue
			}
			if r := f.run(append(append([]string{}, s.Args...), "--help")...); r.code != 0 {
				t.Errorf("forgemem %v refuses its arguments: %s", s.Args, r.stderr)
			}
		}
	}
	if hooks != 1 || servers < 4 {
		t.Errorf("found %d hooks snippets and %d MCP server entries, want 1 and at least 4", hooks, servers)
	}
	if !strings.Contains(doc, "[mcp_servers.forgemem]\ncommand = \"forgemem\"\nargs = [\"mcp\"]\n") {
		t.Error("the Codex snippet is not the [mcp_servers.forgemem] table running forgemem mcp")
	}
}
