package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/claudecode"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/resident"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/spool"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/termtext"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/workspace"
	"github.com/forgemem/forgemem/memcapture"
	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memcore/redact"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// hookWorkMargin is how long before the hook's hard deadline
// (claudecode.HookDeadline) its work's context ends: a recall cut short
// still prints what it found, and says why, before the process must go.
const hookWorkMargin = time.Second

// defaultWorkerIdle is how long a worker started by a hook waits for the
// next entry before it exits.
const defaultWorkerIdle = 5 * time.Second

func (a *app) hookCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hook",
		Short: "Claude Code's hooks: recall on each prompt, capture after each turn and compaction",
		Long: `Run as one of Claude Code's hooks, or install them. forgemem hook install claude-code adds
them to the repository's .claude/settings.json (.claude/settings.local.json when forgemem is
not on PATH); docs/INTEGRATIONS.md has the details.`,
		Annotations: map[string]string{groupHint: "the one agent forgemem has hooks for is Claude Code (claude-code)"},
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
                    (nothing relevant prints nothing); the place's recall server
                    (forgemem recall-server) answers when it runs, and the hook starts
                    one when none does; one that does not answer in half the hook's
                    time is left, and the hook recalls by itself and says so. When
                    memory files cannot be read (a merge conflict, a file too large), it
                    warns you, not the model, once per session and again when those
                    files or their problems change: forgemem validate says how to fix
                    them
  Stop              queues a capture of the finished turn and returns at once
  PreCompact        queues a capture of the conversation about to be compacted

Captures wait in .forge/memory/.spool/ for a capture worker (forgemem worker), which the
hook starts when none is running; they need a real classifier model (memory.provider):
with the fake provider nothing is queued, and the hook says so once.
Whatever goes wrong, the hook exits 0 with at most one short line on stderr: the agent
is never blocked by memory. It ends 8 seconds after it started (2 seconds below Claude
Code's timeout), and at once on SIGTERM or SIGINT, even when its work is stuck.`,
		Args: noArgs("it reads the hook's event as JSON from stdin"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			a.runHook(cmd.Context(), workerIdle, serverIdle)
			return nil // never fail the agent's turn
		},
	}
	cmd.Flags().DurationVar(&workerIdle, "worker-idle", defaultWorkerIdle, "how long a worker the hook starts waits for more captures before it exits")
	_ = cmd.Flags().MarkHidden("worker-idle")
	cmd.Flags().DurationVar(&serverIdle, "server-idle", defaultServerIdle, "how long a recall server the prompt hook starts waits for the next prompt before it exits; 0 recalls in the hook's own process and starts none")
	_ = cmd.Flags().MarkHidden("server-idle") // documented in docs/INTEGRATIONS.md
	a.hookCC = cmd
	return cmd
}

// hookRun is one run of the hook's work, which runs in a goroutine of its
// own: what it prints, written by that goroutine and read once it has
// finished, and what it is doing, which the process's goroutine reads if
// the deadline or a signal comes first.
type hookRun struct {
	stage  atomic.Pointer[string]
	stdout string
	notes  []string
	stack  []byte
}

// at records what the work is doing, for the line said if it never ends.
func (r *hookRun) at(stage string) { r.stage.Store(&stage) }

// doing is what the work was doing last.
func (r *hookRun) doing() string {
	if s := r.stage.Load(); s != nil {
		return *s
	}
	return "starting"
}

