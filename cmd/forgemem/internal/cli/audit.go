package cli

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/spool"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/workspace"
	"github.com/forgemem/forgemem/settings"
	"github.com/spf13/cobra"
)

func (a *app) validateCommand() *cobra.Command {
	var asJSON, fix, yes bool
	cmd := &cobra.Command{
		Use:   "validate",
		Short: "Check the memory files; exit 1 when anything is wrong",
		Long: `Audit both memory folders and report, with each file and what to do about it: files that
are not read as memories (they do not parse, hold an unresolved git merge conflict — kind
merge-conflict — or break the schema, so they would otherwise be skipped without a word)
or are read repaired, ids that differ from their file names, links to memories that are not
stored, supersedes cycles and forks (with the change in force and how to settle each), repo
memories pointing at user-scope ones (they break for teammates), secrets in files on disk,
text holding a control, bidirectional formatting or invisible character a hand edit left
(kind unsafe-character: which field, which character and where; the memory is still read), and repo memories whose anchors moved
or went away (kind stale: which anchor, what happened
to it, the new name of a renamed path), and repo memories whose files say they are in force
but whose text reads like an instruction to the agent's tools, which recall holds until you
approve them in forgemem review (kind held). Exit status 1 when anything is found. With
--json: an array of {path, scope, id, kind, message} objects; a stale one also has anchor,
status and renamed_to.

With --fix, it proposes a new version of each memory that names a renamed path: the
same text naming the new path, shown as a diff. Without --yes it only shows what it would
write (exit 2); with --yes it writes the new versions, each superseding the current one.`,
		Example: "  forgemem validate\n  forgemem validate --json\n  forgemem validate --fix        # shows the new versions it would write\n  forgemem validate --fix --yes",
		Args:    noArgs("it checks every memory file of both memory folders"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if yes && !fix {
				return usagef("--yes goes with --fix")
			}
			ws, err := a.existingWorkspace()
			if err != nil {
				return err
			}
			if fix {
				return a.fixStale(cmd, ws, !yes, asJSON)
			}
			probs, err := ws.Validate(cmd.Context())
			if err != nil {
				return err
			}
			if len(probs) > 0 {
				a.code = ExitFailure
			}
			if asJSON {
				return a.out.json(probs)
			}
			a.printProblems(probs)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	cmd.Flags().BoolVar(&fix, "fix", false, "propose new versions of the memories that name renamed paths")
	cmd.Flags().BoolVar(&yes, "yes", false, "with --fix: write the new versions")
	return cmd
}

// fixStale runs validate --fix: the new versions, shown (dry run, exit 2
// when there are any) or written.
func (a *app) fixStale(cmd *cobra.Command, ws *workspace.Workspace, dryRun, asJSON bool) error {
	res, err := ws.FixStale(cmd.Context(), dryRun)
	if err != nil {
		return err
	}
	if asJSON {
		if err := a.out.json(res); err != nil {
			return err
		}
	} else {
		a.printFixes(res)
	}
	failed := 0
	var written []string
	for _, f := range res.Fixes {
		if f.Err != "" {
			failed++
		}
		if f.Written != "" {
			written = append(written, f.Written)
		}
	}
	if paths := a.chainToCommit(cmd.Context(), written); len(paths) > 0 && !asJSON {
		a.out.println()
		a.noteCommit(paths)
	}
	switch {
	case failed > 0:
		return fmt.Errorf("%s not written (see above)", plural(failed, "new version was", "new versions were"))
	case dryRun && len(res.Fixes) > 0:
		return usageError{fmt.Errorf("nothing was written: run it again with --yes to write %s", plural(len(res.Fixes), "new version", "new versions"))}
	}
	return nil
}

// printFixes shows each proposed (or written) new version as a diff of
// the lines it changes.
func (a *app) printFixes(res *workspace.FixResult) {
	p := a.out
	if len(res.Fixes) == 0 {
		p.println("Nothing to fix: no memory names a path that git says was renamed.")
		a.gitNote()
		return
	}
	for i, f := range res.Fixes {
		if i > 0 {
			p.println()
		}
		m := f.Memory
		p.printf("%s  %s, version %d → %d\n", p.bold(m.ID), kind(m), m.Version, m.Version+1)
		for _, old := range slices.Sorted(maps.Keys(f.Renames)) {
			p.printf("  %s was renamed to %s\n", old, f.Renames[old])
		}
		for _, l := range lineDiff(m.Content, f.Content) {
			p.printf("  %s\n", l)
		}
		if f.StillStale != "" {
			p.printf("  still may be outdated: %s\n", f.StillStale)
		}
		switch {
		case f.Err != "":
			p.printf("  not written: %s\n", f.Err)
		case f.Written != "":
			p.printf("  written as %s\n", f.Written)
		}
	}
	if res.DryRun {
		p.println(p.dim(fmt.Sprintf("\n%s would be written (--yes writes them).", plural(len(res.Fixes), "new version", "new versions"))))
	}
}

// lineDiff returns the lines of old that new changes, "- " before, and
// their new form, "+ " before, in order; a fix changes words within
// lines, so the two texts have the same lines but for those.
func lineDiff(old, new string) []string {
	ol, nl := strings.Split(old, "\n"), strings.Split(new, "\n")
	var out []string
	for i := range max(len(ol), len(nl)) {
		o, n := "", ""
		if i < len(ol) {
			o = ol[i]
		}
		if i < len(nl) {
			n = nl[i]
		}
		if o != n {
			out = append(out, "- "+o, "+ "+n)
		}
	}
	return out
}

func (a *app) printProblems(probs []workspace.Problem) {
	p := a.out
	if len(probs) == 0 {
		p.println("No problems found.")
		return
	}
	files := 0
	for i, pr := range probs {
		if i == 0 || pr.Path != probs[i-1].Path {
			if i > 0 {
				p.println()
			}
			p.println(p.bold(pr.Path))
			files++
		}
		p.printf("  %s: %s\n", pr.Kind, pr.Message)
	}
	p.printf("\n%s in %s.\n", plural(len(probs), "problem", "problems"), plural(files, "file", "files"))
	for _, pr := range probs {
		if pr.Kind == workspace.ProblemStale {
			a.gitNote()
			break
		}
	}
}

func (a *app) statsCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Count the memories by scope, category and origin",
		Args:  noArgs(""),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ws, err := a.existingWorkspace()
			if err != nil {
				return err
			}
			st, err := ws.Stats(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return a.out.json(st)
			}
			a.printStats(st, ws.SpoolDir())
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	return cmd
}

// printStats prints st; spoolDir is the memory folder whose queue it
// counts.
func (a *app) printStats(st *workspace.Stats, spoolDir string) {
	p := a.out
	p.printf("%s, %s, %s in all\n", plural(st.Chains, "memory", "memories"), plural(st.Forgotten, "forgotten", "forgotten"),
		plural(st.Versions, "version", "versions"))
	t := p.table()
	for _, s := range st.Scopes {
		t.row("  %s\t%s\t%s, %d forgotten, %s\tcache %s\n", s.Scope, s.Dir, plural(s.Chains, "memory", "memories"),
			s.Forgotten, plural(s.Versions, "version", "versions"), bytesText(s.CacheBytes))
	}
	t.flush()
	p.printf("\n%s\n", p.bold("By category:"))
	t = p.table()
	for _, c := range st.Categories {
		t.row("  %s\t%d\n", c.Name, c.Count)
	}
	t.flush()
	var parts []string
	for _, c := range st.Triggers {
		parts = append(parts, fmt.Sprintf("%s %d", c.Name, c.Count))
	}
	p.printf("\n%s %s\n", p.bold("Written by trigger:"), strings.Join(parts, ", "))
	if st.Oldest != nil {
		p.printf("%s %s to %s\n", p.bold("Created:"), day(*st.Oldest), day(*st.Newest))
	}
	if st.Waiting > 0 {
		var rules []string
		for _, r := range st.WaitingByRule {
			rules = append(rules, fmt.Sprintf("%d %s", r.Count, r.Name))
		}
		why := strings.Join(rules, ", ")
		if st.Held > 0 {
			why += fmt.Sprintf("; %d of them committed to the repository, held until you approve", st.Held)
		}
		p.printf("%s %d (%s; forgemem review)\n", p.bold("Waiting for your review:"), st.Waiting, why)
	}
	if st.Problems > 0 {
		var kinds []string
		for _, k := range st.Unreadable {
			kinds = append(kinds, fmt.Sprintf("%d %s", k.Count, k.Name))
		}
		p.printf("%s %d (%s; forgemem validate says why)\n", p.bold("Files not read:"), st.Problems, strings.Join(kinds, ", "))
	}
	a.printCaptureQueue(st, spoolDir)
}

// printCaptureQueue says what the capture queue of the memory folder
// spoolDir holds, what it dropped and set aside, and why agent hooks queue
// nothing when they do not.
func (a *app) printCaptureQueue(st *workspace.Stats, spoolDir string) {
	p := a.out
	if st.CaptureOff != "" {
		p.printf("%s %s\n", p.bold("Capture:"), st.CaptureOff)
	}
	switch {
	case st.PendingCaptures > 0:
		p.printf("%s %d; %s\n", p.bold("Captures waiting:"), st.PendingCaptures, st.PendingReason)
	case st.CaptureWorker != 0:
		p.printf("%s none (a capture worker, process %d, is running)\n", p.bold("Captures waiting:"), st.CaptureWorker)
	}
	if st.DroppedCaptures > 0 {
		n := fmt.Sprint(st.DroppedCaptures)
		if st.DroppedSaturated {
			n = "at least " + n
		}
		if st.LastDropped != nil {
			n += ", the last at " + st.LastDropped.Format(time.RFC3339)
		}
		p.printf("%s %s: the queue was full (at most %d entries and %s wait for a worker)\n",
			p.bold("Captures dropped:"), n, spool.MaxEntries, bytesText(spool.MaxBytes))
	}
	if st.SetAsideCaptures > 0 {
		p.printf("%s %d unreadable, renamed *.bad in %s, which no worker runs (not queued by your hooks, or not entries)\n",
			p.bold("Captures set aside:"), st.SetAsideCaptures, filepath.Join(spoolDir, spool.DirName))
	}
}

// bytesText writes a size for people.
func bytesText(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func (a *app) configCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "config",
		Short: "Print the effective settings, each with where it came from",
		Long: `Print every memory.* setting with its effective value and where it came from (the default,
a settings file and line, an environment variable or a flag) — the value in effect, and
why, where another setting overrides it — whether the API key variables are set (never
their values), and the memory folders. The settings of the repository's file that are
ignored until you trust it (forgemem trust) are listed on stderr.`,
		Args: noArgs("it prints every setting; forgemem help settings says what each does"),
		RunE: func(*cobra.Command, []string) error {
			if err := a.loadSettings(); err != nil {
				return err
			}
			a.printConfig(a.settings)
			return nil
		},
	}
}

