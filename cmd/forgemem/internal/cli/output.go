package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/workspace"
	"github.com/spf13/cobra"
)

// printer writes a command's output: plain text, with bold and dim
// emphasis only when it goes to a terminal, so that piped output and
// golden files hold no escape codes.
type printer struct {
	w     io.Writer
	color bool
}

func newPrinter(w io.Writer, color bool) *printer { return &printer{w: w, color: color} }

func (p *printer) printf(format string, args ...any) { fmt.Fprintf(p.w, format, args...) }

func (p *printer) println(args ...any) { fmt.Fprintln(p.w, args...) }

// bold emphasises s on a terminal.
func (p *printer) bold(s string) string { return p.style("1", s) }

// dim de-emphasises s on a terminal.
func (p *printer) dim(s string) string { return p.style("2", s) }

func (p *printer) style(code, s string) string {
	if !p.color || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// table returns a writer that aligns tab-separated columns; Flush it.
func (p *printer) table() *tabwriter.Writer {
	return tabwriter.NewWriter(p.w, 0, 0, 2, ' ', 0)
}

// json writes v as one indented JSON document.
func (p *printer) json(v any) error {
	enc := json.NewEncoder(p.w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// eprintf writes a message to w (stderr) as fmt.Fprintf does.
func eprintf(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, format, args...)
}

// warnUnreadable says on stderr, after a command's output, that n files
// of the memory folders could not be read, so what it showed may miss
// memories: never silently.
func (a *app) warnUnreadable(cmd *cobra.Command, n int) {
	if n > 0 {
		eprintf(a.env.Stderr, "%s: %s in the memory folders could not be read, so memories may be missing here; forgemem validate says why\n",
			cmd.CommandPath(), plural(n, "file", "files"))
	}
}

// shortID is an id cut to "mem_" and its first 8 hexadecimal digits,
// enough to tell memories apart and accepted wherever an id is.
func shortID(id string) string {
	if len(id) > len("mem_")+8 {
		return id[:len("mem_")+8]
	}
	return id
}

// day writes t as a date.
func day(t time.Time) string { return t.UTC().Format("2006-01-02") }

// minute writes t to the minute, in UTC.
func minute(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

// clip shortens s to n runes, ending it with "…" when cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// indent prefixes every line of s with prefix, leaving blank lines blank.
func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != "" {
			lines[i] = prefix + l
		} else {
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}

// plural writes n and the singular or plural noun.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// kind writes a memory's scope and category: "user/coding-preferences".
func kind(m workspace.Memory) string { return string(m.Scope) + "/" + string(m.Category) }

// titleWidth is how much of a memory's first line a listing shows.
const titleWidth = 72
