package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/cli"
)

func TestConfigPrecedence(t *testing.T) {
	f := newFixture(t)
	// Each source sets what the later ones leave alone; later sources win.
	f.writeFile(filepath.Join(f.home, ".forge", "config.yaml"), `memory:
  provider: openai
  cadence_turns: 2
  retrieval_top_k: 20
  embedding_model: from-user-file
`)
	f.writeFile(filepath.Join(f.repo, ".forge", "config.yaml"), `memory:
  cadence_turns: 3
  retrieval_top_k: 30
`)
	extra := filepath.Join(f.root, "team.yaml")
	f.writeFile(extra, "memory:\n  retrieval_top_k: 40\n  retrieval_hop_depth: 2\n")
	f.env = []string{"FORGEMEM_RETRIEVAL_HOP_DEPTH=3", "FORGEMEM_INJECTION_TOKEN_BUDGET=500", "OPENAI_API_KEY=sk-never-printed-1234"}
	r := f.run("--config", extra, "--provider", "fake", "--retrieval-min-score", "0.2", "config")
	f.check("config", r, cli.ExitOK)
	if strings.Contains(r.stdout+r.stderr, "sk-never-printed") {
		t.Error("config printed the API key")
	}
}

func TestConfigOutsideARepository(t *testing.T) {
	f := newFixture(t)
	r := f.runIn(context.Background(), t.TempDir(), "", "config")
	f.t = t
	f.check("config_outside", r, cli.ExitOK)
}

func TestSettingsErrors(t *testing.T) {
	tests := []struct {
		name string
		// userFile is ~/.forge/config.yaml; "" writes none.
		userFile string
		env      []string
		args     []string
		code     int
		stderr   string
	}{
		{"unknown key in a file", "memory:\n  cadense_turns: 3\n", nil, []string{"list"}, cli.ExitFailure,
			"config.yaml:2: unknown key memory.cadense_turns (did you mean memory.cadence_turns?)"},
		{"value out of range in a file", "memory:\n  cadence_turns: 11\n", nil, []string{"list"}, cli.ExitFailure,
			"config.yaml:2: memory.cadence_turns is 11, want 1–10"},
		{"wrong type in a file", "memory:\n  retrieval_top_k: ten\n", nil, []string{"list"}, cli.ExitFailure,
			"memory.retrieval_top_k is ten, want an integer in 1–100"},
		{"secret in a file", "memory:\n  openai_api_key: sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z\n", nil, []string{"list"}, cli.ExitFailure,
			"memory.openai_api_key: API keys are not read from settings files (the value is not shown); set OPENAI_API_KEY"},
		{"malformed file", "memory:\n  cadence_turns: [1\n", nil, []string{"list"}, cli.ExitFailure,
			"malformed settings file"},
		{"missing --config file", "", nil, []string{"--config", "/nonexistent/team.yaml", "list"}, cli.ExitUsage,
			"/nonexistent/team.yaml: cannot read the settings file"},
		{"missing FORGEMEM_CONFIG file", "", []string{"FORGEMEM_CONFIG=/nonexistent/team.yaml"}, []string{"list"}, cli.ExitFailure,
			"/nonexistent/team.yaml: cannot read the settings file"},
		{"unknown variable", "", []string{"FORGEMEM_PROVIDR=openai"}, []string{"list"}, cli.ExitFailure,
			"unknown environment variable FORGEMEM_PROVIDR (did you mean FORGEMEM_PROVIDER?)"},
		{"bad variable", "", []string{"FORGEMEM_RETRIEVAL_TIMEOUT=2"}, []string{"list"}, cli.ExitFailure,
			"environment variable FORGEMEM_RETRIEVAL_TIMEOUT is 2, want a duration"},
		{"bad --provider", "", nil, []string{"--provider", "openia", "list"}, cli.ExitUsage,
			"flag --provider is openia, want fake, openai or gemini (did you mean openai?)"},
		{"bad settings flag", "", nil, []string{"--cadence-turns", "11", "list"}, cli.ExitUsage,
			"flag --cadence-turns is 11, want 1–10"},
		{"bad --provider with a bad file", "memory:\n  cadence_turns: 0\n", nil, []string{"--provider", "x", "list"}, cli.ExitFailure,
			"memory.cadence_turns is 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			if tt.userFile != "" {
				f.writeFile(filepath.Join(f.home, ".forge", "config.yaml"), tt.userFile)
			}
			f.env = tt.env
			r := f.run(tt.args...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d and %q", r.code, r.stderr, tt.code, tt.stderr)
			}
			if strings.Contains(r.stderr, "Ab3dEf6h") {
				t.Error("the error shows the secret")
			}
		})
	}
}

