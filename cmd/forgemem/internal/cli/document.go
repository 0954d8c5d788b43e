package cli

import (
	"fmt"
	"strings"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/termtext"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/workspace"
	"github.com/forgemem/forgemem/memcore"
	"github.com/spf13/cobra"
)

func (a *app) exportCommand() *cobra.Command {
	var retired bool
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Print every memory as one markdown document",
		Long: `Print one markdown document of every memory, by scope and category, each with its earlier
versions: to read, review or share what an agent knows. Forgotten memories are left out
unless --retired is given.`,
		Example: "  forgemem export > memories.md",
		Args:    noArgs("it prints every memory (--retired adds forgotten ones); forgemem show ID prints one"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ws, err := a.existingWorkspace()
			if err != nil {
				return err
			}
			ex, err := ws.Export(cmd.Context(), retired)
			if err != nil {
				return err
			}
			defer a.warnUnreadable(cmd, ex.Unreadable)
			a.printExport(ex)
			return nil
		},
	}
	cmd.Flags().BoolVar(&retired, "retired", false, "include forgotten memories")
	return cmd
}

// scopeTitles name the scopes in headings.
var scopeTitles = map[memcore.Scope]string{
	memcore.ScopeRepo: "Repository (.forge/memory, shared with the team)",
	memcore.ScopeUser: "Personal (~/.forge/memory, in every project)",
}

func (a *app) printExport(ex *workspace.Export) {
	p := a.out // markdown: never styled
	p.println("# Memories")
	chains := 0
	for _, s := range ex.Sections {
		chains += len(s.Chains)
	}
	p.printf("\n%s, by scope and category, each with its earlier versions oldest first.\n", plural(chains, "memory", "memories"))
	var scope memcore.Scope
	for _, s := range ex.Sections {
		if s.Scope != scope {
			scope = s.Scope
			p.printf("\n## %s\n", scopeTitles[scope])
		}
		p.printf("\n### %s\n\n", s.Category)
		for _, c := range s.Chains {
			a.printExportChain(c)
		}
	}
}

// printExportChain writes one chain of the export: its current text and
// metadata, its links, and its earlier versions — a version that forgot
// the memory as the forgetting it is, not as a repeat of its text, and a
// version of a fork's branch that lost it as a parallel change.
func (a *app) printExportChain(c workspace.Chain) {
	p, h := a.out, c.Head
	p.printf("- %s\n", strings.TrimPrefix(indent(strings.TrimSpace(h.Content), "  "), "  "))
	meta := fmt.Sprintf("`%s`, version %d, %s", h.ID, h.Version, day(h.CreatedAt))
	if h.Trigger != "" {
		meta += ", " + h.Trigger
	}
	if h.Revives {
		meta += ", brought back after it was forgotten"
	}
	if h.Retired {
		meta += ", **forgotten**" + forgottenReason(h, ": ")
	}
	switch {
	case h.Status == string(memcore.StatusPending):
		meta += ", **waits for review** (" + mdEscape(h.StatusReason) + ")"
	case c.Held != "":
		meta += ", **held for review** (" + mdEscape(c.Held) + "; committed to the repository)"
	}
	p.printf("  <br>*%s*\n", meta)
	for _, r := range h.Related {
		p.printf("  - %s `%s`\n", r.Relationship, r.ID)
	}
	for _, v := range c.History {
		what := mdEscape(oneLine(v.Content))
		switch {
		case v.Retired:
			what = "forgotten" + forgottenReason(v, ": ")
		case v.Revives:
			what = "brought back: " + what
		}
		when := "earlier"
		if v.Parallel {
			when = "in parallel, not in force"
		}
		p.printf("  - %s, version %d, %s (`%s`): %s\n", when, v.Version, day(v.CreatedAt), v.ID, what)
	}
}

// forgottenReason is sep and a retired version's reason, markdown-escaped,
// or "" when it has none.
func forgottenReason(m workspace.Memory, sep string) string {
	if m.RetiredReason == "" {
		return ""
	}
	return sep + mdEscape(m.RetiredReason)
}

