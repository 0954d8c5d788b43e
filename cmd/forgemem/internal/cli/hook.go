package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/claudecode"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/spool"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/workspace"
	"github.com/forgemem/forgemem/memcapture"
	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memcore/redact"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// promptBudget bounds a UserPromptSubmit hook's work, below the timeout
// Claude Code gives it (claudecode.HookTimeout): past it the prompt goes
// without memories.
const promptBudget = 8 * time.Second

// defaultWorkerIdle is how long a worker started by a hook waits for the
// next entry before it exits.
const defaultWorkerIdle = 5 * time.Second

func (a *app) hookCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hook",
		Short: "Claude Code's hooks: recall on each prompt, capture after each turn and compaction",
		Long: `Run as one of Claude Code's hooks, or install them. forgemem hook install claude-code adds
them to .claude/settings.json; docs/INTEGRATIONS.md has the details.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(a.hookClaudeCodeCommand(), a.hookInstallCommand())
	return cmd
}

func (a *app) hookClaudeCodeCommand() *cobra.Command {
	var workerIdle, serverIdle time.Duration
	cmd := &cobra.Command{
		Use:   "claude-code",
		Short: "Handle one Claude Code hook event, read as JSON from stdin",
		Long: `Handle the Claude Code hook event whose JSON is on stdin, as the hooks that
forgemem hook install claude-code adds run it:

  UserPromptSubmit  recalls memories for the prompt and the conversation since the last
                    compaction, and prints them as the prompt's additional context
                    (nothing relevant prints nothing)
  Stop              queues a capture of the finished turn and returns at once
  PreCompact        queues a capture of the conversation about to be compacted

Captures wait in .forge/memory/.spool/ for a capture worker (forgemem worker), which the
hook starts when none is running; they need a real classifier model (memory.provider).
Whatever goes wrong, the hook exits 0 with one line on stderr: the agent is never
blocked by memory.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			defer func() {
				if r := recover(); r != nil {
					a.hookFailed("internal error: %v", r)
					if a.verbose {
						fmt.Fprintf(a.env.Stderr, "%s\n", debug.Stack())
					}
				}
				err = nil // never fail the agent's turn
			}()
			a.hookClaudeCode(cmd.Context(), workerIdle, serverIdle)
			return nil
		},
	}
	cmd.Flags().DurationVar(&workerIdle, "worker-idle", defaultWorkerIdle, "how long a worker the hook starts waits for more captures before it exits")
	_ = cmd.Flags().MarkHidden("worker-idle")
	cmd.Flags().DurationVar(&serverIdle, "server-idle", defaultServerIdle, "how long a recall server the prompt hook starts waits for the next prompt before it exits; 0 recalls in the hook's own process and starts none")
	_ = cmd.Flags().MarkHidden("server-idle")
	a.hookCC = cmd
	return cmd
}

// hookFailed writes the one line a hook that could not do its work says,
// its secrets redacted: a provider's error may quote the API key, and the
// agent may show the line or keep it in its transcript.
func (a *app) hookFailed(format string, args ...any) {
	msg, _ := redact.Text(strings.ReplaceAll(fmt.Sprintf(format, args...), "\n", " "))
	eprintf(a.env.Stderr, "forgemem hook claude-code: %s\n", msg)
}

// hookClaudeCode handles one event; every failure is one line on stderr.
func (a *app) hookClaudeCode(ctx context.Context, workerIdle, serverIdle time.Duration) {
	in, err := claudecode.ReadHookInput(a.env.Stdin)
	if err != nil {
		a.hookFailed("%v", err)
		return
	}
	if in.CWD != "" {
		if info, err := os.Stat(in.CWD); err == nil && info.IsDir() {
			a.env.Settings.WorkDir = in.CWD // the session's project
		}
	}
	switch in.HookEventName {
	case claudecode.EventUserPromptSubmit:
		a.hookPrompt(ctx, in, serverIdle)
	case claudecode.EventStop:
		a.hookCapture(in, memcore.TriggerCadence, workerIdle)
	case claudecode.EventPreCompact:
		a.hookCapture(in, memcore.TriggerCompaction, workerIdle)
	default:
		a.hookFailed("the %s event is not one forgemem handles (UserPromptSubmit, Stop, PreCompact)", in.HookEventName)
	}
}