func TestUnreadableSettingsFile(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads any file")
	}
	f := newFixture(t)
	path := filepath.Join(f.home, ".forge", "config.yaml")
	f.writeFile(path, "memory:\n  cadence_turns: 2\n")
	if err := os.Chmod(path, 0); err != nil {
		t.Fatal(err)
	}
	r := f.run("list")
	if r.code != cli.ExitFailure || !strings.Contains(r.stderr, "cannot read the settings file: permission denied") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		stderr string
	}{
		{"unknown command", []string{"lsit"}, "unknown command \"lsit\" for \"forgemem\"\n\nDid you mean this?\n\tlist"},
		{"unknown flag", []string{"list", "--all"}, "unknown flag: --all"},
		{"unknown global flag", []string{"--repo", "x", "list"}, "unknown flag: --repo"},
		{"too many arguments", []string{"show", "a", "b"}, "forgemem show: show takes one id (got 2: \"a\", \"b\"); show them one at a time\n"},
		{"arguments to a command that takes none", []string{"stats", "now"}, "forgemem stats: stats takes no arguments (got \"now\")\n"},
		{"missing argument", []string{"show"}, "forgemem show: show needs the id of a memory: forgemem show mem_1b4e28ba; forgemem list lists them\n"},
		{"no conversation to capture", []string{"capture"}, "forgemem capture: give the conversation to capture: a JSON Lines file, or - to read it from standard input\n"},
		{"two conversations to capture", []string{"capture", "a.jsonl", "b.jsonl"}, "forgemem capture: give one conversation, not 2: capture runs one pass over one conversation\n"},
		{"an id given to review", []string{"review", "1b4e28ba"}, "forgemem review: review takes no argument, got \"1b4e28ba\": to approve or reject one memory, give --approve 1b4e28ba or --reject 1b4e28ba; forgemem review alone asks about each\n"},
		{"a huge argument given to review", []string{"review", strings.Repeat("1b4e", 1000)}, "got \"" + strings.Repeat("1b4e", 9) + "1b4…\""},
		{"an empty id to approve", []string{"review", "--approve", ""}, "forgemem review: --approve is empty: give the id of a memory that waits (forgemem review --json lists them)\n"},
		{"an empty id to reject", []string{"review", "--reject", " "}, "forgemem review: --reject is empty: give the id of a memory that waits (forgemem review --json lists them)\n"},
		{"flag without value", []string{"search", "x", "--limit"}, "--limit needs a value: a whole number"},
		{"flag of the wrong type", []string{"search", "x", "--limit", "many"}, "--limit: \"many\" is not a whole number"},
		{"invalid category", []string{"list", "--category", "prefs"}, "--category \"prefs\" is not one of coding-preferences"},
		{"invalid format", []string{"graph", "--format", "png"}, "--format \"png\" is not one of mermaid, dot"},
		{"status and stop", []string{"recall-server", "--status", "--stop"}, "recall-server: give --status or --stop, not both\n"},
		{"json without status", []string{"recall-server", "--json"}, "recall-server: give --json with --status only: --stop and the server itself print no JSON\n"},
		{"json with stop", []string{"recall-server", "--stop", "--json"}, "recall-server: give --json with --status only: --stop and the server itself print no JSON\n"},
		{"recall server idle zero", []string{"recall-server", "--idle", "0"}, "--idle: 0s is not a positive duration; give one such as 30s or 10m"},
		{"recall server idle negative", []string{"recall-server", "--idle", "-5s"}, "--idle: -5s is not a positive duration; give one such as 30s or 10m"},
		{"worker idle negative", []string{"worker", "--idle", "-1s"}, "--idle: -1s is negative; give 0 to exit once the queue is empty, or a duration such as 30s or 10m"},
	}
	f := newFixture(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.run(tt.args...)
			if r.code != cli.ExitUsage || !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and %q", r.code, r.stderr, tt.stderr)
			}
			if r.stdout != "" {
				t.Errorf("a usage error printed to stdout: %q", r.stdout)
			}
		})
	}
}

