package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/termtext"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/workspace"
	"github.com/forgemem/forgemem/settings"
	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"
)

// The exit codes of the forgemem command.
const (
	// ExitOK: the command did what was asked.
	ExitOK = 0
	// ExitFailure: the command failed, or validate found problems.
	ExitFailure = 1
	// ExitUsage: the command line is wrong: an unknown command or flag, the
	// wrong number of arguments, an invalid flag value, an id that cannot
	// name one memory (a prefix too short to change or delete by, or one
	// that several memories' ids start with). An id that no memory has is
	// a failure (ExitFailure): the command line may be right, and the
	// memory gone.
	ExitUsage = 2
)

// Env is everything a run of the command uses from its process, so that
// tests run it in-process with made-up ones.
type Env struct {
	// Args are the command-line arguments, without the program name.
	Args           []string
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Settings are the settings inputs of the process (working directory,
	// home folder, environment; see settings.OSOptions). The global flags
	// are added to them.
	Settings settings.Options
	// IsTerminal reports whether a writer is a terminal, which turns on
	// colour (stdout) and progress bars (stderr); nil means never.
	IsTerminal func(w io.Writer) bool
	// Now is the clock of the memories remember and forget write; nil
	// means time.Now.
	Now func() time.Time
	// HTTPClient sends the model providers' requests; nil means a default
	// client.
	HTTPClient *http.Client
	// Executable is the forgemem binary, which a hook starts as the capture
	// worker and hook install writes into the hooks; "" means a hook starts
	// no worker and the hooks run "forgemem".
	Executable string
	// Started is when the process started: a hook's deadline counts from
	// it. Zero means when Run is called.
	Started time.Time
	// HookDeadline is how long a hook may last (see
	// claudecode.HookDeadline, the default when it is 0).
	HookDeadline time.Duration
}

// Main runs the command with the process's arguments, streams and
// environment, cancelled by an interrupt (Ctrl-C) or SIGTERM, and returns
// the exit code.
func Main() int {
	started := time.Now()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts, err := settings.OSOptions()
	if err != nil {
		eprintf(os.Stderr, "forgemem: %v\n", err)
		return ExitFailure
	}
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		exe = ""
	}
	return Run(ctx, Env{
		Args: os.Args[1:], Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		Settings: opts, IsTerminal: fileIsTerminal, Executable: exe, Started: started,
	})
}

// fileIsTerminal reports whether w is a file that is a terminal.
func fileIsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Run runs the command line env.Args and returns the exit code. Errors are
// written to env.Stderr, saying what to do.
func Run(ctx context.Context, env Env) int {
	if env.IsTerminal == nil {
		env.IsTerminal = func(io.Writer) bool { return false }
	}
	if env.Started.IsZero() {
		env.Started = time.Now()
	}
	a := &app{env: env, out: newPrinter(env.Stdout, env.IsTerminal(env.Stdout) && noColorUnset(env.Settings.Env))}
	root := a.rootCommand()
	root.SetArgs(env.Args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		err = a.topicErr
	}
	if a.hookAbandoned {
		// The hook's work is still running, stuck: the process exits
		// without touching what it holds.
		return ExitOK
	}
	if a.ws != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = a.ws.Close(cctx)
	}
	if err == nil {
		return a.code
	}
	if a.hookCC != nil && cmd == a.hookCC {
		// A hook's command line is in the agent's settings: a flag this
		// binary does not know (written by another version of it) must not
		// block the agent's turn, as exit 2 would in Claude Code.
		a.hookFailed("%v", err)
		return ExitOK
	}
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		eprintf(env.Stderr, "%s: interrupted\n", cmd.CommandPath())
		return ExitFailure
	}
	code := a.exitCode(err)
	eprintf(env.Stderr, "%s: %v\n", cmd.CommandPath(), err)
	if !a.started {
		eprintf(env.Stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
	}
	return code
}

// noColorUnset reports whether the NO_COLOR convention leaves colour on.
func noColorUnset(environ []string) bool {
	for _, kv := range environ {
		if len(kv) > len("NO_COLOR=") && kv[:len("NO_COLOR=")] == "NO_COLOR=" {
			return false
		}
	}
	return true
}