func (a *app) printConfig(s *settings.Settings) {
	p := a.out
	t := p.table()
	t.header("SETTING", "VALUE", "FROM")
	for _, v := range s.Values() {
		val := v.Value
		if val == "" {
			val = `""`
		}
		from := v.Source.String()
		if v.InEffect != "" {
			// Another setting overrides the value: show the one in effect.
			from = fmt.Sprintf("%s (set to %s by %s)", v.Why, val, from)
			val = v.InEffect
		}
		t.row("%s\t%s\t%s\n", v.Name, val, from)
	}
	for _, k := range []struct{ name, value string }{{settings.EnvOpenAIAPIKey, s.OpenAIAPIKey()}, {settings.EnvGeminiAPIKey, s.GeminiAPIKey()}} {
		state := "not set"
		if k.value != "" {
			state = "set (not shown)"
		}
		t.row("%s\t%s\tenvironment\n", k.name, state)
	}
	t.flush()
	p.printf("\n%s\n", p.bold("Folders:"))
	t = p.table()
	repo := s.Paths.RepoDir
	if repo == "" {
		repo = "off (not inside a git repository; pass --repo-dir)"
	}
	t.row("  repo memories\t%s\n", repo)
	if s.Paths.RepoConfig != "" {
		t.row("  repo settings\t%s\n", s.Paths.RepoConfig)
	}
	user := s.Paths.UserDir
	if user == "" {
		user = "off (no home folder; pass --user-dir)"
	}
	t.row("  user memories\t%s\n", user)
	if s.Paths.UserConfig != "" {
		t.row("  user settings\t%s\n", s.Paths.UserConfig)
	}
	if s.Paths.ExtraConfig != "" {
		t.row("  extra settings\t%s\n", s.Paths.ExtraConfig)
	}
	t.flush()
	if !s.Enabled {
		p.printf("\nMemory is turned off here: %s.\n", s.RetrievalOff())
	} else if off := s.RetrievalOff(); off != "" {
		p.printf("\nRetrieval is off: %s.\n", off)
	}
}