// Every command that takes no arguments says so of one, quoting what was
// given (a few, each cut short), and what to do instead where that helps:
// never cobra's unknown command "extra" for "forgemem list".
func TestNoArguments(t *testing.T) {
	tests := []struct {
		args []string
		says string // the first line of stderr
	}{
		{[]string{"list", "extra"}, `forgemem list: list takes no arguments (got "extra"); filter with the flags --scope, --category, --pending, --retired, --all-versions or --stale; forgemem search TEXT finds memories by their text`},
		{[]string{"list", "--scope", "repo", "*.tmp", "b"}, `forgemem list: list takes no arguments (got "*.tmp", "b"); filter with the flags`},
		{[]string{"stats", "a", "b", "c", "d", "e"}, `forgemem stats: stats takes no arguments (got "a", "b", "c" and 2 more)`},
		{[]string{"stats", strings.Repeat("x", 1000)}, `forgemem stats: stats takes no arguments (got "` + strings.Repeat("x", 39) + `…")`},
		{[]string{"export", "x"}, `forgemem export: export takes no arguments (got "x"); it prints every memory`},
		{[]string{"graph", "x"}, `forgemem graph: graph takes no arguments (got "x"); it draws every memory`},
		{[]string{"validate", "x"}, `forgemem validate: validate takes no arguments (got "x"); it checks every memory file`},
		{[]string{"config", "memory.provider"}, `forgemem config: config takes no arguments (got "memory.provider"); it prints every setting; forgemem help settings says what each does`},
		{[]string{"demo", "x"}, `forgemem demo: demo takes no arguments (got "x"); give --dir DIR`},
		{[]string{"eval", "data.jsonl"}, `forgemem eval: eval takes no arguments (got "data.jsonl"); give the dataset with --dataset FILE`},
		{[]string{"chat", "hello"}, `forgemem chat: chat takes no arguments (got "hello"); type your messages once it has started`},
		{[]string{"mcp", "x"}, `forgemem mcp: mcp takes no arguments (got "x")`},
		{[]string{"recall-server", "x"}, `forgemem recall-server: recall-server takes no arguments (got "x")`},
		{[]string{"worker", "x"}, `forgemem worker: worker takes no arguments (got "x")`},
		// A help topic run as a command: cobra ignored its arguments and
		// showed it, as if it showed the setting named.
		{[]string{"settings", "retrieval_top_k"}, `forgemem settings: settings takes no arguments (got "retrieval_top_k"); it lists every setting; forgemem config shows the value of each in effect`},
		{[]string{"settings", "--repo-dir", "x", "a", "b"}, `forgemem settings: settings takes no arguments (got "a", "b"); it lists every setting`},
		// cobra's completion commands, whose cobra.NoArgs said unknown
		// command "extra" for "forgemem completion bash".
		{[]string{"completion", "bash", "extra"}, `forgemem completion bash: bash takes no arguments (got "extra"); it prints forgemem's completion script for bash`},
		{[]string{"completion", "zsh", "a", "b"}, `forgemem completion zsh: zsh takes no arguments (got "a", "b"); it prints forgemem's completion script for zsh`},
		{[]string{"completion", "fish", "--no-descriptions", "x"}, `forgemem completion fish: fish takes no arguments (got "x"); it prints forgemem's completion script for fish`},
		{[]string{"completion", "powershell", "x"}, `forgemem completion powershell: powershell takes no arguments (got "x"); it prints forgemem's completion script for powershell`},
	}
	f := newFixture(t)
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := f.run(tt.args...)
			first, _, _ := strings.Cut(r.stderr, "\n")
			if r.code != cli.ExitUsage || !strings.HasPrefix(first, tt.says) || r.stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 2, nothing on stdout and a line starting %q", r.code, r.stdout, r.stderr, tt.says)
			}
		})
	}
	// The hook's command line errors still exit 0 (TestHookCommandLineErrorsNeverBreakTheTurn),
	// in the same words.
	r := f.runIn(t.Context(), f.root, "{}", "hook", "claude-code", "extra")
	if r.code != cli.ExitOK || !strings.Contains(r.stderr, `claude-code takes no arguments (got "extra"); it reads the hook's event as JSON from stdin`) {
		t.Errorf("hook claude-code extra: exit %d, stderr %q", r.code, r.stderr)
	}
}

