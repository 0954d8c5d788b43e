package mcpserver

import (
	"context"
	"encoding/json"
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
	base := showOut{Memory: memoryOf(m, maxShowContentBytes), Current: head.ID,
		Chain: []versionOut{}, LinksOut: []linkOut{}, LinksIn: []linkOut{}}
	shrunk := fitContentJSON(&base.Memory, maxShowContentBytes)
	var b strings.Builder
	var parallel []string // the versions of a fork's branches that lost it
	for _, v := range d.Chain {
		if v.Parallel && v.ID != m.ID {
			parallel = append(parallel, v.ID)
		}
	}
	of := fmt.Sprintf(" of %d", len(d.Chain)-len(parallel))
	if m.Parallel {
		of = ""
	}
	fmt.Fprintf(&b, "%s — %s, version %d%s, created %s, trigger %s\n", m.ID, kind(m), m.Version, of,
		m.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"), orNone(m.Trigger))
	switch {
	case m.Forgotten:
		base.Status = "forgotten"
		b.WriteString(joinNotes("Status: forgotten; it is not recalled, searched or listed.", whyForgotten(head.RetiredReason)) + "\n")
	case m.Head && m.Status == string(memcore.StatusPending):
		base.Status = "waits for review"
		b.WriteString(joinNotes("Status: waits for the user's review; it is not recalled or searched until approved.", workspace.WhyHeld(m.StatusReason)) + "\n")
	case d.Held != "":
		base.Status = "waits for review"
		b.WriteString(joinNotes("Status: held for the user's review: the repository committed it, and it is not recalled or searched until the user approves it.", workspace.WhyHeld(d.Held)) + "\n")
	case m.Head && m.Stale != "":
		base.Status = "current"
		fmt.Fprintf(&b, "Status: current, but may be outdated: %s.\n", m.Stale)
	case m.Head:
		base.Status = "current"
		b.WriteString("Status: current.\n")
	case m.Parallel:
		base.Status = "parallel change"
		fmt.Fprintf(&b, "Status: a parallel change that is not in force: another change of the same version, %s, is current (as a merge of two branches that each changed the memory leaves it).\n", head.ID)
	default:
		base.Status = "earlier version"
		fmt.Fprintf(&b, "Status: an earlier version; the current one is %s.\n", head.ID)
	}
	if len(parallel) > 0 && !m.Parallel {
		fmt.Fprintf(&b, "Forked: %s changed it in parallel (as a merge of two branches that each changed the memory leaves it), and that change is not in force.\n", strings.Join(parallel, " and "))
	}
	b.WriteString("\n" + base.Memory.Content + "\n")
	prefix := b.String()
	contentNote := ""
	if base.Memory.ContentCut {
		shown := fmt.Sprintf("%d KiB", maxShowContentBytes>>10)
		if shrunk {
			shown = fmt.Sprintf("%d bytes", len(base.Memory.Content))
		}
		contentNote = fmt.Sprintf("The content is %d bytes; the first %s are shown. The whole memory is the file %s.",
			len(m.Content), shown, m.Path)
	}
	entries := showEntries(d)
	render := func(n int) (string, showOut) {
		out := base
		out.Chain, out.LinksOut, out.LinksIn = []versionOut{}, []linkOut{}, []linkOut{}
		var b strings.Builder
		b.WriteString(prefix)
		writeShowEntries(&b, &out, d, entries, n)
		leftOut := ""
		if out.LeftOut > 0 {
			leftOut = fmt.Sprintf("%s left out to keep this result under 64 KiB; forgemem show %s in a terminal shows them all.",
				leftOutParts(out.VersionsLeftOut, out.LinksLeftOut), m.ID)
		}
		out.Note = joinNotes(contentNote, leftOut)
		if out.Note != "" {
			b.WriteString("\n" + out.Note + "\n")
		}
		return b.String(), out
	}
	text, out := fitAtLeast(0, fitting(entries), render)
	return text, out, nil
}

// whyForgotten says why a memory was forgotten in a sentence of its own,
// as workspace.WhyHeld says why one waits, so that a reason holding
// parentheses never nests them in the status's: "Why it was forgotten: we
// moved to an event log (ADR 12)." It is "" for no reason.
func whyForgotten(reason string) string {
	reason = strings.TrimSuffix(strings.TrimSpace(memcore.VisibleText(reason)), ".")
	if reason == "" {
		return ""
	}
	return "Why it was forgotten: " + reason + "."
}

// leftOutParts says how many versions and links were left out: "3 older
// versions and 2 links were", "1 link was".
func leftOutParts(versions, links int) string {
	var parts []string
	if versions > 0 {
		parts = append(parts, count(versions, "older version", "older versions"))
	}
	if links > 0 {
		parts = append(parts, count(links, "link", "links"))
	}
	verb := " were"
	if versions+links == 1 {
		verb = " was"
	}
	return strings.Join(parts, " and ") + verb
}

// fitContentJSON cuts m's content further when its JSON — quotes,
// newlines, <, & and > escaped, the string's quotes aside — is over
// maxJSON bytes, so that the content is at most maxJSON bytes in the text
// and in the structured content. It reports whether it cut.
func fitContentJSON(m *memoryOut, maxJSON int) bool {
	size := func(s string) int {
		data, err := json.Marshal(s)
		if err != nil {
			panic(fmt.Sprintf("mcpserver: marshalling a content: %v", err))
		}
		return len(data) - 2
	}
	if size(m.Content) <= maxJSON {
		return false
	}
	// clipBytes(content, lo) fits; clipBytes(content, hi) does not.
	lo, hi := 0, len(m.Content)
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if size(clipBytes(m.Content, mid)) <= maxJSON {
			lo = mid
		} else {
			hi = mid
		}
	}
	m.Content, m.ContentCut = clipBytes(m.Content, lo), true
	return true
}