// app is one run of the command: its environment, global flags, and what
// the commands share.
type app struct {
	env Env
	out *printer
	// code is the exit code of a command that succeeded but reports
	// problems (validate).
	code int
	// started is set when a command's own work begins: an error before it
	// came from parsing the command line.
	started bool

	repoDir, userDir, configFile string
	verbose                      bool
	// root is the command tree, whose persistent flags hold the settings
	// flags.
	root *cobra.Command
	// cmd is the command running, once its command line is parsed; its
	// flags hold the settings flags, its own (shown in its help) or the
	// root's.
	cmd *cobra.Command
	// hookCC is the hook claude-code command: whatever fails in it, even
	// its command line, exits 0.
	hookCC *cobra.Command
	// hookAbandoned is set when the hook gave up on its work (its deadline,
	// a signal): the work's goroutine still holds the workspace.
	hookAbandoned bool

	settings *settings.Settings
	ws       *workspace.Workspace
	// liveDir, when set before the workspace is opened, keeps its
	// memories in memory (workspace.Options.LiveDir): long-lived commands.
	liveDir string
	// topicErr is the error of a help topic run with arguments (forgemem
	// settings x), which cobra would have answered with its help: see
	// refuseTopicArguments.
	topicErr error
}

// usageError marks an error of the command line, exit code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usagef returns a usage error.
func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// noArgs is cobra.NoArgs in the command's words: an argument to a command
// that takes none is a usage error saying so, quoting what was given, and
// then hint, when there is one, about what to do instead (the flags that
// filter a list, say). cobra.NoArgs said unknown command "extra" for
// "forgemem list", of an argument that was never meant as a command.
func noArgs(hint string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		msg := fmt.Sprintf("%s takes no arguments (got %s)", cmd.Name(), quoteArgs(args))
		if hint != "" {
			msg += "; " + hint
		}
		return usageError{errors.New(msg)}
	}
}

// argCount is what a command that takes arguments takes, for countArgs.
type argCount struct {
	// min and max are the fewest and the most arguments it takes; max < 0
	// is no limit.
	min, max int
	// need says, after the command's name, what a command line with fewer
	// than min arguments lacks, with an example: "needs the id of a
	// memory: forgemem show mem_1b4e28ba".
	need string
	// takes says, after the command's name, what it takes, for a command
	// line with more than max: "takes one id".
	takes string
	// hint, when set, says what to do instead of giving more than max:
	// "show them one at a time".
	hint string
}

// countArgs is cobra.ExactArgs, MinimumNArgs, MaximumNArgs and RangeArgs
// in the command's words, as noArgs is cobra.NoArgs: too few arguments is
// a usage error saying what the command needs, too many one saying what
// it takes, quoting what was given, and then the hint. cobra said accepts
// 1 arg(s), received 2 for "forgemem show a b".
func countArgs(c argCount) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) < c.min:
			return usageError{errors.New(cmd.Name() + " " + c.need)}
		case c.max >= 0 && len(args) > c.max:
			msg := fmt.Sprintf("%s %s (got %d: %s)", cmd.Name(), c.takes, len(args), quoteArgs(args))
			if c.hint != "" {
				msg += "; " + c.hint
			}
			return usageError{errors.New(msg)}
		}
		return nil
	}
}

// maxQuotedArgs is how many arguments an error quotes back.
const maxQuotedArgs = 3

// quoteArgs quotes args for an error, each cut to maxQuotedRef runes and
// at most maxQuotedArgs of them: "a", "b" and 3 more.
func quoteArgs(args []string) string {
	var q []string
	for _, a := range args[:min(len(args), maxQuotedArgs)] {
		q = append(q, strconv.Quote(termtext.Clip(a, maxQuotedRef)))
	}
	s := strings.Join(q, ", ")
	if n := len(args) - maxQuotedArgs; n > 0 {
		s += fmt.Sprintf(" and %d more", n)
	}
	return s
}