// hookPrompt prints the memories recalled for a prompt as its additional
// context: answered by this place's recall server when one runs, else
// recalled in this process, after which a server is started for the next
// prompts (unless serverIdle is 0).
func (a *app) hookPrompt(ctx context.Context, in *claudecode.HookInput, serverIdle time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, promptBudget)
	defer cancel()
	if err := a.loadSettings(); err != nil {
		a.hookFailed("%v", err)
		return
	}
	window, transcriptErr := promptWindow(in)
	if len(window) == 0 {
		return
	}
	var ans residentAnswer
	if serverIdle > 0 && a.settings.Enabled && a.settings.RetrievalOff() == "" {
		ans = a.askResident(ctx, window)
	}
	if !ans.asked {
		ans.injection, ans.err = a.recallHere(ctx, window)
	}
	a.printPrompt(ans.injection, ans.err, transcriptErr)
	switch {
	case ans.unsafe != nil:
		a.hookFailed("no recall server may run, so each prompt recalls by itself: %v", ans.unsafe)
	case ans.start:
		if err := a.startResident(serverIdle); err != nil {
			a.hookFailed("the recall server could not start, so each prompt recalls by itself: %v", err)
		}
	}
}

// promptWindow is the conversation a prompt recalls for: the session's
// transcript since the last compaction, and the prompt. transcriptErr says
// why the transcript could not be read (the prompt alone is then used).
func promptWindow(in *claudecode.HookInput) (window []memcore.Message, transcriptErr error) {
	if in.TranscriptPath != "" {
		window, transcriptErr = claudecode.ReadWindow(in.TranscriptPath)
	}
	if p := strings.TrimSpace(in.Prompt); p != "" {
		if n := len(window); n == 0 || window[n-1].Role != memcore.RoleUser || window[n-1].Content != p {
			window = append(window, memcore.Message{Role: memcore.RoleUser, Content: p})
		}
	}
	return window, transcriptErr
}

// recallHere recalls the memories of window in this process.
func (a *app) recallHere(ctx context.Context, window []memcore.Message) (string, error) {
	ws, err := a.workspace()
	if err != nil {
		return "", err
	}
	res, err := ws.Recall(ctx, window)
	if res == nil {
		return "", err
	}
	return res.Injection, err
}

// printPrompt writes what a prompt's recall gave: the injection as the
// prompt's context, and one line on stderr for what went wrong.
func (a *app) printPrompt(injection string, err, transcriptErr error) {
	var notes []string // said on one line
	switch {
	case errors.Is(err, workspace.ErrDisabled):
		return // the user turned memory off here
	case errors.Is(err, workspace.ErrPartial):
		// Memories were still found (by words, or among those indexed):
		// the prompt gets them.
		notes = append(notes, fmt.Sprintf("some memories may be missing: %v", err))
	case err != nil:
		a.hookFailed("no memories for this prompt: %v", err)
		return
	}
	if transcriptErr != nil {
		notes = append(notes, fmt.Sprintf("recalled for the prompt alone: %v", transcriptErr))
	}
	if len(notes) > 0 {
		a.hookFailed("%s", strings.Join(notes, "; "))
	}
	if injection == "" {
		return
	}
	if err := claudecode.WritePromptContext(a.env.Stdout, injection); err != nil {
		a.hookFailed("%v", err)
	}
}

// hookCapture queues a capture of the session's conversation and starts a
// worker if none is running.
func (a *app) hookCapture(in *claudecode.HookInput, kind memcore.Trigger, workerIdle time.Duration) {
	ws, err := a.workspace()
	if err != nil {
		a.hookFailed("%v", err)
		return
	}
	s := ws.Settings()
	if !s.Enabled {
		return // the user turned memory off here
	}
	if in.TranscriptPath == "" {
		a.hookFailed("the %s event names no transcript; nothing to capture", in.HookEventName)
		return
	}
	window, err := claudecode.ReadWindow(in.TranscriptPath)
	if err != nil {
		a.hookFailed("nothing captured: %v", err)
		return
	}
	if kind == memcore.TriggerCadence && s.CadenceTurns > 1 && userTurns(window)%s.CadenceTurns != 0 {
		return // not a turn to capture at memory.cadence_turns; the next one's window holds it
	}
	window = memcore.CapWindow(window, memcapture.DefaultWindowTokens)
	if len(window) == 0 {
		return
	}
	if _, err := ws.QueueCapture(spool.Entry{
		Kind: kind, SessionID: in.SessionID, Source: "claude-code", Transcript: in.TranscriptPath,
		Messages: spool.Messages(window),
	}); err != nil {
		a.hookFailed("nothing captured: %v", err)
		return
	}
	if err := a.ensureWorker(ws, workerIdle); err != nil {
		a.hookFailed("the capture is queued, but %v", err)
	}
}

