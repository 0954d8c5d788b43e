package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/termtext"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/workspace"
	"github.com/forgemem/forgemem/memcore"
	"github.com/spf13/cobra"
)

// scopeFlag checks a --scope value.
func scopeFlag(v string) (memcore.Scope, error) {
	s := memcore.Scope(v)
	if v != "" && !s.Valid() {
		return "", usagef("--scope %q is not one of repo, user", v)
	}
	return s, nil
}

// categoryFlag checks a --category value.
func categoryFlag(v string) (memcore.Category, error) {
	c := memcore.Category(v)
	if v != "" && !c.Valid() {
		var names []string
		for _, c := range memcore.Categories() {
			names = append(names, string(c))
		}
		return "", usagef("--category %q is not one of %s", v, strings.Join(names, ", "))
	}
	return c, nil
}

func (a *app) listCommand() *cobra.Command {
	var scope, category string
	var opts workspace.ListOptions
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the memories: the current version of each",
		Long: `List the current version of every memory, oldest first. Forgotten memories are left
out unless --retired is given, earlier versions unless --all-versions is, and memories that
wait for your review unless --pending is (a memory whose change waits is listed as it is in
force; forgemem review goes through what waits). With --stale, only the repository's
memories whose anchors moved or went away, each with what happened.`,
		Example: "  forgemem list\n  forgemem list --scope repo --category project-conventions\n  forgemem list --all-versions --retired --json\n  forgemem list --pending\n  forgemem list --stale",
		Args:    noArgs("filter with the flags --scope, --category, --pending, --retired, --all-versions or --stale; forgemem search TEXT finds memories by their text"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if opts.Scope, err = scopeFlag(scope); err != nil {
				return err
			}
			if opts.Category, err = categoryFlag(category); err != nil {
				return err
			}
			ws, err := a.existingWorkspace()
			if err != nil {
				return err
			}
			opts.Held = true
			res, err := ws.List(cmd.Context(), opts)
			if err != nil {
				return err
			}
			defer a.warnUnreadable(cmd, res.Unreadable)
			if asJSON {
				return a.out.json(res)
			}
			a.printList(res, opts)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&scope, "scope", "", "only this scope: repo or user")
	f.StringVar(&category, "category", "", "only this category")
	f.BoolVar(&opts.AllVersions, "all-versions", false, "every version, not only the current ones")
	f.BoolVar(&opts.Retired, "retired", false, "include forgotten memories")
	f.BoolVar(&opts.Pending, "pending", false, "include the memories that wait for review")
	f.BoolVar(&opts.Stale, "stale", false, "only the memories that may be outdated: the code they name moved or went away")
	_ = f.SetAnnotation("stale", notASetting, []string{"list's own"})
	f.BoolVar(&asJSON, "json", false, "print one JSON document")
	return cmd
}

func (a *app) printList(res *workspace.ListResult, opts workspace.ListOptions) {
	p := a.out
	if opts.Stale {
		a.printStale(res)
		return
	}
	state := opts.AllVersions || opts.Retired || opts.Pending
	if len(res.Memories) == 0 {
		p.println("No memories here.")
	} else {
		t := p.table()
		header := []string{"ID", "SCOPE", "CATEGORY", "V", "CREATED"}
		if state {
			header = append(header, "STATE")
		}
		t.header(append(header, "TITLE")...)
		for _, m := range res.Memories {
			title := m.Title
			isHeld := slices.Contains(res.Held, m.ID)
			switch {
			case state:
				st := stateOf(m)
				if isHeld {
					st = "held for review"
				}
				t.row("%s\t%s\t%s\t%d\t%s\t%s\t%s\n", shortID(m.ID), m.Scope, m.Category, m.Version, day(m.CreatedAt), st, termtext.Clip(title, titleWidth))
				continue
			case isHeld:
				title = heldMark + title
			}
			t.row("%s\t%s\t%s\t%d\t%s\t%s\n", shortID(m.ID), m.Scope, m.Category, m.Version, day(m.CreatedAt), termtext.Clip(title, titleWidth))
		}
		t.flush()
	}
	scopes := map[memcore.Scope]int{}
	for _, m := range res.Memories {
		scopes[m.Scope]++
	}
	count := plural(len(res.Memories), "memory", "memories")
	if opts.AllVersions {
		count = plural(len(res.Memories), "version", "versions")
	}
	summary := fmt.Sprintf("%s (%d repo, %d user)", count, scopes[memcore.ScopeRepo], scopes[memcore.ScopeUser])
	if res.Hidden > 0 {
		summary += fmt.Sprintf("; %s not shown (--retired shows them)", plural(res.Hidden, "forgotten memory", "forgotten memories"))
	}
	if res.HiddenPending > 0 {
		summary += fmt.Sprintf("; %s for your review, not shown (--pending shows them; forgemem review)", plural(res.HiddenPending, "memory waits", "memories wait"))
	}
	if len(res.Held) > 0 {
		summary += fmt.Sprintf("; held for review, left out of recall until you approve: %s committed to the repository (forgemem review)",
			plural(len(res.Held), "memory", "memories"))
	}
	if len(res.Forked) > 0 {
		summary += fmt.Sprintf("; %s changed on two branches at once, and only one change is in force (forgemem validate)",
			plural(len(res.Forked), "memory was", "memories were"))
	}
	if a.ws.Store().Dir(memcore.ScopeRepo) == "" {
		summary += "; not in a repository, so only the user scope"
	}
	p.println(p.dim(summary + "."))
}