// flagError is the usage error for an error parsing the command line's
// flags: a bad value names the flag, the value and what the flag takes,
// rather than the Go parser's error (strconv.ParseInt: parsing "abc").
func flagError(err error) error {
	var bad *pflag.InvalidValueError
	var missing *pflag.ValueRequiredError
	switch {
	case errors.As(err, &bad):
		f, v := bad.GetFlag(), bad.GetValue()
		switch typ := f.Value.Type(); {
		case errors.Is(err, strconv.ErrRange):
			return usagef("--%s: %q is out of range", f.Name, v)
		case typ == "bool":
			return usagef("--%s: %q is not true or false; give --%s alone to turn it on", f.Name, v, f.Name)
		case typ == "duration":
			return usagef("--%s: %q is not a duration; give one such as 30s or 10m", f.Name, v)
		case wantedValue(typ) != "":
			return usagef("--%s: %q is not %s", f.Name, v, wantedValue(typ))
		default:
			return usagef("--%s: %q is not valid: %v", f.Name, v, errors.Unwrap(bad))
		}
	case errors.As(err, &missing):
		f := missing.GetFlag()
		if what := wantedValue(f.Value.Type()); what != "" {
			return usagef("--%s needs a value: %s", f.Name, what)
		}
		return usagef("--%s needs a value", f.Name)
	}
	return usageError{err}
}

// wantedValue says what a flag of a pflag type takes, "" for a type it has
// no words for.
func wantedValue(typ string) string {
	switch typ {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "a whole number"
	case "float32", "float64":
		return "a number"
	case "duration":
		return "a duration such as 30s or 10m"
	}
	return ""
}

// exitCode classifies err: an error of the command line is a usage error,
// also an id that cannot name one memory whatever the command that takes
// it (show, forget, purge, remember's --supersedes and links, review's
// --approve and --reject): too short a prefix (workspace.ErrInvalidInput)
// or an ambiguous one (workspace.ErrAmbiguous).
func (a *app) exitCode(err error) int {
	var ue usageError
	switch {
	case !a.started, errors.As(err, &ue), errors.Is(err, workspace.ErrInvalidInput), errors.Is(err, workspace.ErrAmbiguous):
		return ExitUsage
	case isFlagSettingsError(err, a.configFile != ""):
		return ExitUsage
	}
	return ExitFailure
}

// isFlagSettingsError reports whether err is a settings error caused by
// flags only: a bad value on the command line, or, when configFlag says
// --config was given, the file it names not existing.
func isFlagSettingsError(err error, configFlag bool) bool {
	var errs settings.Errors
	if !errors.As(err, &errs) || len(errs) == 0 {
		return false
	}
	for _, e := range errs {
		missingConfig := configFlag && e.Source.Origin == settings.OriginConfigFile && errors.Is(e, fs.ErrNotExist)
		if e.Source.Origin != settings.OriginFlag && !missingConfig {
			return false
		}
	}
	return true
}

// notASetting annotates a command's own flag that has a setting's name but
// is not that setting (list --stale).
const notASetting = "forgemem-not-a-setting"

// settingsOptions are the settings inputs of the process with the global
// flags and the settings flags the user set.
func (a *app) settingsOptions() settings.Options {
	opts := a.env.Settings
	opts.RepoDir, opts.UserDir, opts.ConfigFile = a.repoDir, a.userDir, a.configFile
	opts.Flags = map[string]string{}
	for k, v := range a.env.Settings.Flags {
		opts.Flags[k] = v
	}
	flags := a.root.PersistentFlags()
	if a.cmd != nil {
		flags = a.cmd.Flags()
	}
	for _, k := range settings.Keys() {
		if f := flags.Lookup(k.Flag); f != nil && f.Changed && f.Annotations[notASetting] == nil {
			opts.Flags[k.Flag] = f.Value.String()
		}
	}
	return opts
}

// loadSettings reads the settings with the global flags, once, and prints
// their warnings (the repository's settings that were ignored) on stderr.
// The hook prints nothing of its own there but its one failure line.
func (a *app) loadSettings() error {
	if a.settings != nil {
		return nil
	}
	s, err := settings.Load(a.settingsOptions())
	if err != nil {
		return fmt.Errorf("the settings:\n%w", err)
	}
	a.settings = s
	if a.hookCC == nil || a.cmd != a.hookCC {
		for _, w := range s.Warnings {
			fmt.Fprintf(a.env.Stderr, "forgemem: %s\n", w)
		}
	}
	return nil
}