// Every command that takes arguments says so of too few or too many, in
// its own words, quoting what was given and saying what to do instead:
// never cobra's accepts 1 arg(s), received 2.
func TestArgumentCounts(t *testing.T) {
	tests := []struct {
		args []string
		says string // the first line of stderr
	}{
		{[]string{"show"}, `forgemem show: show needs the id of a memory: forgemem show mem_1b4e28ba; forgemem list lists them`},
		{[]string{"show", "a", "b"}, `forgemem show: show takes one id (got 2: "a", "b"); show them one at a time`},
		{[]string{"show", "a", "b", "c", "d", "e"}, `forgemem show: show takes one id (got 5: "a", "b", "c" and 2 more); show them one at a time`},
		{[]string{"show", "--json", "a", strings.Repeat("x", 1000)}, `forgemem show: show takes one id (got 2: "a", "` + strings.Repeat("x", 39) + `…"); show them one at a time`},
		{[]string{"forget"}, `forgemem forget: forget needs the id of the memory to forget: forgemem forget mem_1b4e28ba --reason "we moved to Postgres"; forgemem list lists them`},
		{[]string{"forget", "1b4e28ba", "we", "moved"}, `forgemem forget: forget takes one id (got 3: "1b4e28ba", "we", "moved"); forget them one at a time; give why with --reason "…", in quotes`},
		{[]string{"purge"}, `forgemem purge: purge needs the id of the memory to delete: forgemem purge mem_1b4e28ba; forgemem list --retired lists them, forgotten ones too`},
		{[]string{"purge", "1b4e28ba", "7c2d0000", "--yes"}, `forgemem purge: purge takes one id (got 2: "1b4e28ba", "7c2d0000"); purge them one at a time`},
		{[]string{"search"}, `forgemem search: search needs the text to search for: forgemem search "database locking"`},
		{[]string{"search", "--limit", "3"}, `forgemem search: search needs the text to search for: forgemem search "database locking"`},
		{[]string{"recall", "a.jsonl", "b.jsonl"}, `forgemem recall: recall takes one conversation (got 2: "a.jsonl", "b.jsonl"); give one JSON Lines file, - to read it from standard input, or the user's message as --message "…", in quotes`},
		{[]string{"trust", "a.yaml", "b.yaml"}, `forgemem trust: trust takes one file (got 2: "a.yaml", "b.yaml"); trust them one at a time; without a file it trusts the repository's .forge/config.yaml`},
	}
	f := newFixture(t)
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := f.run(tt.args...)
			first, _, _ := strings.Cut(r.stderr, "\n")
			if r.code != cli.ExitUsage || first != tt.says || r.stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 2, nothing on stdout and the line %q", r.code, r.stdout, r.stderr, tt.says)
			}
		})
	}
}