// note adds to what the hook's one line says.
func (r *hookRun) note(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

// runHook runs the hook's work in a goroutine and waits for it to finish,
// for the hook's deadline (counted from the process's start), or for ctx
// to end (SIGTERM, SIGINT), whichever comes first; then it prints what
// there is to print. Past the deadline or after a signal the work is left
// where it is — a read that never returns, a call that never answers —
// and the process exits 0 without waiting for it.
func (a *app) runHook(ctx context.Context, workerIdle, serverIdle time.Duration) {
	limit := claudecode.HookDeadline
	if a.env.HookDeadline > 0 {
		limit = a.env.HookDeadline
	}
	deadline := a.env.Started.Add(limit)
	workCtx, cancel := context.WithDeadline(ctx, deadline.Add(-min(hookWorkMargin, limit/8)))
	defer cancel()
	run := &hookRun{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if r := recover(); r != nil {
				run.note("internal error: %v", r)
				if a.verbose {
					run.stack = debug.Stack()
				}
			}
		}()
		a.hookWork(workCtx, run, workerIdle, serverIdle)
	}()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-done:
		if ctx.Err() != nil {
			run.note("stopped by a signal")
		}
		a.finishHook(run, deadline)
	case <-timer.C:
		a.hookAbandoned = true
		a.hookSay(fmt.Sprintf("gave up at its %s deadline while %s; the turn goes on without memory", limit, run.doing()))
	case <-ctx.Done():
		a.hookAbandoned = true
		a.hookSay(fmt.Sprintf("stopped by a signal while %s; the turn goes on without memory", run.doing()))
	}
}

// finishHook prints what the finished work run has to print, and closes
// the workspace before the deadline.
func (a *app) finishHook(run *hookRun, deadline time.Time) {
	if run.stdout != "" {
		fmt.Fprint(a.env.Stdout, run.stdout)
	}
	a.hookSay(run.notes...)
	if run.stack != nil {
		_, _ = a.env.Stderr.Write(run.stack)
	}
	if a.ws != nil {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		defer cancel()
		_ = a.ws.Close(ctx)
		a.ws = nil
	}
}

// maxHookLine bounds the hook's line on stderr, in bytes.
const maxHookLine = 2048

// hookSay writes the hook's one line on stderr, when there is something to
// say: the notes joined, its secrets redacted (a provider's error may
// quote the API key, and the agent may show the line or keep it), control
// characters escaped and its length bounded by maxHookLine, whatever the
// errors quote — a settings file's hundred thousand unknown keys, a
// model's reply, a payload's bytes.
func (a *app) hookSay(notes ...string) {
	if len(notes) == 0 {
		return
	}
	fmt.Fprintf(a.env.Stderr, "forgemem hook claude-code: %s\n", hookLine(strings.Join(notes, "; ")))
}

// hookFailed says one failure in the hook's line.
func (a *app) hookFailed(format string, args ...any) { a.hookSay(fmt.Sprintf(format, args...)) }

// hookLine makes s fit the hook's line: redacted, escaped, bounded. What
// is redacted is cut first, at four times the bound — redacting costs time
// in proportion to the text — so that a secret cut there lies past the
// final cut.
func hookLine(s string) string {
	if len(s) > 4*maxHookLine {
		s = s[:4*maxHookLine]
	}
	s, _ = redact.Text(s)
	s = escapeLine(s)
	if len(s) <= maxHookLine {
		return s
	}
	const more = " … (cut)"
	cut := maxHookLine - len(more)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + more
}

// hookWork handles one event, noting every failure in run.
func (a *app) hookWork(ctx context.Context, run *hookRun, workerIdle, serverIdle time.Duration) {
	run.at("reading the hook's input")
	in, err := claudecode.ReadHookInput(a.env.Stdin)
	if err != nil {
		run.note("%v", err)
		return
	}
	if in.CWD != "" {
		if info, err := os.Stat(in.CWD); err == nil && info.IsDir() {
			a.env.Settings.WorkDir = in.CWD // the session's project
		} else {
			run.note("the session's folder (cwd) %s is not a folder here; serving %s instead", escapeControls(in.CWD), escapeControls(a.env.Settings.WorkDir))
		}
	}
	switch in.HookEventName {
	case claudecode.EventUserPromptSubmit:
		a.hookPrompt(ctx, run, in, serverIdle)
	case claudecode.EventStop:
		a.hookCapture(run, in, memcore.TriggerCadence, workerIdle)
	case claudecode.EventPreCompact:
		a.hookCapture(run, in, memcore.TriggerCompaction, workerIdle)
	default:
		run.note("the %s event is not one forgemem handles (UserPromptSubmit, Stop, PreCompact)", in.HookEventName)
	}
}