// workspace opens the memory folders, once, creating those that do not
// exist: for the commands that write memories.
func (a *app) workspace() (*workspace.Workspace, error) { return a.openWorkspace(false) }

// existingWorkspace opens the memory folders, once, as they are: it
// creates none (workspace.Options.DeferCreate), and a write creates its
// folder. For the commands that read memories, or change ones that exist,
// so that a mistyped path leaves no folder behind. A folder that does not
// exist holds no memories — unless the user named it (--repo-dir,
// --user-dir, or their variables), which is an error saying so (see
// missingNamedFolder).
func (a *app) existingWorkspace() (*workspace.Workspace, error) { return a.openWorkspace(true) }

// openWorkspace opens the memory folders, once, creating none when
// deferCreate is set (see existingWorkspace).
func (a *app) openWorkspace(deferCreate bool) (*workspace.Workspace, error) {
	if a.ws != nil {
		return a.ws, nil
	}
	if err := a.loadSettings(); err != nil {
		return nil, err
	}
	if deferCreate {
		if err := a.missingNamedFolder(); err != nil {
			return nil, err
		}
	}
	opts := workspace.Options{Now: a.env.Now, HTTPClient: a.env.HTTPClient, LiveDir: a.liveDir, DeferCreate: deferCreate}
	if a.verbose {
		opts.Logger = zerolog.New(zerolog.ConsoleWriter{Out: a.env.Stderr, NoColor: !a.env.IsTerminal(a.env.Stderr), FormatPrepare: escapeLogFields}).
			Level(zerolog.DebugLevel).With().Timestamp().Logger()
	}
	if a.env.IsTerminal(a.env.Stderr) {
		opts.Progress = newProgress(a.env.Stderr).update
	}
	ws, err := workspace.Open(a.settings, opts)
	if err != nil {
		return nil, err
	}
	a.ws = ws
	return ws, nil
}

// missingNamedFolder returns the error of a memory folder the user named
// with --repo-dir or --user-dir (a usage error, as a --config file that
// does not exist is) or with FORGEMEM_REPO_DIR or FORGEMEM_USER_DIR, that
// does not exist, for a command that creates no folder: a mistyped path
// would read as a place with no memories. A folder in its default place
// that does not exist is not an error: nothing was remembered there yet.
func (a *app) missingNamedFolder() error {
	p := a.settings.Paths
	for _, f := range []struct {
		dir, what string
		src       settings.Source
	}{
		{p.RepoDir, "repository's", p.RepoDirSource},
		{p.UserDir, "user's", p.UserDirSource},
	} {
		if f.src.Origin == settings.OriginDefault {
			continue
		}
		if _, err := os.Lstat(f.dir); f.dir == "" || !errors.Is(err, fs.ErrNotExist) {
			continue // other problems are the store's to report
		}
		named := f.src.Name
		if f.src.Origin == settings.OriginFlag {
			named = "--" + named
		}
		err := fmt.Errorf("the %s memory folder %s (%s) does not exist; check the path (%s creates no folder; the first memory written there makes it)",
			f.what, f.dir, named, a.cmd.Name())
		if f.src.Origin == settings.OriginFlag {
			return usageError{err}
		}
		return err
	}
	return nil
}

// version is the command's version: its module's version when it was
// installed with go install …@version, "(devel)" when built in a checkout,
// with the VCS revision when the build recorded one.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " " + s.Value[:12]
		}
	}
	return v + " " + info.GoVersion
}

func init() {
	// Commands are listed in the order they are added: by use, not alphabet.
	cobra.EnableCommandSorting = false
}

