package claudecode_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/claudecode"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/golden"
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
	golden.Check(t, filepath.Join("testdata", "settings.merged.golden.json"), data)
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
	res, err = claudecode.Install(path, command)
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
	golden.Check(t, filepath.Join("testdata", "settings.new.golden.json"), data)
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
	for cmd, want := range map[string]string{
		"forgemem hook claude-code":                            "forgemem",
		"/home/dev/go/bin/forgemem hook claude-code":           "/home/dev/go/bin/forgemem",
		`"/Users/dev/My Tools/forgemem" hook claude-code`:      "/Users/dev/My Tools/forgemem",
		`'/Users/dev/My Tools/fm' hook claude-code`:            "/Users/dev/My Tools/fm",
		`"/opt/a \"b\" \$HOME" hook claude-code`:               `/opt/a "b" $HOME`,
		`C:\tools\forgemem.exe hook claude-code`:               `C:\tools\forgemem.exe`,
		`"C:\\Program Files\\fm.exe" hook claude-code`:         `C:\Program Files\fm.exe`,
		"forgemem-old hook claude-code":                        "forgemem-old",
		"./fm hook claude-code":                                "./fm",
		"/tmp/go-build1234/b001/exe/forgemem hook claude-code": "/tmp/go-build1234/b001/exe/forgemem",
		"forgemem  hook claude-code":                           "forgemem",
		"   forgemem hook claude-code   ":                      "forgemem",
		"FORGEMEM_PROVIDER=openai forgemem hook claude-code":   "forgemem",
		// Someone else's hooks.
		"forgemem hook claude-code --verbose":           "",
		"notify-send forgemem hook claude-code-done":    "",
		"echo forgemem; other hook claude-code":         "",
		"notify-send done && forgemem hook claude-code": "",
		"/usr/local/bin/forgemem mcp":                   "",
		"hook claude-code":                              "",
		" hook claude-code":                             "",
		"X=1 hook claude-code":                          "",
		"$(which forgemem) hook claude-code":            "",
		"`which forgemem` hook claude-code":             "",
		`"$(which forgemem)" hook claude-code`:          "",
		`"/opt/forgemem hook claude-code`:               "",
		"forgemem < /dev/null hook claude-code":         "",
		"npx something hook claude-code":                "",
	} {
		bin, ok := claudecode.HookCommandBinary(cmd)
		if ok != (want != "") || bin != want {
			t.Errorf("HookCommandBinary(%q) = %q, %v; want %q", cmd, bin, ok, want)
		}
		if claudecode.IsHookCommand(cmd) != ok {
			t.Errorf("IsHookCommand(%q) != %v", cmd, ok)
		}
	}
}

// hooksOf reads the command hooks of each event of a settings file.
func hooksOf(t *testing.T, path string) map[string][]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for ev, groups := range s.Hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				out[ev] = append(out[ev], h.Command)
			}
		}
	}
	return out
}

// Binaries of three names — go build -o fm, a path, a quoted path — are
// recognised as forgemem by the command they run: three installs leave one
// hook per event, running the last one.
func TestInstallThreeBinaryNamesLeaveOneHookPerEvent(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".claude", "settings.json")
	cmds := []string{"fm hook claude-code", "/opt/tools/forgemem-dev hook claude-code", `"/home/dev/My Tools/forgemem" hook claude-code`}
	for i, cmd := range cmds {
		res, err := claudecode.Install(path, cmd)
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 && (len(res.Added) != 0 || len(res.Updated) != 3) {
			t.Errorf("install %d = %+v, want the three hooks updated", i+1, res)
		}
	}
	for _, ev := range claudecode.Events() {
		if got := hooksOf(t, path)[ev]; len(got) != 1 || got[0] != cmds[2] {
			t.Errorf("%s runs %q, want one hook running %q", ev, got, cmds[2])
		}
	}
	data, _ := os.ReadFile(path)
	res, err := claudecode.Install(path, cmds[2])
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(path); len(res.Present) != 3 || res.Backup != "" || string(again) != string(data) {
		t.Errorf("installing the same binary again = %+v and changed the file", res)
	}
}