// hookPrompt recalls the memories for a prompt, to be printed as its
// additional context: answered by this place's recall server when one
// runs; else recalled in this process, once a server is started for the
// next prompts (unless serverIdle is 0).
func (a *app) hookPrompt(ctx context.Context, run *hookRun, in *claudecode.HookInput, serverIdle time.Duration) {
	run.at("loading the settings")
	if err := a.loadSettings(); err != nil {
		run.note("%v", err)
		return
	}
	run.at("reading the transcript")
	window, transcriptErr := promptWindow(in)
	if len(window) == 0 {
		return
	}
	var ans residentAnswer
	var serverDir string
	if serverIdle > 0 {
		run.at("asking the recall server")
		place, dir, err := a.hookServer()
		switch {
		case err == nil:
			ans, serverDir = a.askResident(ctx, place, dir, window), dir
		case errors.Is(err, resident.ErrUnsafeDir):
			ans.unsafe = err
		}
	}
	switch {
	case ans.unsafe != nil:
		run.note("no recall server may run, so each prompt recalls by itself: %v", ans.unsafe)
	case ans.silent != nil:
		run.note("%s", ans.silent.note())
	case ans.start:
		// Started before this prompt's own recall, which may not end
		// before the hook's deadline with many memories: the next prompts
		// are answered either way.
		run.at("starting the recall server")
		if err := a.startResident(serverDir, serverIdle); err != nil {
			run.note("the recall server could not start, so each prompt recalls by itself: %v", err)
		}
	}
	if !ans.asked {
		run.at("loading the memories and recalling")
		ans.recalled, ans.err = a.recallHere(ctx, window)
	}
	a.promptOutput(run, in, ans.recalled, ans.err, transcriptErr)
}

// recalled is what of a prompt's recall the hook prints.
type recalled struct {
	injection string
	// held counts the memories left out because they wait for the user's
	// approval (memretrieve.Result.HeldDropped).
	held int
	// unreadable is about the memory files the recall could not read, nil
	// when every file read.
	unreadable *resident.Unreadable
}

// recallHere recalls the memories of window in this process.
func (a *app) recallHere(ctx context.Context, window []memcore.Message) (recalled, error) {
	ws, err := a.workspace()
	if err != nil {
		return recalled{}, err
	}
	res, err := ws.Recall(ctx, window)
	// What the recall's listing of the folders skipped: nothing is read
	// again for it.
	rec := recalled{unreadable: unreadableOf(ws.SkippedFiles())}
	if res != nil {
		rec.injection, rec.held = res.Injection, res.HeldDropped
	}
	return rec, err
}

// promptOutput records what a prompt's recall gave: the injection as the
// prompt's context, a warning to the user about memory files the recall
// could not read, and a note for what went wrong or was held back.
func (a *app) promptOutput(run *hookRun, in *claudecode.HookInput, rec recalled, err, transcriptErr error) {
	if errors.Is(err, workspace.ErrDisabled) {
		return // the user turned memory off here
	}
	run.at("recording the warning about memory files that cannot be read")
	// A recall that failed may not have listed the folders: that it found
	// no unreadable file then says nothing.
	warning := a.unreadableWarning(in.SessionID, rec.unreadable, err == nil || errors.Is(err, workspace.ErrPartial))
	switch {
	case errors.Is(err, workspace.ErrPartial):
		// Memories were still found (by words, or among those indexed):
		// the prompt gets them.
		run.note("some memories may be missing: %v", err)
	case err != nil:
		run.note("no memories for this prompt: %v", err)
		writePromptOutput(run, "", warning)
		return
	}
	if transcriptErr != nil {
		run.note("recalled for the prompt alone: %v", transcriptErr)
	}
	if rec.held > 0 {
		run.note("%s", heldNote(rec.held, "of this prompt's context"))
	}
	writePromptOutput(run, rec.injection, warning)
}

