package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/spool"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/workspace"
	"github.com/forgemem/forgemem/settings"
	"github.com/spf13/cobra"
)

func (a *app) validateCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "validate",
		Short: "Check the memory files; exit 1 when anything is wrong",
		Long: `Audit both memory folders and report, with each file and what to do about it: files that
are not read as memories (they do not parse or break the schema, so they would otherwise
be skipped without a word) or are read repaired, ids that differ from their file names, links to memories that
are not stored, supersedes cycles and forks, repo memories pointing at user-scope ones
(they break for teammates), and secrets in files on disk. Exit status 1 when anything
is found. With --json: an array of {path, scope, id, kind, message} objects.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ws, err := a.workspace()
			if err != nil {
				return err
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
	return cmd
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
}

func (a *app) statsCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Count the memories by scope, category and origin",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ws, err := a.workspace()
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
			a.printStats(st)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	return cmd
}

func (a *app) printStats(st *workspace.Stats) {
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
		name := c.Name
		if name == "" {
			name = "unrecorded"
		}
		parts = append(parts, fmt.Sprintf("%s %d", name, c.Count))
	}
	p.printf("\n%s %s\n", p.bold("Written by trigger:"), strings.Join(parts, ", "))
	if st.Oldest != nil {
		p.printf("%s %s to %s\n", p.bold("Created:"), day(*st.Oldest), day(*st.Newest))
	}
	if st.Problems > 0 {
		var kinds []string
		for _, k := range st.Unreadable {
			kinds = append(kinds, fmt.Sprintf("%d %s", k.Count, k.Name))
		}
		p.printf("%s %d (%s; forgemem validate says why)\n", p.bold("Files not read:"), st.Problems, strings.Join(kinds, ", "))
	}
	a.printCaptureQueue(st)
}

// printCaptureQueue says what the capture queue holds, what it dropped,
// and why agent hooks queue nothing when they do not.
func (a *app) printCaptureQueue(st *workspace.Stats) {
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
		Args: cobra.NoArgs,
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
	t.row("%s\n", p.bold("SETTING\tVALUE\tFROM"))
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