// userTurns counts the user's messages in a window.
func userTurns(window []memcore.Message) int {
	n := 0
	for _, m := range window {
		if m.Role == memcore.RoleUser {
			n++
		}
	}
	return n
}

// ensureWorker starts a capture worker for the place's queue unless one is
// running, or captures cannot run here (no classifier: the entries wait,
// and forgemem stats says why). The entry is queued before the lock is
// looked at, and a leaving worker looks at the queue after releasing the
// lock, so the entry always has a worker.
func (a *app) ensureWorker(ws *workspace.Workspace, idle time.Duration) error {
	if ws.CaptureReady() != nil {
		return nil
	}
	if a.env.Executable == "" {
		return nil // no binary to start (tests in process)
	}
	sp, err := ws.Spool()
	if err != nil {
		return err
	}
	if _, held, err := sp.Holder(); err != nil || held {
		return err
	}
	args := append([]string{"worker", "--idle", idle.String()}, a.globalArgs()...)
	_, err = sp.StartDetached(a.env.Executable, args, a.workDir(), a.env.Settings.Env)
	return err
}

// globalArgs are the global flags this run was given, to pass on to a
// process it starts.
func (a *app) globalArgs() []string {
	var args []string
	a.root.PersistentFlags().VisitAll(func(f *pflag.Flag) {
		if f.Changed {
			args = append(args, "--"+f.Name+"="+f.Value.String())
		}
	})
	return args
}

// workDir is the folder the settings were located from.
func (a *app) workDir() string {
	if d := a.env.Settings.WorkDir; d != "" {
		return d
	}
	d, _ := os.Getwd()
	return d
}

func (a *app) hookInstallCommand() *cobra.Command {
	var user bool
	cmd := &cobra.Command{
		Use:   "install claude-code",
		Short: "Add forgemem's hooks to Claude Code's settings",
		Long: `Add forgemem's three hooks — UserPromptSubmit (recall), Stop and PreCompact (capture) —
to the repository's .claude/settings.json, or with --user to ~/.claude/settings.json,
keeping everything else in the file; installing again changes nothing. The previous file
is kept as settings.json.bak. The hooks run "forgemem hook claude-code", or the absolute
path of this binary when forgemem is not on PATH.`,
		Example:   "  forgemem hook install claude-code\n  forgemem hook install claude-code --user",
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{"claude-code"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] != "claude-code" {
				return usagef("%q is not an agent forgemem installs hooks for; the one there is: claude-code", args[0])
			}
			if err := a.loadSettings(); err != nil {
				return err
			}
			var path string
			if user {
				if a.env.Settings.Home == "" {
					return errors.New("there is no home folder; run it in the repository without --user")
				}
				path = filepath.Join(a.env.Settings.Home, ".claude", "settings.json")
			} else {
				root := a.settings.Paths.RepoRoot
				if root == "" {
					return usagef("%v; pass --user to install the hooks for every project in ~/.claude/settings.json", a.settings.Paths.RequireRepo())
				}
				path = filepath.Join(root, ".claude", "settings.json")
			}
			bin, onPath := a.hookBinary()
			res, err := claudecode.Install(path, bin+" "+claudecode.HookArgs)
			if err != nil {
				return err
			}
			a.printInstall(res, bin, onPath)
			return nil
		},
	}
	cmd.Flags().BoolVar(&user, "user", false, "install in ~/.claude/settings.json, for every project")
	return cmd
}

// hookBinary is how the hooks run forgemem: "forgemem" when the forgemem
// found on PATH is this binary, else this binary's absolute path.
func (a *app) hookBinary() (bin string, onPath bool) {
	exe := a.env.Executable
	if exe == "" {
		return "forgemem", true
	}
	if found := lookPath("forgemem", a.env.Settings.Env); found != "" {
		fi, err1 := os.Stat(found)
		ei, err2 := os.Stat(exe)
		if err1 == nil && err2 == nil && os.SameFile(fi, ei) {
			return "forgemem", true
		}
	}
	if strings.ContainsAny(exe, " \t'\"$`\\") {
		return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "`", "\\`").Replace(exe) + `"`, false
	}
	return exe, false
}