// writePromptOutput makes text, the prompt's context, and the warning to the
// user the hook's output; both "" is no output.
func writePromptOutput(run *hookRun, text, warning string) {
	var out strings.Builder
	if err := claudecode.WritePromptOutput(&out, text, warning); err != nil {
		run.note("%v", err)
		return
	}
	run.stdout = out.String()
}

// unreadableOf sums up the memory files a recall skipped
// (Workspace.SkippedFiles, ordered by path) for the prompt hook's
// warning: nil when there are none.
func unreadableOf(probs []memcore.Problem) *resident.Unreadable {
	if len(probs) == 0 {
		return nil
	}
	h := sha256.New()
	for _, p := range probs {
		h.Write([]byte(p.Path))
		h.Write([]byte{0})
		h.Write([]byte(skippedKind(p.Err)))
		h.Write([]byte{0})
	}
	return &resident.Unreadable{Count: len(probs), Path: probs[0].Path, Kind: string(skippedKind(probs[0].Err)),
		Digest: hex.EncodeToString(h.Sum(nil)[:16])}
}

// skippedKind is the kind of problem forgemem validate reports for a
// memory file skipped for err, told without reading the file again.
func skippedKind(err error) workspace.ProblemKind {
	switch {
	case errors.Is(err, memcore.ErrTooLarge):
		return workspace.ProblemTooLarge
	case errors.Is(err, memcore.ErrMergeConflict):
		return workspace.ProblemMergeConflict
	case errors.Is(err, memcore.ErrMalformed):
		return workspace.ProblemMalformed
	case errors.Is(err, memcore.ErrInvalidMemory):
		return workspace.ProblemInvalid
	}
	return workspace.ProblemUnreadable
}

// unreadableWarning is the prompt hook's warning to the user (Claude
// Code's systemMessage, never the model's context) about the memory files
// recall could not read: how many, the first of them and what is wrong
// with it — never what the files hold — and the command that says how to
// fix them. It is "" when every file read, and when this session was
// last warned about these same files, with the same problems: the warning
// comes once per session, and again when the set of files or of their
// problems changes, also after they all read again (the place's capture
// queue records what the last 32 sessions warned were last told, see
// Workspace.Tell). When every file read — as far as known: listed is
// false when the recall failed before it listed the folders — the record
// is read, and written only when the session was last warned of some.
func (a *app) unreadableWarning(sessionID string, u *resident.Unreadable, listed bool) string {
	const topic = "unreadable memory files\x00"
	if u == nil || u.Count <= 0 {
		switch {
		case !listed:
		case a.ws != nil:
			a.ws.Tell(topic+sessionID, "")
		case a.settings != nil:
			workspace.TellNothing(a.settings, topic+sessionID) // the server answered: no folder is opened for it
		}
		return ""
	}
	if ws, err := a.workspace(); err == nil && !ws.Tell(topic+sessionID, u.Digest) {
		return ""
	}
	first := a.fromWorkDir(u.Path)
	var what string
	switch workspace.ProblemKind(u.Kind) {
	case workspace.ProblemMergeConflict:
		what = "a merge conflict in " + first
	case workspace.ProblemTooLarge:
		what = first + " is too large"
	case workspace.ProblemUnreadable:
		what = first + " cannot be opened"
	default:
		what = first + " is not a valid memory file"
	}
	msg := fmt.Sprintf("forgemem: a memory file cannot be read (%s), so recall leaves it out; run `forgemem validate` to see how to fix it.", what)
	if u.Count > 1 {
		msg = fmt.Sprintf("forgemem: %d memory files cannot be read (%s, and %s), so recall leaves them out; run `forgemem validate` to see how to fix them.",
			u.Count, what, plural(u.Count-1, "other", "others"))
	}
	return escapeLine(msg)
}