// A command group (hook, completion) run without one of its commands, or
// with one it does not have, is a usage error naming its commands, never
// its help with exit 0; so is hook install without the agent it knows.
func TestCommandGroupsNeedACommand(t *testing.T) {
	const hookCommands = "give claude-code or install; the one agent forgemem has hooks for is Claude Code (claude-code)"
	tests := []struct {
		args []string
		says string // the first line of stderr
	}{
		{[]string{"hook"}, "forgemem hook: give one of its commands: claude-code or install; the one agent forgemem has hooks for is Claude Code (claude-code)"},
		{[]string{"hook", "codex"}, `forgemem hook: "codex" is not a command of forgemem hook: ` + hookCommands},
		{[]string{"hook", "codex", "prompt"}, `forgemem hook: "codex" is not a command of forgemem hook: ` + hookCommands},
		{[]string{"hook", "claude"}, `forgemem hook: "claude" is not a command of forgemem hook (did you mean claude-code?): ` + hookCommands},
		{[]string{"hook", "--repo-dir", "x", "gemini"}, `forgemem hook: "gemini" is not a command of forgemem hook: ` + hookCommands},
		{[]string{"hook", "install"}, "forgemem hook install: give the agent to install hooks for: claude-code (forgemem hook install claude-code)"},
		{[]string{"hook", "install", "codex"}, `forgemem hook install: "codex" is not an agent forgemem installs hooks for; the one there is: claude-code`},
		{[]string{"hook", "install", "claude-code", "codex"}, "forgemem hook install: give one agent, not 2: the one forgemem installs hooks for is claude-code"},
		{[]string{"completion"}, "forgemem completion: give one of its commands: bash, zsh, fish or powershell"},
		{[]string{"completion", "fish2"}, `forgemem completion: "fish2" is not a command of forgemem completion (did you mean fish?): give bash, zsh, fish or powershell`},
	}
	f := newFixture(t)
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := f.run(tt.args...)
			first, rest, _ := strings.Cut(r.stderr, "\n")
			if r.code != cli.ExitUsage || first != tt.says || r.stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 2, nothing on stdout and the line %q", r.code, r.stdout, r.stderr, tt.says)
			}
			if want := "Run '" + strings.SplitN(tt.says, ":", 2)[0] + " --help' for usage.\n"; rest != want {
				t.Errorf("stderr after its first line: %q, want %q", rest, want)
			}
		})
	}
	// Their help is still there, with exit 0, and no usage line of their own.
	f.check("help_hook", f.run("hook", "--help"), cli.ExitOK)
	if r := f.run("completion", "--help"); r.code != cli.ExitOK || !strings.Contains(r.stdout, "Usage:\n  forgemem completion [command]\n\n") {
		t.Errorf("completion --help: exit %d, stdout:\n%s", r.code, r.stdout)
	}
}

// forgemem completion SHELL prints its script to the command's stdout,
// never to the process's own.
func TestCompletionScripts(t *testing.T) {
	tests := []struct{ shell, starts string }{
		{"bash", "# bash completion V2 for forgemem"},
		{"zsh", "#compdef forgemem"},
		{"fish", "# fish completion for forgemem"},
		{"powershell", "# powershell completion for forgemem"},
	}
	f := newFixture(t)
	for _, tt := range tests {
		t.Run(tt.shell, func(t *testing.T) {
			r := f.run("completion", tt.shell)
			if r.code != cli.ExitOK || !strings.HasPrefix(r.stdout, tt.starts) || r.stderr != "" {
				t.Errorf("exit %d, stderr %q, stdout starting %q; want exit 0, nothing on stderr and stdout starting %q",
					r.code, r.stderr, r.stdout[:min(len(r.stdout), 80)], tt.starts)
			}
		})
	}
}

