//go:build unix

package e2e_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/tools/internal/fakemodel"
)

// codexPackage is the npm package of Codex CLI.
const codexPackage = "@openai/codex"

// codexConfig is the part of ~/.codex/config.toml that is the test's, not
// the user's set-up: the model provider is the fake (a model_providers
// entry with the Responses API at its base URL and a made-up key), and
// Codex's analytics, plugin sync (GitHub and chatgpt.com) and update check
// are off, so that it reaches nothing beyond 127.0.0.1. It comes first:
// TOML keys at the top level go before any table.
const codexConfig = `model = "gpt-5.5" # a model Codex knows: it defers MCP tools behind its tool search
model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "the fake model API of tools/internal/fakemodel"
base_url = "%s/v1"
env_key = "FAKE_MODEL_API_KEY"
wire_api = "responses"

[analytics]
enabled = false

[features]
plugins = false

`

// Codex CLI with forgemem's MCP server configured as docs/INTEGRATIONS.md
// says (its config.toml snippet), against the fake Responses API: the
// scripted model finds forgemem's tools with Codex's tool search, calls
// memory_recall and memory_remember, and both results come back in its
// next requests.
func TestCodexMemoryTools(t *testing.T) {
	realAgent(t)
	codex := nodeBin(t, codexPackage, "codex")
	// Codex offers MCP tools behind its tool search: the model looks them
	// up first.
	search := call(fakemodel.ToolSearch, map[string]any{"query": "memory recall remember", "limit": 8})
	m := newMachine(t, fakemodel.Options{Responses: memoryToolsScript(search), Chat: classifier()})
	m.link("codex", codex)
	m.setenv("FAKE_MODEL_API_KEY=test")
	m.useFakeModelForMemory()
	m.writeFile(filepath.Join(m.home, ".codex", "config.toml"),
		strings.Replace(codexConfig, "%s", m.model.URL(), 1)+snippet(t, "Codex", "toml"))
	seed := m.remember("Errors are wrapped with %w; callers check them with errors.Is.")

	out := m.ok("codex", "exec", "How do we wrap errors here? Remember that tests are table-driven.")
	if !strings.Contains(out, "Done.") {
		t.Errorf("codex exec did not print the model's answer:\n%s", out)
	}
	checkMemoryTools(t, m, fakemodel.APIResponses, 1, seed)
	m.noOutsideRequests()
	m.unknownRequests()
}