// promptWindow is the conversation a prompt's recall is for: the
// session's window from its transcript, ending with the prompt. A
// transcript that does not exist yet — the first prompt of a session,
// before Claude Code writes it — is no error; one that cannot be read is
// returned as the error, with the prompt alone as the window.
func promptWindow(in *claudecode.HookInput) ([]memcore.Message, error) {
	var window []memcore.Message
	var err error
	if in.TranscriptPath != "" {
		window, err = claudecode.ReadWindow(in.TranscriptPath)
		if errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
	}
	if p := strings.TrimSpace(in.Prompt); p != "" {
		if n := len(window); n == 0 || window[n-1].Role != memcore.RoleUser || window[n-1].Content != p {
			window = append(window, memcore.Message{Role: memcore.RoleUser, Content: p})
		}
	}
	return window, err
}

// hookCapture queues a capture of the session's conversation and starts a
// worker if none is running. With no model for capture it queues nothing,
// and says why once per memory folder.
func (a *app) hookCapture(run *hookRun, in *claudecode.HookInput, kind memcore.Trigger, workerIdle time.Duration) {
	run.at("loading the settings")
	ws, err := a.workspace()
	if err != nil {
		run.note("%v", err)
		return
	}
	s := ws.Settings()
	if !s.Enabled {
		return // the user turned memory off here
	}
	if err := ws.CaptureOff(); err != nil {
		if ws.NoticeOnce(err.Error()) {
			run.note("nothing captured: %v (said once; forgemem stats says it too)", err)
		}
		return
	}
	run.at("reading the transcript")
	window := captureWindow(run, in, kind, s.CadenceTurns)
	if len(window) == 0 {
		return
	}
	run.at("queueing the capture")
	_, err = ws.QueueCapture(spool.Entry{
		Kind: kind, SessionID: in.SessionID, Source: "claude-code", Transcript: in.TranscriptPath,
		Messages: spool.Messages(window),
	})
	if err != nil {
		run.note("nothing captured: %v", err)
		if !errors.Is(err, spool.ErrFull) {
			return
		}
		// A full queue needs its worker all the more.
	}
	run.at("starting the capture worker")
	if werr := a.ensureWorker(ws, workerIdle); werr != nil && err == nil {
		run.note("the capture is queued, but %v", werr)
	}
}

