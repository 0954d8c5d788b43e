package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/termtext"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/workspace"
	"github.com/spf13/cobra"
)

// printer writes a command's output: plain text, with bold and dim
// emphasis only when it goes to a terminal, so that piped output and
// golden files hold no escape codes. Every string it is given is escaped
// with escapeControls on the way out — memory text, file names and error
// messages alike — so nothing it prints can act on the terminal; only its
// own emphasis (a styled value) is written as it is.
type printer struct {
	w     io.Writer
	color bool
}

func newPrinter(w io.Writer, color bool) *printer { return &printer{w: w, color: color} }

// printf formats as fmt.Printf does, its arguments escaped.
func (p *printer) printf(format string, args ...any) {
	fmt.Fprintf(p.w, format, escapeArgs(args)...)
}

// println writes its arguments as fmt.Println does, escaped.
func (p *printer) println(args ...any) { fmt.Fprintln(p.w, escapeArgs(args)...) }

// sprintf formats as fmt.Sprintf does, its arguments escaped, for a line
// built in parts (which may hold the printer's emphasis).
func (p *printer) sprintf(format string, args ...any) styled {
	return styled(fmt.Sprintf(format, escapeArgs(args)...))
}

// bold emphasises s, escaped, on a terminal.
func (p *printer) bold(s string) styled { return p.style("1", s) }

// dim de-emphasises s, escaped, on a terminal.
func (p *printer) dim(s string) styled { return p.style("2", s) }

func (p *printer) style(code, s string) styled {
	s = escapeControls(s)
	if !p.color || s == "" {
		return styled(s)
	}
	return styled("\x1b[" + code + "m" + s + "\x1b[0m")
}

// table is a block of tab-separated columns that the printer aligns by
// the columns a terminal gives their text (termtext.Table), so that a cell
// of CJK text or emoji leaves the columns after it in line. Its first line
// may be a header, which is bold on a terminal: the emphasis is added after
// the columns are aligned, since its escape sequence would otherwise count
// in the width of the first and last cells and so shift every later column
// of the header left of its data.
type table struct {
	p         *printer
	buf       bytes.Buffer
	tw        *termtext.Table
	hasHeader bool
}

// table returns a table writing to the printer's output; flush it.
func (p *printer) table() *table {
	t := &table{p: p}
	t.tw = termtext.NewTable(&t.buf, 2)
	return t
}

// header writes the table's header line, its cells escaped as escapeLine
// escapes them; call it before any row.
func (t *table) header(cells ...string) {
	for i, c := range cells {
		cells[i] = escapeLine(c)
	}
	fmt.Fprintln(t.tw, strings.Join(cells, "\t"))
	t.hasHeader = true
}

// row formats a line of the table as fmt.Printf does, its arguments
// escaped as escapeLine escapes them: the tabs and the line breaks of the
// format end its cells and the line, and those of the text it is given —
// a memory's title, a folder's path — are shown as \t, \n and \r, so
// that they never split a cell or a line. Its cells are never styled, for
// the same reason as the header's.
func (t *table) row(format string, args ...any) {
	fmt.Fprintf(t.tw, format, escapeArgsWith(escapeLine, args)...)
}

// flush writes the table, aligned, its header in bold.
func (t *table) flush() {
	_ = t.tw.Flush()
	out := t.buf.Bytes()
	if t.hasHeader {
		line, rest, _ := bytes.Cut(out, []byte("\n"))
		fmt.Fprintf(t.p.w, "%s\n", t.p.bold(string(line)))
		out = rest
	}
	_, _ = t.p.w.Write(out)
	t.buf.Reset()
}

// json writes v as one indented JSON document. encoding/json escapes the
// C0 control characters in strings (\u001b); DEL and the C1 controls are
// escaped too (see escapeJSON), so the document can be printed safely.
func (p *printer) json(v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := p.w.Write(escapeJSON(buf.Bytes()))
	return err
}

// eprintf writes a message to w (stderr) as fmt.Fprintf does, its
// arguments escaped as the printer escapes them: error messages quote
// memory text and file names too.
func eprintf(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, format, escapeArgs(args)...)
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
