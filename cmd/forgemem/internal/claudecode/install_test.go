package claudecode_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/claudecode"
)

const command = "forgemem hook claude-code"

// existing is a settings file a user has: permissions, an environment
// variable, another Stop hook and a PostToolUse hook, in their order.
const existing = `{
  "permissions": {"allow": ["Bash(go test:*)"]},
  "env": {"GOFLAGS": "-mod=mod"},
  "hooks": {
    "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    "PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "gofmt -w \"$FILE\""}]}]
  },
  "model": "sonnet"
}
`

func TestInstallMergesWithWhatIsThere(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(existing), 0o640); err != nil {
		t.Fatal(err)
	}
	res, err := claudecode.Install(path, command)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Added, ",") != "UserPromptSubmit,Stop,PreCompact" || res.Created || res.Backup != path+".bak" {
		t.Errorf("Install = %+v", res)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "settings.merged.golden.json", data)
	if backup, err := os.ReadFile(path + ".bak"); err != nil || string(backup) != existing {
		t.Errorf("backup = %q, %v; want the previous file", backup, err)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, %v; want the previous file's 0640", info.Mode(), err)
	}

	// Claude Code's shape: every event a list of groups of command hooks.
	var s struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Type    string `json:"type"`
				Command string `json:"command"`
				Timeout int    `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	for _, ev := range claudecode.Events() {
		groups := s.Hooks[ev]
		last := groups[len(groups)-1]
		if len(last.Hooks) != 1 || last.Hooks[0].Type != "command" || last.Hooks[0].Command != command || last.Hooks[0].Timeout != claudecode.HookTimeout {
			t.Errorf("%s: %+v", ev, groups)
		}
	}
	if len(s.Hooks["Stop"]) != 2 || s.Hooks["Stop"][0].Hooks[0].Command != "notify-send done" || len(s.Hooks["PostToolUse"]) != 1 {
		t.Errorf("the user's own hooks changed: %+v", s.Hooks)
	}

	// Installing again changes nothing: no duplicate, no new backup.
	if err := os.Remove(path + ".bak"); err != nil {
		t.Fatal(err)
	}
	res, err = claudecode.Install(path, "/opt/bin/forgemem hook claude-code")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Added) != 0 || len(res.Present) != 3 || res.Backup != "" {
		t.Errorf("second Install = %+v, want nothing added", res)
	}
	if again, _ := os.ReadFile(path); string(again) != string(data) {
		t.Errorf("the second install changed the file:\n%s", again)
	}
	if _, err := os.Stat(path + ".bak"); !os.IsNotExist(err) {
		t.Errorf("the second install made a backup: %v", err)
	}
}

func TestInstallCreatesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "home", ".claude", "settings.json")
	res, err := claudecode.Install(path, command)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Created || res.Backup != "" || len(res.Added) != 3 {
		t.Errorf("Install = %+v", res)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "settings.new.golden.json", data)
}

// A settings file linked from a dotfiles repository is written where it
// points; the link stays.
func TestInstallFollowsALinkedSettingsFile(t *testing.T) {
	root := t.TempDir()
	target := filepath.Join(root, "dotfiles", "claude-settings.json")
	link := filepath.Join(root, ".claude", "settings.json")
	for _, d := range []string{filepath.Dir(target), filepath.Dir(link)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(target, []byte(`{"model": "opus"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	res, err := claudecode.Install(link, command)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := os.Lstat(link); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
	data, _ := os.ReadFile(target)
	if res.Path != target || !strings.Contains(string(data), command) || !strings.Contains(string(data), `"model": "opus"`) {
		t.Errorf("Install = %+v; the target holds:\n%s", res, data)
	}
}

func TestInstallRefusesWhatItCannotMerge(t *testing.T) {
	for name, content := range map[string]string{
		"not JSON":             `{"hooks": `,
		"not an object":        `["hooks"]`,
		"hooks not an object":  `{"hooks": []}`,
		"an event not a list":  `{"hooks": {"Stop": {"command": "x"}}}`,
		"two values":           `{} {}`,
		"a trailing non-value": `{"a": 1} x`,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "settings.json")
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := claudecode.Install(path, command); !errors.Is(err, claudecode.ErrSettingsFile) {
				t.Errorf("Install = %v, want ErrSettingsFile", err)
			}
			if data, _ := os.ReadFile(path); string(data) != content {
				t.Errorf("the file changed: %s", data)
			}
			if _, err := os.Stat(path + ".bak"); !os.IsNotExist(err) {
				t.Errorf("a backup was written: %v", err)
			}
		})
	}
}

func TestIsHookCommand(t *testing.T) {
	for cmd, want := range map[string]bool{
		"forgemem hook claude-code":                          true,
		"/home/dev/go/bin/forgemem hook claude-code":         true,
		`"/Users/dev/My Tools/forgemem" hook claude-code`:    true,
		`C:\tools\forgemem.exe hook claude-code`:             true,
		"forgemem hook claude-code --verbose":                false,
		"forgemem-old hook claude-code":                      false,
		"notify-send forgemem hook claude-code-done":         false,
		"echo forgemem; other hook claude-code":              false,
		"/usr/local/bin/forgemem mcp":                        false,
		"forgemem  hook claude-code":                         true,
		"   forgemem hook claude-code   ":                    true,
		"FORGEMEM_PROVIDER=openai forgemem hook claude-code": true,
	} {
		if got := claudecode.IsHookCommand(cmd); got != want {
			t.Errorf("IsHookCommand(%q) = %v, want %v", cmd, got, want)
		}
	}
}