// captureWindow is the conversation a capture of kind queues, read from
// the session's transcript with the reply the payload carries, capped at
// the classifier's budget; empty when there is nothing to capture (the
// transcript cannot be read, or the turn is not one memory.cadence_turns
// captures).
func captureWindow(run *hookRun, in *claudecode.HookInput, kind memcore.Trigger, cadence int) []memcore.Message {
	if in.TranscriptPath == "" {
		run.note("the %s event names no transcript; nothing to capture", in.HookEventName)
		return nil
	}
	window, err := claudecode.ReadWindow(in.TranscriptPath)
	if err != nil {
		run.note("nothing captured: %v", err)
		return nil
	}
	// Claude Code runs Stop hooks before it writes the reply's line.
	window = claudecode.WithLastReply(window, in.LastAssistantMessage)
	if kind == memcore.TriggerCadence && cadence > 1 && userTurns(window)%cadence != 0 {
		return nil // not a turn to capture at memory.cadence_turns; the next one's window holds it
	}
	return memcore.CapWindow(window, memcapture.DefaultWindowTokens)
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
to Claude Code's settings, keeping everything else in the file:

  in a repository  .claude/settings.json, which the team shares, when forgemem is on PATH:
                   the hooks run "forgemem hook claude-code"; else .claude/settings.local.json,
                   this machine's own settings, with this binary's absolute path, which
                   git is told to ignore (in .git/info/exclude) unless it does already
  --user           ~/.claude/settings.json, for every project

forgemem's hooks are recognised by what they run, whatever the binary's name or path:
installing again changes nothing, installing another binary updates them in place, and
duplicates left by earlier versions are removed. The previous file is kept as
<file>.bak. A temporary build of go run is never written into the hooks: install
forgemem first (go install github.com/forgemem/forgemem/cmd/forgemem@latest).`,
		Example: "  forgemem hook install claude-code\n  forgemem hook install claude-code --user",
		Args: func(_ *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				return usagef("give the agent to install hooks for: claude-code (forgemem hook install claude-code)")
			case len(args) > 1:
				return usagef("give one agent, not %d: the one forgemem installs hooks for is claude-code", len(args))
			case args[0] != "claude-code":
				return usagef("%q is not an agent forgemem installs hooks for; the one there is: claude-code", termtext.Clip(args[0], maxQuotedRef))
			}
			return nil
		},
		ValidArgs: []string{"claude-code"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := a.loadSettings(); err != nil {
				return err
			}
			bin, err := a.hookBinary()
			if err != nil {
				return err
			}
			path, also, err := a.hookSettingsFile(user, bin.onPath)
			if err != nil {
				return err
			}
			// Installed by name, the hooks are shared: those an earlier
			// install wrote into this machine's settings.local.json, by
			// path, move out of it, or Claude Code would keep running them.
			var moved *claudecode.UninstallResult
			if bin.onPath && !user {
				if moved, err = claudecode.Uninstall(also[0]); err != nil {
					return err
				}
				also = nil
			}
			res, err := claudecode.Install(path, bin.name+" "+claudecode.HookArgs, also...)
			if err != nil {
				return err
			}
			// This machine's settings, with its path to forgemem, stay out
			// of git, as Claude Code keeps them.
			var ignored string
			if !bin.onPath && !user {
				if ignored, err = a.keepLocalSettingsOutOfGit(cmd.Context(), a.settings.Paths.RepoRoot); err != nil {
					eprintf(a.env.Stderr, "%s: %v; add %s to .git/info/exclude to keep it out of commits\n", cmd.CommandPath(), err, localSettings[0])
				}
			}
			if moved != nil && len(moved.Removed) > 0 {
				a.out.printf("Moved forgemem's hooks (%s) out of %s, this machine's own settings, into %s (the previous file is %s).\n",
					strings.Join(moved.Removed, ", "), moved.Path, claudecode.SettingsFile, moved.Backup)
			}
			a.printInstall(res, bin, user, ignored)
			return nil
		},
	}
	cmd.Flags().BoolVar(&user, "user", false, "install in ~/.claude/settings.json, for every project")
	return cmd
}

// hookBin is the program forgemem's hooks run.
type hookBin struct {
	// name is what the hooks' command names: a name found on PATH, or an
	// absolute path, quoted for the shell when it needs to be.
	name string
	// onPath is true when name is found on PATH: the command works on any
	// machine that has forgemem installed.
	onPath bool
	// goRun is this binary's path when it is a temporary build of go run
	// and the hooks run the forgemem on PATH instead.
	goRun string
}

// hookBinary is how the hooks run forgemem: by name when the program of
// that name on PATH is this binary (or, for a temporary build of go run,
// whatever forgemem is on PATH), else by this binary's absolute path. A
// go run build with no forgemem on PATH is an error: its path is deleted
// when it exits.
func (a *app) hookBinary() (hookBin, error) {
	exe := a.env.Executable
	if exe == "" {
		return hookBin{name: "forgemem", onPath: true}, nil
	}
	if isGoRunBuild(exe) {
		if found := lookPath("forgemem", a.env.Settings.Env); found != "" {
			return hookBin{name: "forgemem", onPath: true, goRun: exe}, nil
		}
		return hookBin{}, fmt.Errorf("this forgemem is a temporary build of go run (%s), deleted when it exits: hooks that ran it would break. "+
			"Install forgemem — go install github.com/forgemem/forgemem/cmd/forgemem@latest, or go install ./cmd/forgemem in a checkout — "+
			"put it on your PATH, and run forgemem hook install claude-code again", exe)
	}
	for _, name := range []string{filepath.Base(exe), "forgemem"} {
		if found := lookPath(name, a.env.Settings.Env); found != "" && sameFile(found, exe) {
			return hookBin{name: shellQuote(name), onPath: true}, nil
		}
	}
	return hookBin{name: shellQuote(exe)}, nil
}

// isGoRunBuild reports whether the binary at path is a temporary build of
// go run: it lies in a go-build… folder the go command removes, as
// …/go-build123/b001/exe/forgemem.
func isGoRunBuild(path string) bool {
	dir := filepath.Dir(path)
	if filepath.Base(dir) != "exe" {
		return false
	}
	for d := filepath.Dir(dir); d != filepath.Dir(d); d = filepath.Dir(d) {
		if strings.HasPrefix(filepath.Base(d), "go-build") {
			return true
		}
	}
	return false
}

// sameFile reports whether two paths name the same file.
func sameFile(a, b string) bool {
	ai, err1 := os.Stat(a)
	bi, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(ai, bi)
}

// shellQuote quotes s for the shell a hook's command runs in when it holds
// a character the shell would read.
func shellQuote(s string) string {
	if !strings.ContainsAny(s, " \t'\"$`\\;&|<>()*?[]#~!{}") {
		return s
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "`", "\\`").Replace(s) + `"`
}

