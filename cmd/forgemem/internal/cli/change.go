package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/termtext"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/workspace"
	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memcore/anchor"
	"github.com/forgemem/forgemem/memcore/redact"
	"github.com/spf13/cobra"
)

func (a *app) rememberCommand() *cobra.Command {
	var in workspace.RememberInput
	var scope, category string
	var anchors []string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   `remember "<text>"`,
		Short: "Add a memory by hand, or a new version of one",
		Long: `Write a memory by hand (trigger manual). Secrets in the text are replaced by [REDACTED]
before anything is written, as capture does.

A new memory needs --scope (repo: this repository, shared with the team; user: you, in
every project) and --category. With --supersedes the text is a new version of an
existing memory, keeping its scope and (unless --category is given) its category; the
new version always supersedes the current one of the chain, and revives a forgotten
chain. Links name other memories by id, and always their current version.

The text is one argument: quote it, as the examples do (several are refused rather than
joined, since the shell changes unquoted words such as *.tmp or $HOME). It may be at most
65,536 characters, with no control character but tab and line breaks, and no bidirectional
formatting or invisible character (U+202E, U+200B: they make text read differently than it
is; U+200D, which joins emoji, is text). --supersedes and the links take an id or a unique
prefix of at least 4 hexadecimal digits (mem_1b4e or 1b4e).

A repo memory records its anchors: the files, folders and identifiers of the repository its
text names (found in the working tree), and those given with --anchor PATH, PATH#SYMBOL or
#SYMBOL, recorded even when the tree does not have them now. forgemem validate and list
--stale report a memory whose anchors moved or went away, and recall labels it.`,
		Example: `  forgemem remember "Migrations live in db/migrations." --scope repo --category project-conventions
  forgemem remember "Prefers table-driven tests." --scope user --category coding-preferences
  forgemem remember "Use optimistic locking, with a retry." --supersedes mem_1b4e28ba
  forgemem remember "Orders are read by GetOrder." --scope repo --category patterns --anchor internal/db/queries.go#GetOrder`,
		Args: func(_ *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				return usagef(`give the text to remember, in quotes: forgemem remember "Migrations live in db/migrations." --scope repo --category project-conventions`)
			case len(args) > 1:
				// Never joined: the shell has already changed an unquoted
				// *.tmp into the files it matches, $HOME into a path.
				return usagef("give the text to remember as one argument, in quotes (got %d: %s): the shell changes unquoted words such as *.tmp or $HOME before forgemem sees them",
					len(args), quoteArgs(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if in.Scope, err = scopeFlag(scope); err != nil {
				return err
			}
			if in.Category, err = categoryFlag(category); err != nil {
				return err
			}
			if in.Supersedes == "" && (in.Scope == "" || in.Category == "") {
				return usagef("a new memory needs --scope and --category (or --supersedes to change an existing one)")
			}
			if in.Anchors, err = anchorFlags(anchors); err != nil {
				return err
			}
			in.Text = args[0]
			in.SessionID = newSessionID()
			ws, err := a.workspace()
			if err != nil {
				return err
			}
			res, err := ws.Remember(cmd.Context(), in)
			if err != nil {
				return err
			}
			if ob := res.OverBudget; ob != nil {
				fmt.Fprintf(a.env.Stderr, "forgemem: warning: %s\n", overBudgetWords(ob))
			}
			if asJSON {
				return a.out.json(res)
			}
			a.printRemembered(cmd.Context(), res)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&scope, "scope", "", "repo or user (required for a new memory)")
	f.StringVar(&category, "category", "", "coding-preferences, project-conventions, architectural-decisions, user-facts, corrections or patterns")
	f.StringVar(&in.Supersedes, "supersedes", "", "the memory this text changes (a new version of it)")
	f.StringArrayVar(&in.RelatesTo, "relates-to", nil, "a related memory (repeatable)")
	f.StringArrayVar(&in.Refines, "refines", nil, "a memory this one refines (repeatable)")
	f.StringArrayVar(&in.Contradicts, "contradicts", nil, "a memory this one contradicts (repeatable)")
	f.StringArrayVar(&anchors, "anchor", nil, fmt.Sprintf("a file or folder of the repository the memory is about, PATH, PATH#SYMBOL or #SYMBOL (repeatable, at most %d)", anchor.DefaultMaxAnchors))
	f.BoolVar(&asJSON, "json", false, "print one JSON document")
	return cmd
}

func (a *app) printRemembered(ctx context.Context, res *workspace.RememberResult) {
	p, m := a.out, res.Memory
	p.printf("Remembered %s (%s, version %d).\n", p.bold(m.ID), kind(m), m.Version)
	if res.NotHead != "" {
		p.printf("%s is not the current version of its chain, so this version supersedes the current one, %s.\n", res.NotHead, res.Superseded)
	} else if res.Superseded != "" {
		p.printf("It supersedes %s, which stays in its history.\n", res.Superseded)
	}
	if len(m.Related) > 0 {
		var links []string
		for _, l := range m.Related {
			links = append(links, fmt.Sprintf("%s %s", l.Relationship, shortID(l.ID)))
		}
		p.printf("Links: %s.\n", strings.Join(links, ", "))
	}
	for _, id := range res.LinkedToHead {
		p.printf("%s is an earlier version of its memory, so the link names the current version.\n", shortID(id))
	}
	if res.Revived {
		p.println("The memory had been forgotten; this version brings it back.")
	}
	if res.Redactions > 0 {
		p.printf("Replaced %s with %s.\n", plural(res.Redactions, "secret", "secrets"), redact.Placeholder)
	}
	if len(m.Anchors) > 0 {
		p.printf("Anchors: %s.\n", anchorList(m.Anchors))
	}
	for _, an := range res.MissingAnchors {
		fmt.Fprintf(a.env.Stderr, "forgemem: warning: %s is not in the working tree now; the memory is recorded with it, and reported stale until it is\n", anchorText(an))
	}
	if res.Held != "" {
		p.printf("It waits for your review. %s It is not recalled until you approve it with forgemem review --approve %s.\n", workspace.WhyHeld(res.Held), shortID(m.ID))
	}
	p.printf("%s\n", p.dim("File: "+m.Path))
	a.noteCommit(a.toCommit(ctx, m))
}

// overBudgetWords says that a memory is too large to be recalled with the
// injection token budget in force, and what to do.
func overBudgetWords(ob *workspace.OverBudget) string {
	return fmt.Sprintf("the memory is never recalled whole into a prompt with the injection token budget in force: "+
		"it takes about %d tokens, over memory.injection_token_budget (%d); split it into shorter memories, or raise memory.injection_token_budget",
		ob.Tokens, ob.Budget)
}

// anchorFlags parses --anchor values: PATH, PATH#SYMBOL or #SYMBOL.
func anchorFlags(values []string) ([]memcore.Anchor, error) {
	var out []memcore.Anchor
	for _, v := range values {
		path, symbol, _ := strings.Cut(v, "#")
		an := memcore.Anchor{Path: strings.TrimPrefix(path, "./"), Symbol: symbol}
		if err := an.Validate(); err != nil {
			return nil, usagef("--anchor %q: %s (write PATH, PATH#SYMBOL or #SYMBOL, the path relative to the repository)", v,
				strings.TrimPrefix(err.Error(), memcore.ErrInvalidMemory.Error()+": anchor "))
		}
		out = append(out, an)
	}
	return out, nil
}

// anchorText writes an anchor as --anchor takes it: PATH, PATH#SYMBOL or
// #SYMBOL.
func anchorText(an memcore.Anchor) string {
	if an.Symbol == "" {
		return an.Path
	}
	return an.Path + "#" + an.Symbol
}

// anchorList writes anchors, comma-separated.
func anchorList(anchors []memcore.Anchor) string {
	parts := make([]string, len(anchors))
	for i, an := range anchors {
		parts[i] = anchorText(an)
	}
	return strings.Join(parts, ", ")
}

func (a *app) forgetCommand() *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   "forget <id>",
		Short: "Forget a memory, keeping its history on disk",
		Long: `Forget a memory: write a new version of its chain, with the same content, marked
retired (with --reason). A forgotten memory is never recalled, searched, offered to
capture's classifier or listed by default (list --retired shows it); its files stay as
history. remember --supersedes revives it; purge deletes it from disk.

Deleting a memory's newest file by hand is not forgetting: its previous version becomes
current again.

The id may be a unique prefix of at least 4 hexadecimal digits (mem_1b4e or 1b4e); a
shorter one is refused even when it matches one memory.`,
		Example: `  forgemem forget mem_1b4e28ba --reason "we moved to Postgres"`,
		Args: countArgs(argCount{min: 1, max: 1,
			need:  `needs the id of the memory to forget: forgemem forget mem_1b4e28ba --reason "we moved to Postgres"; forgemem list lists them`,
			takes: "takes one id", hint: `forget them one at a time; give why with --reason "…", in quotes`}),
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := a.existingWorkspace()
			if err != nil {
				return err
			}
			res, err := ws.Forget(cmd.Context(), args[0], reason)
			if err != nil {
				return err
			}
			p, m := a.out, res.Memory
			if res.Already {
				p.printf("%s was already forgotten (%s, %s).\n", m.ID, termtext.Clip(m.Title, titleWidth), day(m.CreatedAt))
				return nil
			}
			p.printf("Forgot %s: %s\n", p.bold(res.Retired), termtext.Clip(m.Title, titleWidth))
			p.printf("Wrote %s (version %d, retired); the history stays on disk.\n", m.ID, m.Version)
			p.printf("%s\n", p.dim(fmt.Sprintf("Undo: forgemem remember <text> --supersedes %s. Delete for good: forgemem purge %s --yes.", shortID(m.ID), shortID(m.ID))))
			a.noteCommit(a.toCommit(cmd.Context(), m))
			return nil
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", fmt.Sprintf("why it is forgotten, in at most %d characters (kept in the file)", workspace.MaxReasonRunes))
	return cmd
}

func (a *app) purgeCommand() *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "purge <id> --yes",
		Short: "Delete a memory and its whole history from disk",
		Long: `Delete every version of a memory's chain, from both scopes, and their vectors from the
embedding caches: for what must not be kept at all, such as a secret. Without --yes it
only says what it would delete. Use forget to stop a memory being used but keep its
history. The id may be a unique prefix of at least 4 hexadecimal digits (mem_1b4e or
1b4e); a shorter one is refused even when it matches one memory.`,
		Example: "  forgemem purge mem_1b4e28ba          # says what would be deleted\n  forgemem purge mem_1b4e28ba --yes",
		Args: countArgs(argCount{min: 1, max: 1,
			need:  "needs the id of the memory to delete: forgemem purge mem_1b4e28ba; forgemem list --retired lists them, forgotten ones too",
			takes: "takes one id", hint: "purge them one at a time"}),
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := a.existingWorkspace()
			if err != nil {
				return err
			}
			res, err := ws.Purge(cmd.Context(), args[0], !yes)
			if res != nil && !res.DryRun {
				a.printPurged(cmd.Context(), res)
			}
			if err != nil {
				return err
			}
			if res.DryRun {
				var b strings.Builder
				fmt.Fprintf(&b, "purge deletes for good %s (every version of the memory) and their cached vectors:", plural(len(res.Chain), "file", "files"))
				for _, m := range res.Chain {
					fmt.Fprintf(&b, "\n  %s", m.Path)
				}
				if tracked := a.trackedOf(cmd.Context(), res.Chain); len(tracked) > 0 {
					fmt.Fprintf(&b, "\n%s by git: once deleted and the deletion committed, the memory is out of the repository, but git's history keeps it", plural(len(tracked), "of them is tracked", "of them are tracked"))
				}
				b.WriteString("\nrun it again with --yes to delete them, or use forget to keep the history")
				return usageError{fmt.Errorf("%s", b.String())}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&yes, "yes", false, "delete without asking again")
	return cmd
}

func (a *app) printPurged(ctx context.Context, res *workspace.PurgeResult) {
	p := a.out
	head := res.Chain[len(res.Chain)-1]
	p.printf("Deleted %s (every version of %s: %s) and %s.\n", plural(len(res.Chain), "file", "files"),
		head.ID, termtext.Clip(head.Title, 50), plural(res.Vectors, "cached vector", "cached vectors"))
	for _, m := range res.Chain {
		p.printf("  %s\n", p.dim(m.Path))
	}
	if n := len(res.LinkedFrom); n > 0 {
		p.printf("%s to it; forgemem validate lists the dangling links.\n", plural(n, "memory still links", "memories still link"))
	}
	if tracked := a.trackedOf(ctx, res.Chain); len(tracked) > 0 {
		p.printf("Git tracks %d of the deleted files: commit the deletion (git rm %s) to take the memory out of the repository. Its text stays in git's history, and in every clone that fetched it; if it held a secret, change the secret.\n",
			len(tracked), strings.Join(tracked, " "))
	}
}