// showEntry is a version of the chain or a link as memory_show gives it:
// its line and its structured content.
type showEntry struct {
	line    string
	version *versionOut
	link    *linkOut
	// in is true for a link to the memory.
	in bool
}

func (e showEntry) sizes() (int, any) {
	if e.version != nil {
		return len(e.line), e.version
	}
	return len(e.line), e.link
}

// showEntries are the entries of d that a show keeps while they fit, in
// that order: the chain's versions, newest first (when it has more than
// one), the links from the memory, the links to it.
func showEntries(d *workspace.Detail) []showEntry {
	var entries []showEntry
	if len(d.Chain) >= 2 {
		for i := len(d.Chain) - 1; i >= 0; i-- {
			v := d.Chain[i]
			mark := ""
			if v.ID == d.Memory.ID {
				mark = " (this one)"
			}
			if v.Retired {
				mark += " (forgets the memory)"
			}
			if v.Parallel {
				mark += " (a parallel change, not in force)"
			}
			vo := versionOf(v)
			entries = append(entries, showEntry{line: fmt.Sprintf("- version %d, %s, %s%s: %s\n", v.Version, v.ID, v.CreatedAt.UTC().Format("2006-01-02"), mark, vo.Line), version: &vo})
		}
	}
	for _, e := range d.Out {
		l := linkOut{Relationship: e.Relationship, ID: e.ID, Line: otherLine(e)}
		entries = append(entries, showEntry{line: fmt.Sprintf("- %s %s: %s\n", e.Relationship, e.ID, other(e)), link: &l})
	}
	for _, e := range d.In {
		l := linkOut{Relationship: e.Relationship, ID: e.ID, Line: otherLine(e)}
		entries = append(entries, showEntry{line: fmt.Sprintf("- %s %s this memory: %s\n", e.ID, e.Relationship, other(e)), link: &l, in: true})
	}
	return entries
}

// writeShowEntries writes the first n entries: the newest versions of the
// chain, oldest first, then the links from and to the memory; it counts
// the others in out. A chain of one version is always in out.Chain, and
// not written.
func writeShowEntries(b *strings.Builder, out *showOut, d *workspace.Detail, entries []showEntry, n int) {
	var versions, linksOut, linksIn []showEntry
	for _, e := range entries[:n] {
		switch {
		case e.version != nil:
			versions = append(versions, e)
		case e.in:
			linksIn = append(linksIn, e)
		default:
			linksOut = append(linksOut, e)
		}
	}
	if len(d.Chain) < 2 {
		for _, v := range d.Chain {
			out.Chain = append(out.Chain, versionOf(v))
		}
	} else {
		out.VersionsLeftOut = len(d.Chain) - len(versions)
		b.WriteString("\nVersion history, oldest first:\n")
		if out.VersionsLeftOut > 0 {
			fmt.Fprintf(b, "- (%s left out)\n", count(out.VersionsLeftOut, "older version", "older versions"))
		}
		for i := len(versions) - 1; i >= 0; i-- {
			b.WriteString(versions[i].line)
			out.Chain = append(out.Chain, *versions[i].version)
		}
	}
	for i, e := range linksOut {
		if i == 0 {
			b.WriteString("\nLinks from this memory:\n")
		}
		b.WriteString(e.line)
		out.LinksOut = append(out.LinksOut, *e.link)
	}
	for i, e := range linksIn {
		if i == 0 {
			b.WriteString("\nLinks to this memory:\n")
		}
		b.WriteString(e.line)
		out.LinksIn = append(out.LinksIn, *e.link)
	}
	out.LinksLeftOut = len(d.Out) + len(d.In) - len(linksOut) - len(linksIn)
	out.LeftOut = out.VersionsLeftOut + out.LinksLeftOut
}

func versionOf(v workspace.Memory) versionOut {
	return versionOut{ID: v.ID, Version: v.Version, CreatedAt: v.CreatedAt, Retired: v.Retired, Parallel: v.Parallel, Line: oneLine(v.Content)}
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

// oneLine is s on one line, clipped, with the characters a person cannot
// see written as code points (memcore.VisibleText).
func oneLine(s string) string {
	return clip(strings.Join(strings.Fields(memcore.VisibleText(clipBytes(s, 4<<10))), " "), 160)
}

// clip is s cut to n runes, ending with "…" when cut. It reads at most
// the first 4n bytes of s, however long s is. It counts runes, not the
// columns of a terminal as package termtext does: what it bounds is text
// handed to an agent, never laid out on a screen.
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