// The copies earlier versions added, one per run, are removed: one hook
// per event is left, in the first one's place; the user's hooks stay.
func TestInstallRemovesDuplicates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	group := func(cmds ...string) string {
		var hs []string
		for _, c := range cmds {
			hs = append(hs, `{"type": "command", "command": "`+c+`", "timeout": 10}`)
		}
		return `{"hooks": [` + strings.Join(hs, ", ") + `]}`
	}
	content := `{"hooks": {"Stop": [` + group("/tmp/a/fm hook claude-code") + `, ` + group("notify-send done", "/tmp/b/fm2 hook claude-code") + `, ` +
		group("/tmp/c/fm3 hook claude-code") + `]}}`
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := claudecode.Install(path, command)
	if err != nil {
		t.Fatal(err)
	}
	if res.Duplicates != 2 || strings.Join(res.Updated, ",") != "Stop" || strings.Join(res.Added, ",") != "UserPromptSubmit,PreCompact" {
		t.Errorf("Install = %+v", res)
	}
	if got := hooksOf(t, path)["Stop"]; strings.Join(got, "|") != command+"|notify-send done" {
		t.Errorf("Stop runs %q", got)
	}
}

// A forgemem hook in another settings file Claude Code reads with this
// one (settings.json beside settings.local.json) is not doubled.
func TestInstallLeavesHooksFoundElsewhere(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".claude")
	shared := filepath.Join(dir, claudecode.SettingsFile)
	local := filepath.Join(dir, claudecode.LocalSettingsFile)
	if _, err := claudecode.Install(shared, command); err != nil {
		t.Fatal(err)
	}
	res, err := claudecode.Install(local, "/home/dev/bin/fm hook claude-code", shared)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Added) != 0 || len(res.Elsewhere) != 3 || res.Elsewhere[0].Path != shared || res.Elsewhere[0].Command != command {
		t.Errorf("Install = %+v, want the three hooks found in %s", res, shared)
	}
	if _, err := os.Stat(local); !os.IsNotExist(err) {
		t.Errorf("%s was written: %v", local, err)
	}
}

// Uninstall removes forgemem's hooks and nothing else: another hook of
// the same group stays, a group and an event left empty go, and so does
// "hooks" left with no event; the previous file is kept. A file without
// forgemem's hooks, or none, is not written.
func TestUninstall(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, claudecode.LocalSettingsFile)
	before := `{"permissions": {"allow": ["Bash(go test:*)"]}, "hooks": {` +
		`"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}, {"type": "command", "command": "/home/dev/bin/fm hook claude-code", "timeout": 10}]}],` +
		`"UserPromptSubmit": [{"matcher": "", "hooks": [{"type": "command", "command": "forgemem hook claude-code", "timeout": 10}]}]}}`
	if err := os.WriteFile(path, []byte(before), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := claudecode.Uninstall(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Removed, ",") != "UserPromptSubmit,Stop" || res.Backup != path+".bak" {
		t.Errorf("Uninstall = %+v, want UserPromptSubmit and Stop removed, a backup", res)
	}
	hooks := hooksOf(t, path)
	if strings.Join(hooks["Stop"], "|") != "notify-send done" || len(hooks["UserPromptSubmit"]) != 0 {
		t.Errorf("hooks left %v, want Stop's notify-send alone", hooks)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"Bash(go test:*)"`) || strings.Contains(string(data), "UserPromptSubmit") {
		t.Errorf("the file lost another key or kept an empty event:\n%s", data)
	}
	if backup, _ := os.ReadFile(path + ".bak"); string(backup) != before {
		t.Errorf("backup %q", backup)
	}

	// Nothing left of forgemem's: nothing written.
	again, err := claudecode.Uninstall(path)
	if err != nil || len(again.Removed) != 0 || again.Backup != "" {
		t.Errorf("Uninstall again = %+v, %v; want nothing removed or written", again, err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(data) {
		t.Error("uninstalling again changed the file")
	}
	// Only forgemem's hooks: "hooks" goes.
	only := filepath.Join(dir, "only.json")
	if _, err := claudecode.Install(only, command); err != nil {
		t.Fatal(err)
	}
	if _, err := claudecode.Uninstall(only); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(only); strings.TrimSpace(string(data)) != "{}" {
		t.Errorf("a file of forgemem's hooks alone is %q after Uninstall, want {}", data)
	}
	// No file: nothing to do.
	if res, err := claudecode.Uninstall(filepath.Join(dir, "none.json")); err != nil || len(res.Removed) != 0 {
		t.Errorf("Uninstall of no file = %+v, %v", res, err)
	}
}