// A flag's value that does not parse is a usage error naming the flag,
// the value and what the flag takes, never the Go parser's own error.
func TestFlagValueErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		says string
	}{
		{"bool", []string{"list", "--json=x"}, `forgemem list: --json: "x" is not true or false; give --json alone to turn it on`},
		{"global bool", []string{"stats", "--verbose=maybe"}, `forgemem stats: --verbose: "maybe" is not true or false; give --verbose alone to turn it on`},
		{"int", []string{"search", "x", "--limit", "abc"}, `forgemem search: --limit: "abc" is not a whole number`},
		{"int by its shorthand", []string{"search", "x", "-n", "1.5"}, `forgemem search: --limit: "1.5" is not a whole number`},
		{"int out of range", []string{"search", "x", "--limit", "99999999999999999999"}, `forgemem search: --limit: "99999999999999999999" is out of range`},
		{"int without a value", []string{"search", "x", "--limit"}, `forgemem search: --limit needs a value: a whole number`},
		{"duration", []string{"worker", "--idle", "forever"}, `forgemem worker: --idle: "forever" is not a duration; give one such as 30s or 10m`},
		{"duration without a unit", []string{"recall-server", "--idle", "5"}, `forgemem recall-server: --idle: "5" is not a duration; give one such as 30s or 10m`},
		{"duration after =", []string{"recall-server", "--idle=5"}, `forgemem recall-server: --idle: "5" is not a duration; give one such as 30s or 10m`},
		{"duration without a value", []string{"worker", "--idle"}, `forgemem worker: --idle needs a value: a duration such as 30s or 10m`},
		{"string without a value", []string{"list", "--scope"}, `forgemem list: --scope needs a value`},
	}
	f := newFixture(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.run(tt.args...)
			first, _, _ := strings.Cut(r.stderr, "\n")
			if r.code != cli.ExitUsage || first != tt.says {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and the line %q", r.code, r.stderr, tt.says)
			}
			for _, raw := range []string{"strconv.", "time:", "invalid argument"} {
				if strings.Contains(r.stderr, raw) {
					t.Errorf("stderr holds the parser's own error (%q):\n%s", raw, r.stderr)
				}
			}
			if r.stdout != "" {
				t.Errorf("a usage error printed to stdout: %q", r.stdout)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	f := newFixture(t)
	f.check("help", f.run("--help"), cli.ExitOK)
	f.check("help_remember", f.run("remember", "--help"), cli.ExitOK)
}

// forgemem help shows the help of a command or topic; a topic it does not
// know is a usage error of one line saying how to list them.
func TestHelpTopics(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // the help it shows: a golden file
		stderr string
	}{
		{"the command", []string{"help"}, cli.ExitOK, "help", ""},
		{"a command", []string{"help", "remember"}, cli.ExitOK, "help_remember", ""},
		{"a topic", []string{"help", "settings"}, cli.ExitOK, "help_settings", ""},
		{"a topic run as a command", []string{"settings"}, cli.ExitOK, "help_settings", ""},
		{"a topic's --help", []string{"settings", "--help"}, cli.ExitOK, "help_settings", ""},
		{"a topic's --help with arguments", []string{"settings", "x", "--help"}, cli.ExitOK, "help_settings", ""},
		{"unknown", []string{"help", "nosuch"}, cli.ExitUsage, "",
			"forgemem help: unknown help topic \"nosuch\"; forgemem help lists the commands and topics\n"},
		{"a command mistyped", []string{"help", "remembr"}, cli.ExitUsage, "",
			"forgemem help: unknown help topic \"remembr\" (did you mean remember?); forgemem help lists the commands and topics\n"},
		{"a topic cut short", []string{"help", "sett"}, cli.ExitUsage, "",
			"forgemem help: unknown help topic \"sett\" (did you mean settings?); forgemem help lists the commands and topics\n"},
		{"an unknown subcommand", []string{"help", "hook", "nosuch"}, cli.ExitUsage, "",
			"forgemem help: unknown help topic \"hook nosuch\"; forgemem help lists the commands and topics\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.t = t
			r := f.run(tt.args...)
			if tt.stdout != "" {
				f.check(tt.stdout, r, tt.code)
			} else if r.code != tt.code || r.stdout != "" {
				t.Errorf("exit %d, stdout %q; want exit %d and nothing", r.code, r.stdout, tt.code)
			}
			if r.stderr != tt.stderr {
				t.Errorf("stderr %q, want %q", r.stderr, tt.stderr)
			}
		})
	}
}