// rootCommand builds the command tree.
func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "forgemem",
		Short: "See, change and trust what your coding agent remembers",
		Long: `forgemem is long-term memory for AI coding agents: what the user prefers, how the
project is built, what was decided and why, and what the agent was corrected on, kept
as markdown files in .forge/memory/ (the repository's, shared with the team) and
~/.forge/memory/ (yours, in every project), with their whole version history.

This command lists, searches, audits and changes those memories, recalls them for a
conversation as an agent would, and runs capture by hand. Start with: forgemem demo

Settings come from ~/.forge/config.yaml, the repository's .forge/config.yaml, FORGEMEM_*
variables and flags (every memory.* key is a flag, such as --embedding-model);
forgemem help settings lists them, and forgemem config shows each with where it came from.
A repository's .forge/config.yaml cannot choose your provider, server or models, or turn
memory on, until you trust it: forgemem trust.`,
		Version:       version(),
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			a.started = true
			a.cmd = cmd
			return nil
		},
	}
	a.root = root
	// Set before the commands are made: cobra's completion commands keep
	// the writer they find then.
	root.SetIn(a.env.Stdin)
	root.SetOut(a.env.Stdout)
	root.SetErr(a.env.Stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return flagError(err) })
	pf := root.PersistentFlags()
	pf.StringVar(&a.repoDir, "repo-dir", "", "the repository's memory folder (default: .forge/memory in the nearest folder above holding .git)")
	pf.StringVar(&a.userDir, "user-dir", "", "the user's memory folder (default: ~/.forge/memory)")
	pf.StringVar(&a.configFile, "config", "", "an extra settings file, read after ~/.forge/config.yaml and the repository's .forge/config.yaml, and trusted (default: $FORGEMEM_CONFIG)")
	pf.BoolVarP(&a.verbose, "verbose", "v", false, "log what the libraries do to stderr")
	// Every memory.* setting is a flag too (--cadence-turns, --embedding-model,
	// …), read by the settings module with the highest precedence; only
	// --provider is listed in the help, and forgemem help settings lists
	// them all.
	for _, k := range settings.Keys() {
		if k.Flag == "provider" {
			pf.String(k.Flag, "", "the model provider: fake (offline), openai or gemini (default: memory.provider)")
			continue
		}
		pf.String(k.Flag, "", k.Name)
		_ = pf.MarkHidden(k.Flag)
	}

	root.AddGroup(
		&cobra.Group{ID: "see", Title: "See what is remembered:"},
		&cobra.Group{ID: "change", Title: "Change it:"},
		&cobra.Group{ID: "agent", Title: "Do what an agent does:"},
		&cobra.Group{ID: "integrate", Title: "Serve your coding agent:"},
		&cobra.Group{ID: "other", Title: "More:"},
	)
	add := func(group string, cmds ...*cobra.Command) {
		for _, c := range cmds {
			c.GroupID = group
			root.AddCommand(c)
		}
	}
	add("see", a.listCommand(), a.showCommand(), a.searchCommand(), a.graphCommand(), a.exportCommand(), a.statsCommand(), a.validateCommand())
	add("change", a.rememberCommand(), a.forgetCommand(), a.purgeCommand(), a.reviewCommand())
	add("agent", a.recallCommand(), a.captureCommand(), a.chatCommand())
	add("integrate", a.mcpCommand(), a.hookCommand(), a.workerCommand(), a.recallServerCommand())
	add("other", a.demoCommand(), a.evalCommand(), a.configCommand(), a.trustCommand())
	root.AddCommand(settingsHelpTopic())
	root.SetHelpCommandGroupID("other")
	root.SetCompletionCommandGroupID("other")
	root.SetUsageTemplate(usageTemplate(root.UsageTemplate()))
	refuseUnknownHelpTopics(root)
	a.refuseTopicArguments(root)
	root.InitDefaultCompletionCmd()
	completionArgs(root)
	refuseMissingCommands(root)
	return root
}

// completionArgs gives the commands of cobra's completion command, one per
// shell (forgemem completion bash), the words of noArgs for an argument,
// where cobra.NoArgs, which cobra gives them, said unknown command "extra"
// for "forgemem completion bash".
func completionArgs(root *cobra.Command) {
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		for _, shell := range c.Commands() {
			shell.Args = noArgs(fmt.Sprintf("it prints %s's completion script for %s", root.Name(), shell.Name()))
		}
	}
}

// groupHint annotates a command group with what its commands are, for the
// error of a command line that names none of them (see groupArgs).
const groupHint = "forgemem-group-hint"