// heldMark starts the title of a memory recall holds in a person's list.
const heldMark = "[held for review] "

// printStale lists the memories that may be outdated, each with why.
func (a *app) printStale(res *workspace.ListResult) {
	p := a.out
	if len(res.Memories) == 0 {
		p.println("No memory here names code that moved or went away.")
		return
	}
	for i, m := range res.Memories {
		if i > 0 {
			p.println()
		}
		p.printf("%s  %s, version %d, %s  %s\n", p.bold(shortID(m.ID)), kind(m), m.Version, day(m.CreatedAt), termtext.Clip(m.Title, titleWidth))
		p.printf("  may be outdated: %s\n", m.Stale)
	}
	p.println(p.dim(fmt.Sprintf("\n%s may be outdated (forgemem validate says what to do).", plural(len(res.Memories), "memory", "memories"))))
	a.gitNote()
}

// gitNote says on stderr, when renames cannot be followed here, why.
func (a *app) gitNote() {
	if c := a.ws.Anchors(); c != nil && c.GitProblem() != nil {
		fmt.Fprintf(a.env.Stderr, "forgemem: renamed paths are reported as gone here: %v\n", c.GitProblem())
	}
}

// stateOf says where a memory stands in its chain.
func stateOf(m workspace.Memory) string {
	switch {
	case m.Status == string(memcore.StatusPending) && m.Head:
		return "waits for review"
	case m.Status == string(memcore.StatusPending):
		return "never approved"
	case m.Retired:
		return "retired"
	case m.Forgotten && m.Head:
		return "forgotten"
	case m.Forgotten:
		return "forgotten, old"
	case m.Head:
		return "current"
	case m.Parallel:
		return "parallel change"
	}
	return "superseded"
}

func (a *app) showCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show <id>",
		Short: "Show a memory with its whole version history and its links",
		Long: `Show one memory: its metadata, content, file, every version of its chain, and its links
to and from other memories. The id may be any unique prefix ("mem_1b4e28ba", "1b4e", "1"):
show only reads, so unlike forget and purge it takes a prefix of any length.`,
		Example: "  forgemem show mem_1b4e28ba\n  forgemem show 1b4e --json",
		Args: countArgs(argCount{min: 1, max: 1,
			need:  "needs the id of a memory: forgemem show mem_1b4e28ba; forgemem list lists them",
			takes: "takes one id", hint: "show them one at a time"}),
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := a.existingWorkspace()
			if err != nil {
				return err
			}
			d, err := ws.Show(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return a.out.json(d)
			}
			a.printDetail(d)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	return cmd
}

func (a *app) printDetail(d *workspace.Detail) {
	p, m := a.out, d.Memory
	p.println(p.bold(m.ID))
	t := p.table()
	t.row("scope\t%s\n", m.Scope)
	t.row("category\t%s\n", m.Category)
	head := d.Chain[len(d.Chain)-1]
	var parallel []string // the versions of a fork's branches that lost it
	for _, v := range d.Chain {
		if v.Parallel && v.ID != m.ID {
			parallel = append(parallel, fmt.Sprintf("%s (version %d)", shortID(v.ID), v.Version))
		}
	}
	switch {
	case m.Parallel:
		t.row("version\t%d, a parallel change not in force: %s (version %d), changed alongside it, is the current version; forgemem validate says how to settle it\n",
			m.Version, shortID(head.ID), head.Version)
	case m.Head:
		t.row("version\t%d of %d (the current version)\n", m.Version, len(d.Chain)-len(parallel))
	default:
		t.row("version\t%d of %d (superseded)\n", m.Version, len(d.Chain)-len(parallel))
	}
	if len(parallel) > 0 && !m.Parallel {
		t.row("forked\t%s changed it in parallel, not in force (as a merge of two branches that each changed it leaves it); forgemem validate says how to settle it\n",
			strings.Join(parallel, " and "))
	}
	t.row("created\t%s\n", minute(m.CreatedAt))
	if m.Trigger != "" {
		t.row("written by\t%s\n", triggerWords(m.Trigger, m.Source))
	}
	if m.SessionID != "" {
		t.row("session\t%s\n", m.SessionID)
	}
	trustRows(t, m, a.stated(m), "")
	if m.Status == string(memcore.StatusPending) && m.Head {
		t.row("status\twaits for your review in forgemem review. %s\n", workspace.WhyHeld(m.StatusReason))
	}
	if d.Held != "" {
		t.row("status\theld for your review: committed to the repository, it is left out of recall and search until you approve it in forgemem review. %s\n", workspace.WhyHeld(d.Held))
	}
	if m.Forgotten {
		why := ""
		if head.RetiredReason != "" {
			why = ": " + head.RetiredReason
		}
		t.row("status\tforgotten on %s%s (remember --supersedes %s revives it)\n", day(head.CreatedAt), why, shortID(head.ID))
	}
	anchorRows(t, m)
	t.row("file\t%s\n", m.Path)
	t.flush()
	p.printf("\n%s\n", indent(m.Content, "  "))
	if len(d.Chain) > 1 {
		p.printf("\n%s\n", p.bold("History, oldest first:"))
		t := p.table()
		for _, v := range d.Chain {
			t.row("  v%d\t%s\t%s\t%s\n", v.Version, shortID(v.ID), day(v.CreatedAt), historyText(v, m.ID))
		}
		t.flush()
	}
	if len(d.Out) > 0 {
		p.printf("\n%s\n", p.bold("Links out:"))
		t := p.table()
		for _, e := range d.Out {
			t.row("  %s\t%s\t%s\n", e.Relationship, shortID(e.ID), otherTitle(e))
		}
		t.flush()
	}
	if len(d.In) > 0 {
		p.printf("\n%s\n", p.bold("Links in:"))
		t := p.table()
		for _, e := range d.In {
			to := ""
			if e.To != m.ID {
				to = fmt.Sprintf(" (to %s)", shortID(e.To))
			}
			t.row("  %s\t%s\t%s%s\n", passive(e.Relationship), shortID(e.ID), otherTitle(e), to)
		}
		t.flush()
	}
}