// lookPath finds an executable named name in the PATH of environ.
func lookPath(name string, environ []string) string {
	var path string
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() && info.Mode().Perm()&0o111 != 0 {
			return p
		}
	}
	return ""
}

func (a *app) printInstall(res *claudecode.InstallResult, bin string, onPath bool) {
	p := a.out
	switch {
	case len(res.Added) == 0:
		p.printf("forgemem's hooks are already in %s; nothing changed.\n", res.Path)
	case res.Created:
		p.printf("Wrote %s with forgemem's hooks: %s.\n", res.Path, strings.Join(res.Added, ", "))
	default:
		p.printf("Added forgemem's hooks to %s: %s; the previous file is %s.\n", res.Path, strings.Join(res.Added, ", "), res.Backup)
	}
	if len(res.Added) > 0 && len(res.Present) > 0 {
		p.printf("Already there: %s.\n", strings.Join(res.Present, ", "))
	}
	p.printf("The hooks run: %s %s\n", bin, claudecode.HookArgs)
	if !onPath {
		p.println("  forgemem is not on your PATH, so they run this binary by its absolute path.")
		if strings.Contains(bin, "go-build") {
			p.println("  That is a temporary build of go run: install forgemem (go install github.com/forgemem/forgemem/cmd/forgemem@latest) and run this again.")
		}
	}
	if a.settings != nil && a.settings.Provider == "fake" {
		p.println("\nCapture needs a classifier model: with the fake provider the hooks queue captures that wait")
		p.println("(forgemem stats shows them). Set memory.provider and its model in ~/.forge/config.yaml.")
	}
	mcpBin := "forgemem"
	if !onPath {
		mcpBin = bin
	}
	p.printf("\nFor the memory_* tools, add the MCP server too:\n  claude mcp add forgemem -- %s mcp\n", mcpBin)
	p.printf("or put it in the repository's .mcp.json:\n  {\"mcpServers\": {\"forgemem\": {\"command\": %q, \"args\": [\"mcp\"]}}}\n", strings.Trim(mcpBin, `"`))
	p.println("docs/INTEGRATIONS.md has the set-up of Cursor, Cline, Codex and Gemini CLI.")
}

func (a *app) workerCommand() *cobra.Command {
	var idle time.Duration
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run the captures agent hooks queued, then exit",
		Long: `Run the capture passes that agent hooks (forgemem hook claude-code) queued in this place's
.forge/memory/.spool/, one at a time: compactions first, then the newest turn of each
session. An entry is removed once its pass has finished; one whose pass failed waits for
the next worker. It exits when the queue has been empty for --idle. Only one worker runs
per folder (an OS lock); a second one exits at once. Hooks start it by themselves; run it
by hand after fixing a provider problem that forgemem stats reports.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ws, err := a.workspace()
			if err != nil {
				return err
			}
			res, err := ws.RunWorker(cmd.Context(), workspace.WorkerOptions{Idle: idle, OnEntry: func(e workspace.WorkerEntry) {
				if asJSON {
					return
				}
				status := fmt.Sprintf("%s written", plural(e.Written, "memory", "memories"))
				if e.Err != "" {
					status = "failed, waits for the next worker: " + e.Err
				}
				eprintf(a.env.Stderr, "%s forgemem worker: %s (%s): %s\n", time.Now().UTC().Format(time.RFC3339), e.Name, e.Kind, status)
			}})
			if err != nil {
				if res == nil {
					return fmt.Errorf("the queued captures wait: %w", err)
				}
				return err
			}
			if asJSON {
				return a.out.json(res)
			}
			switch {
			case res.Busy:
				a.out.println("Another capture worker is running this folder's queue.")
			case len(res.Entries) == 0:
				a.out.println("No captures were waiting.")
			default:
				a.out.printf("Ran %s: %s written", plural(len(res.Entries), "capture pass", "capture passes"), plural(res.Written, "memory", "memories"))
				if res.Failed > 0 {
					a.out.printf(", %d failed (they wait for the next worker; forgemem stats says why)", res.Failed)
				}
				a.out.println(".")
			}
			return nil
		},
	}
	cmd.Flags().DurationVar(&idle, "idle", 0, "how long to wait for more captures once the queue is empty")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	return cmd
}