// refuseMissingCommands makes every command group under root — a command
// that only holds commands, as hook and completion do — refuse a command
// line that names none of its commands (forgemem hook, forgemem hook
// codex) with a usage error naming them, where cobra printed the group's
// help and exited 0. forgemem alone still shows the help, and cobra
// refuses an unknown command of its own.
func refuseMissingCommands(root *cobra.Command) {
	for _, c := range root.Commands() {
		if c.HasSubCommands() && !c.Runnable() {
			// A group that runs is one that can refuse: its arguments are
			// checked before any work starts, and never pass.
			c.Args = groupArgs
			c.RunE = groupArgs
		}
		refuseMissingCommands(c)
	}
}

// groupArgs refuses the command line of a command group: it names none of
// the group's commands, or one it does not have.
func groupArgs(c *cobra.Command, args []string) error {
	var names []string
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	give := orList(names)
	if h := c.Annotations[groupHint]; h != "" {
		give += "; " + h
	}
	if len(args) == 0 {
		return usagef("give one of its commands: %s", give)
	}
	hint := ""
	if s := helpSuggestions(c, args[0]); len(s) > 0 {
		hint = fmt.Sprintf(" (did you mean %s?)", strings.Join(s, " or "))
	}
	return usagef("%q is not a command of %s%s: give %s", termtext.Clip(args[0], maxQuotedRef), c.CommandPath(), hint, give)
}

// orList writes words as "a", "a or b", "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// refuseUnknownHelpTopics makes cobra's help command refuse a topic it
// does not know with a usage error of one line, where it printed "Unknown
// help topic" and the usage and exited 0; forgemem help, help settings and
// help <command> are cobra's.
func refuseUnknownHelpTopics(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	help, _, err := root.Find([]string{"help"})
	if err != nil || help == root || help.Run == nil {
		return
	}
	show := help.Run
	help.Run = nil
	help.RunE = func(c *cobra.Command, args []string) error {
		cmd, rest, err := c.Root().Find(args)
		if cmd != nil && err == nil && len(rest) == 0 {
			show(c, args)
			return nil
		}
		hint := ""
		if cmd != nil && len(rest) > 0 {
			if s := helpSuggestions(cmd, rest[0]); len(s) > 0 {
				hint = fmt.Sprintf(" (did you mean %s?)", strings.Join(s, " or "))
			}
		}
		return usagef("unknown help topic %q%s; %s help lists the commands and topics", strings.Join(args, " "), hint, c.Root().Name())
	}
}

// topicHint annotates a help topic with what it shows, for the error of a
// command line that gives it arguments (see refuseTopicArguments).
const topicHint = "forgemem-topic-hint"

// refuseTopicArguments makes every help topic under root (forgemem
// settings, a command that only shows its help) refuse arguments with a
// usage error, as a command that takes none does (see noArgs), where
// cobra ignored them, showed the topic and exited 0: forgemem settings
// retrieval_top_k read as if it showed that one setting. The topic alone,
// with --help, or through forgemem help still shows it.
func (a *app) refuseTopicArguments(root *cobra.Command) {
	for _, c := range root.Commands() {
		if !c.IsAdditionalHelpTopicCommand() {
			a.refuseTopicArguments(c)
			continue
		}
		c.SetHelpFunc(func(c *cobra.Command, args []string) {
			// Run as a command, the topic's flags were parsed and what
			// is left are its arguments; through forgemem help they are
			// not parsed, and it has none.
			if help, _ := c.Flags().GetBool("help"); !help && c.Flags().NArg() > 0 {
				a.topicErr = noArgs(c.Annotations[topicHint])(c, c.Flags().Args())
				return
			}
			c.Parent().HelpFunc()(c, args)
		})
	}
}

// helpSuggestions are the commands of cmd whose names are near typed, as
// cobra suggests for an unknown command, and its help topics (forgemem
// help settings) that typed begins.
func helpSuggestions(cmd *cobra.Command, typed string) []string {
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2
	}
	s := cmd.SuggestionsFor(typed)
	for _, sub := range cmd.Commands() {
		if sub.IsAdditionalHelpTopicCommand() && strings.HasPrefix(sub.Name(), strings.ToLower(typed)) {
			s = append(s, sub.Name())
		}
	}
	return s
}
