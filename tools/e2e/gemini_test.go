//go:build unix

package e2e_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/tools/internal/fakemodel"
)

// geminiPackage is the npm package of Gemini CLI.
const geminiPackage = "@google/gemini-cli"

// geminiModel is the model the test names with -m: Gemini CLI's default
// (auto) first asks a routing model to pick one, which the fake does not
// script.
const geminiModel = "gemini-2.5-flash"

// geminiSettings are the keys of ~/.gemini/settings.json that are the
// test's, added to the user's set-up: an API key's authentication (which
// GOOGLE_GEMINI_BASE_URL points at the fake), usage statistics, telemetry
// and updates off, so that it reaches nothing beyond 127.0.0.1.
var geminiSettings = map[string]any{
	"security":  map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
	"privacy":   map[string]any{"usageStatisticsEnabled": false},
	"telemetry": map[string]any{"enabled": false},
	"general":   map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
}

// Gemini CLI with forgemem's MCP server configured as docs/INTEGRATIONS.md
// says (its settings.json snippet), against the fake Gemini API: the
// scripted model calls memory_recall and memory_remember, and both results
// come back in its next requests. Headless (-p), Gemini CLI offers the
// model only tools that need no confirmation, so the test runs it with
// --approval-mode yolo.
func TestGeminiCLIMemoryTools(t *testing.T) {
	realAgent(t)
	gemini := nodeBin(t, geminiPackage, "gemini")
	m := newMachine(t, fakemodel.Options{Gemini: memoryToolsScript(), Chat: classifier()})
	m.link("gemini", gemini)
	m.setenv("GEMINI_API_KEY=test", "GOOGLE_GEMINI_BASE_URL="+m.model.URL(), "GEMINI_CLI_TRUST_WORKSPACE=true")
	m.useFakeModelForMemory()
	var settings map[string]any
	if err := json.Unmarshal([]byte(snippet(t, "Gemini CLI", "json")), &settings); err != nil {
		t.Fatalf("the settings.json of docs/INTEGRATIONS.md: %v", err)
	}
	for k, v := range geminiSettings {
		settings[k] = v
	}
	data, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	m.writeFile(filepath.Join(m.home, ".gemini", "settings.json"), string(data))
	seed := m.remember("Errors are wrapped with %w; callers check them with errors.Is.")

	out := m.ok("gemini", "-m", geminiModel, "--approval-mode", "yolo", "-p", "How do we wrap errors here? Remember that tests are table-driven.")
	if !strings.Contains(out, "Done.") {
		t.Errorf("gemini -p did not print the model's answer:\n%s", out)
	}
	checkMemoryTools(t, m, fakemodel.APIGemini, 0, seed)
	m.noOutsideRequests()
	m.unknownRequests()
}