// anchorRows writes, in show's table, why m may be outdated and its
// anchors, when it has them.
func anchorRows(t *table, m workspace.Memory) {
	if m.Stale != "" {
		t.row("stale\tmay be outdated: %s\n", m.Stale)
	}
	if len(m.Anchors) > 0 {
		t.row("anchors\t%s\n", anchorList(m.Anchors))
	}
}

// historyText is what show's history says of version v of the chain of
// the memory shown, this: its title, or that it forgot the memory (with
// the reason), brought it back or undid a change review rejected (with the
// reason).
func historyText(v workspace.Memory, this string) string {
	text := termtext.Clip(v.Title, titleWidth)
	switch {
	case v.Retired && v.RetiredReason != "":
		return "(forgotten: " + v.RetiredReason + ")"
	case v.Retired:
		return "(forgotten)"
	case v.ID == this && v.Parallel:
		text = "(this version, a parallel change not in force)"
	case v.ID == this:
		text = "(this version)"
	case v.Parallel:
		text += " (a parallel change, not in force)"
	}
	if v.Revives {
		text += " (brought back)"
	}
	if v.RejectionReason != "" {
		text += " (a change rejected: " + v.RejectionReason + ")"
	}
	return text
}

// otherTitle is the title of the memory at an edge's other end.
func otherTitle(e workspace.Edge) string {
	if e.Other == nil {
		return "(not stored: a dangling link)"
	}
	return termtext.Clip(e.Other.Title, titleWidth-10)
}

// passive words an incoming link: "refined by", "contradicted by", "related to".
func passive(r memcore.Relationship) string {
	switch r {
	case memcore.RelationshipRefines:
		return "refined by"
	case memcore.RelationshipContradicts:
		return "contradicted by"
	case memcore.RelationshipRelatesTo:
		return "related to"
	}
	return string(r)
}

// triggerWords says what wrote a memory, from its trigger and its source:
// a memory written by hand (manual) by an agent, through a tool (source
// agent), is not said to be a person's.
func triggerWords(t, source string) string {
	switch memcore.Trigger(t) {
	case memcore.TriggerCadence:
		return "capture, after a turn (cadence)"
	case memcore.TriggerCompaction:
		return "capture, at a compaction"
	case memcore.TriggerManual:
		if memcore.Source(source) == memcore.SourceAgent {
			return "an agent, through a tool (manual)"
		}
		return "a person (manual)"
	}
	return t
}

// stated reports whether the user stated m (workspace.Workspace.Stated),
// for a command that opened the workspace.
func (a *app) stated(m workspace.Memory) bool { return a.ws != nil && a.ws.Stated(m) }

// trustRows adds to t, each row starting with indent, who stated m (stated:
// the user did) and, when recorded, the evidence quoted from the
// conversation with its time.
func trustRows(t *table, m workspace.Memory, stated bool, indent string) {
	t.row("%ssource\t%s\n", indent, sourceWords(m.Source, stated))
	if m.EvidenceQuote != "" {
		at := ""
		if m.EvidenceAt != nil {
			at = ", " + minute(*m.EvidenceAt)
		}
		// On one line, its quotes and backslashes as they are: the row
		// escapes control characters once, where %q would show \"%w\" for
		// "%w", and \\x1b for an escape.
		t.row("%sevidence\t\"%s\"%s\n", indent, oneLine(m.EvidenceQuote), at)
	}
}