// hookSettingsFile returns the Claude Code settings file to install the
// hooks in, and the other one Claude Code reads with it: the user's
// settings with user; else, in the repository, the shared settings.json
// when the hooks run forgemem by name, and this machine's
// settings.local.json when they run it by a path.
func (a *app) hookSettingsFile(user, onPath bool) (path string, also []string, err error) {
	if user {
		if a.env.Settings.Home == "" {
			return "", nil, errors.New("there is no home folder; run it in the repository without --user")
		}
		return filepath.Join(a.env.Settings.Home, ".claude", claudecode.SettingsFile), nil, nil
	}
	root := a.settings.Paths.RepoRoot
	if root == "" {
		return "", nil, usagef("%v; pass --user to install the hooks for every project in ~/.claude/settings.json", a.settings.Paths.RequireRepo())
	}
	shared := filepath.Join(root, ".claude", claudecode.SettingsFile)
	local := filepath.Join(root, ".claude", claudecode.LocalSettingsFile)
	if onPath {
		return shared, []string{local}, nil
	}
	return local, []string{shared}, nil
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

// printInstall says what hook install did; ignored is what it did to keep
// settings.local.json out of git, "" for nothing.
func (a *app) printInstall(res *claudecode.InstallResult, bin hookBin, user bool, ignored string) {
	p := a.out
	a.printInstallChanges(res)
	p.printf("The hooks run: %s %s\n", bin.name, claudecode.HookArgs)
	switch {
	case bin.goRun != "":
		p.printf("  This is a temporary build of go run (%s): the hooks run the forgemem on your PATH instead.\n", bin.goRun)
	case !bin.onPath && user:
		p.println("  forgemem is not on your PATH, so they run this binary by its absolute path.")
	case !bin.onPath:
		p.printf("  forgemem is not on your PATH, so they run this binary by its absolute path, written to %s:\n", claudecode.LocalSettingsFile)
		p.printf("  this machine's own settings, which Claude Code reads with %s and which are not to be\n", claudecode.SettingsFile)
		p.printf("  committed. Put forgemem on your PATH and install again to share the hooks in %s.\n", claudecode.SettingsFile)
		if ignored != "" {
			p.printf("  %s\n", ignored)
		}
	}
	if a.settings != nil && a.settings.Provider == "fake" {
		p.println("\nCapture needs a classifier model: with the fake provider the Stop and PreCompact hooks queue")
		p.println("nothing (they say so once, and forgemem stats says so too). Set memory.provider and its model in")
		p.println("~/.forge/config.yaml.")
	}
	p.printf("\nFor the memory_* tools, add the MCP server too:\n  claude mcp add forgemem -- %s mcp\n", bin.name)
	if bin.onPath {
		p.printf("or put it in the repository's .mcp.json:\n  {\"mcpServers\": {\"forgemem\": {\"command\": %q, \"args\": [\"mcp\"]}}}\n", strings.Trim(bin.name, `"`))
	}
	p.println("docs/INTEGRATIONS.md has the set-up of Cursor, Cline, Codex and Gemini CLI.")
}

// printInstallChanges says what Install changed, and what it found in the
// other settings file.
func (a *app) printInstallChanges(res *claudecode.InstallResult) {
	p := a.out
	switch {
	case len(res.Added) == 0 && len(res.Updated) == 0 && res.Duplicates == 0:
		if len(res.Present) > 0 || len(res.Elsewhere) == 0 {
			p.printf("forgemem's hooks are already in %s; nothing changed.\n", res.Path)
		}
	case res.Created:
		p.printf("Wrote %s with forgemem's hooks: %s.\n", res.Path, strings.Join(res.Added, ", "))
	default:
		var did []string
		if len(res.Added) > 0 {
			did = append(did, "added "+strings.Join(res.Added, ", "))
		}
		if len(res.Updated) > 0 {
			did = append(did, "changed "+strings.Join(res.Updated, ", ")+" to run this binary")
		}
		if res.Duplicates > 0 {
			did = append(did, fmt.Sprintf("removed %s left by earlier installs", plural(res.Duplicates, "duplicate", "duplicates")))
		}
		p.printf("forgemem's hooks in %s: %s; the previous file is %s.\n", res.Path, strings.Join(did, "; "), res.Backup)
	}
	for _, f := range res.Elsewhere {
		p.printf("%s already runs forgemem's %s hook: %s", f.Path, f.Event, f.Command)
		if bin, ok := claudecode.HookCommandBinary(f.Command); ok && filepath.IsAbs(bin) {
			if _, err := os.Stat(bin); err != nil {
				p.printf(" — that binary is gone: remove the hook from %s and install again", filepath.Base(f.Path))
			}
		}
		p.println("")
	}
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
the next worker; one that cannot be read (your hooks did not queue it) is set aside as
<name>.bad, which no worker runs. It exits when the queue has been empty for --idle. Only
one worker runs per folder (an OS lock); a second one exits at once. Hooks start it by
themselves; run it by hand after fixing a provider problem that forgemem stats reports:
it exits 1 when a pass failed.`,
		Args: noArgs(""),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if idle < 0 {
				return usagef("--idle: %s is negative; give 0 to exit once the queue is empty, or a duration such as 30s or 10m", idle)
			}
			ws, err := a.workspace()
			if err != nil {
				return err
			}
			res, err := ws.RunWorker(cmd.Context(), workspace.WorkerOptions{Idle: idle, OnEntry: func(e workspace.WorkerEntry) {
				if asJSON {
					return
				}
				status := fmt.Sprintf("%s written", plural(e.Written, "memory", "memories"))
				switch {
				case e.SetAside:
					status = fmt.Sprintf("unreadable, set aside as %s.bad, which no worker runs: %s", e.Name, e.Err)
				case e.Err != "":
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
			if res.Failed > 0 {
				// The captures are not lost (they wait), but this run did not
				// do what it was run for: a script, or a person after fixing
				// the provider, learns it from the exit code too.
				a.code = ExitFailure
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
				a.out.printf("Ran %s: %s written", plural(len(res.Entries)-res.SetAside, "capture pass", "capture passes"), plural(res.Written, "memory", "memories"))
				if res.Failed > 0 {
					a.out.printf(", %d failed (they wait for the next worker; forgemem stats says why)", res.Failed)
				}
				if res.SetAside > 0 {
					a.out.printf(", %s as .bad in %s (not queued by your hooks, or not an entry; no worker runs it)",
						plural(res.SetAside, "unreadable entry set aside", "unreadable entries set aside"), filepath.Join(ws.SpoolDir(), spool.DirName))
				}
				a.out.println(".")
			}
			return nil
		},
	}
	cmd.Flags().DurationVar(&idle, "idle", 0, "how long to wait for more captures once the queue is empty (0, the default: exit at once)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	return cmd
}
