package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/workspace"
	"github.com/forgemem/forgemem/memcore"
)

func (h *handlers) show(ctx context.Context, in showArgs) (string, showOut, error) {
	if strings.TrimSpace(string(in.ID)) == "" {
		return "", showOut{}, errNoID
	}
	d, err := h.ws.Show(ctx, string(in.ID))
	if err != nil {
		return "", showOut{}, err
	}
	m := d.Memory
	head := d.Chain[len(d.Chain)-1]
	out := showOut{Memory: memoryOf(m, maxShowContentBytes), Current: head.ID,
		Chain: []versionOut{}, LinksOut: []linkOut{}, LinksIn: []linkOut{}}
	var b strings.Builder
	fmt.Fprintf(&b, "%s — %s, version %d of %d, created %s, trigger %s\n", m.ID, kind(m), m.Version, len(d.Chain),
		m.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"), orNone(m.Trigger))
	switch {
	case m.Forgotten:
		out.Status = "forgotten"
		reason := ""
		if head.RetiredReason != "" {
			reason = " (" + head.RetiredReason + ")"
		}
		fmt.Fprintf(&b, "Status: forgotten%s; it is not recalled, searched or listed.\n", reason)
	case m.Head && m.Status == string(memcore.StatusPending):
		out.Status = "waits for review"
		fmt.Fprintf(&b, "Status: waits for the user's review (%s); it is not recalled or searched until approved.\n", m.StatusReason)
	case d.Held != "":
		out.Status = "waits for review"
		fmt.Fprintf(&b, "Status: held for the user's review (%s): the repository committed it, and it is not recalled or searched until the user approves it.\n", d.Held)
	case m.Head && m.Stale != "":
		out.Status = "current"
		fmt.Fprintf(&b, "Status: current, but may be outdated: %s.\n", m.Stale)
	case m.Head:
		out.Status = "current"
		b.WriteString("Status: current.\n")
	default:
		out.Status = "earlier version"
		fmt.Fprintf(&b, "Status: an earlier version; the current one is %s.\n", head.ID)
	}
	b.WriteString("\n" + out.Memory.Content + "\n")
	var notes []string
	if out.Memory.ContentCut {
		notes = append(notes, fmt.Sprintf("The content is %d bytes; the first %d KiB are shown. The whole memory is the file %s.",
			len(m.Content), maxShowContentBytes>>10, m.Path))
	}
	budget := maxResultBytes - b.Len()
	budget = writeHistory(&b, &out, d, budget)
	writeLinks(&b, &out, d, budget)
	if out.LeftOut > 0 {
		notes = append(notes, fmt.Sprintf("%s left out to keep this result under 64 KiB.", count(out.LeftOut, "version or link was", "versions or links were")))
	}
	out.Note = strings.Join(notes, " ")
	if out.Note != "" {
		b.WriteString("\n" + out.Note + "\n")
	}
	return b.String(), out, nil
}

// writeHistory writes the chain's versions, oldest first, within budget
// bytes: the newest versions are kept when not all fit. It returns what is
// left of the budget.
func writeHistory(b *strings.Builder, out *showOut, d *workspace.Detail, budget int) int {
	if len(d.Chain) < 2 {
		for _, v := range d.Chain {
			out.Chain = append(out.Chain, versionOf(v))
		}
		return budget
	}
	lines := make([]string, 0, len(d.Chain))
	first := len(d.Chain)
	for i := len(d.Chain) - 1; i >= 0; i-- {
		v := d.Chain[i]
		mark := ""
		if v.ID == d.Memory.ID {
			mark = " (this one)"
		}
		if v.Retired {
			mark += " (forgets the memory)"
		}
		line := fmt.Sprintf("- version %d, %s, %s%s: %s\n", v.Version, v.ID, v.CreatedAt.UTC().Format("2006-01-02"), mark, oneLine(v.Content))
		if len(line) > budget {
			break
		}
		budget -= len(line)
		lines = append(lines, line)
		first = i
	}
	out.LeftOut += first
	b.WriteString("\nVersion history, oldest first:\n")
	if first > 0 {
		fmt.Fprintf(b, "- (%s left out)\n", count(first, "older version", "older versions"))
	}
	for i := len(lines) - 1; i >= 0; i-- {
		b.WriteString(lines[i])
	}
	for _, v := range d.Chain[first:] {
		out.Chain = append(out.Chain, versionOf(v))
	}
	return budget
}

func versionOf(v workspace.Memory) versionOut {
	return versionOut{ID: v.ID, Version: v.Version, CreatedAt: v.CreatedAt, Retired: v.Retired, Line: oneLine(v.Content)}
}

// writeLinks writes the links out and in, within budget bytes.
func writeLinks(b *strings.Builder, out *showOut, d *workspace.Detail, budget int) {
	write := func(title string, edges []workspace.Edge, format func(workspace.Edge) string) []linkOut {
		links := []linkOut{}
		for i, e := range edges {
			line := format(e)
			if len(line) > budget {
				out.LeftOut += len(edges) - i
				break
			}
			if i == 0 {
				b.WriteString(title)
			}
			budget -= len(line)
			b.WriteString(line)
			links = append(links, linkOut{Relationship: e.Relationship, ID: e.ID, Line: otherLine(e)})
		}
		return links
	}
	out.LinksOut = write("\nLinks from this memory:\n", d.Out, func(e workspace.Edge) string {
		return fmt.Sprintf("- %s %s: %s\n", e.Relationship, e.ID, other(e))
	})
	out.LinksIn = write("\nLinks to this memory:\n", d.In, func(e workspace.Edge) string {
		return fmt.Sprintf("- %s %s this memory: %s\n", e.ID, e.Relationship, other(e))
	})
}

// other is the first line of the memory at an edge's other end.
func other(e workspace.Edge) string {
	if e.Other == nil {
		return "(no such memory)"
	}
	return oneLine(e.Other.Content)
}

func otherLine(e workspace.Edge) string {
	if e.Other == nil {
		return ""
	}
	return oneLine(e.Other.Content)
}

// kind is "scope/category".
func kind(m workspace.Memory) string { return string(m.Scope) + "/" + string(m.Category) }

func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != "" {
			lines[i] = "   " + l
		}
	}
	return strings.Join(lines, "\n")
}

// oneLine is s on one line, clipped.
func oneLine(s string) string {
	return clip(strings.Join(strings.Fields(clipBytes(s, 4<<10)), " "), 160)
}

// clip is s cut to n runes, ending with "…" when cut. It reads at most
// the first 4n bytes of s, however long s is.
func clip(s string, n int) string {
	short := clipBytes(s, 4*n) // n runes are at most 4n bytes
	if len(short) == len(s) && utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(short)
	return string(r[:min(len(r), n-1)]) + "…"
}

// clipBytes is s cut to at most n bytes, at a rune boundary.
func clipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func orNone(s string) string {
	if s == "" {
		return "unrecorded"
	}
	return s
}