// oneLine joins the lines of s with spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// mdEscape keeps text from starting markdown structure in a heading or list.
func mdEscape(s string) string {
	return strings.NewReplacer("\n", " ", "<", "&lt;", ">", "&gt;").Replace(s)
}

func (a *app) graphCommand() *cobra.Command {
	var format string
	var retired bool
	cmd := &cobra.Command{
		Use:   "graph",
		Short: "Print the memory graph as Mermaid or Graphviz DOT",
		Long: `Print the memories (the current version of each) and the links between them — refines,
contradicts, relates-to — as a Mermaid flowchart (paste it into markdown) or a Graphviz
DOT graph (forgemem graph --format dot | dot -Tsvg > memories.svg).`,
		Args: noArgs("it draws every memory (--format mermaid or dot; --retired adds forgotten ones)"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "mermaid" && format != "dot" {
				return usagef("--format %q is not one of mermaid, dot", format)
			}
			ws, err := a.existingWorkspace()
			if err != nil {
				return err
			}
			g, err := ws.Graph(cmd.Context(), retired)
			if err != nil {
				return err
			}
			if format == "dot" {
				a.printDOT(g)
			} else {
				a.printMermaid(g)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "mermaid", "mermaid or dot")
	cmd.Flags().BoolVar(&retired, "retired", false, "include forgotten memories")
	return cmd
}

// nodeLabel is what a graph shows of a chain, escaped (see
// escapeControls) before it is quoted for Mermaid or DOT.
func nodeLabel(n workspace.GraphNode) string {
	label := fmt.Sprintf("%s %s: %s", shortID(n.Memory.ID), n.Memory.Category, termtext.Clip(n.Memory.Title, 48))
	if n.Versions > 1 {
		label += fmt.Sprintf(" (v%d)", n.Versions)
	}
	if n.Memory.Retired {
		label += " (forgotten)"
	}
	return escapeControls(label)
}

func (a *app) printMermaid(g *workspace.Graph) {
	p := a.out
	p.println("flowchart LR")
	node := map[string]string{}
	for i, n := range g.Nodes {
		node[n.Memory.ID] = fmt.Sprintf("n%d", i+1)
		shape := "[\"%s\"]"
		if n.Memory.Scope == memcore.ScopeUser {
			shape = "([\"%s\"])" // stadium: personal memories
		}
		p.printf("  %s"+shape+"\n", node[n.Memory.ID], mermaidEscape(nodeLabel(n)))
	}
	for _, e := range g.Edges {
		arrow := "-->"
		if e.Relationship == memcore.RelationshipContradicts {
			arrow = "-.->"
		}
		p.printf("  %s %s|%s| %s\n", node[e.From], arrow, e.Relationship, node[e.To])
	}
}

// mermaidEscape writes text for a quoted Mermaid label.
func mermaidEscape(s string) string {
	return strings.NewReplacer(`"`, "#quot;", "\n", " ").Replace(s)
}

func (a *app) printDOT(g *workspace.Graph) {
	p := a.out
	p.println("digraph memories {")
	p.println("  rankdir=LR;")
	p.println(`  node [shape=box, fontname="Helvetica"];`)
	for _, n := range g.Nodes {
		style := ""
		if n.Memory.Scope == memcore.ScopeUser {
			style = ", style=rounded"
		}
		p.printf("  %s [label=%s%s];\n", dotQuote(n.Memory.ID), dotQuote(nodeLabel(n)), style)
	}
	for _, e := range g.Edges {
		style := ""
		if e.Relationship == memcore.RelationshipContradicts {
			style = ", style=dashed"
		}
		p.printf("  %s -> %s [label=%s%s];\n", dotQuote(e.From), dotQuote(e.To), dotQuote(string(e.Relationship)), style)
	}
	p.println("}")
}

// dotQuote writes s as a DOT string.
func dotQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}
