package demo

import (
	"fmt"
	"io"
	"strings"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/termtext"
)

// width is the column the demo wraps its own text at.
const width = 96

// printer writes the demo's output and keeps the first write error, so the
// demo can write freely and report a broken output once.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

// para writes text wrapped at width, then a blank line.
func (p *printer) para(text string) {
	p.labelled("", text)
	p.printf("\n")
}

// labelled writes text after label, wrapped at width with later lines
// indented to the label's width; each line of text starts a new line.
func (p *printer) labelled(label, text string) {
	indent := strings.Repeat(" ", termtext.Width(label))
	prefix := label
	for _, line := range strings.Split(text, "\n") {
		for _, l := range wrap(line, width-termtext.Width(label)) {
			p.printf("%s\n", strings.TrimRight(prefix+l, " "))
			prefix = indent
		}
	}
}

// framed writes body, exactly, inside a frame headed by title: each line
// of body prefixed with "  │ ".
func (p *printer) framed(title, body string) {
	p.printf("  ┌ %s\n", title)
	for _, line := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		p.printf("%s\n", strings.TrimRight("  │ "+line, " "))
	}
	p.printf("  └\n")
}

// heading writes a session or section heading.
func (p *printer) heading(text string) {
	rule := width - termtext.Width(text) - 5
	p.printf("\n=== %s %s\n\n", text, strings.Repeat("=", max(rule, 3)))
}

// wrap splits line into lines of at most n columns of a terminal, breaking
// at spaces; a word longer than n stays whole.
func wrap(line string, n int) []string {
	words := strings.Fields(line)
	if len(words) == 0 {
		return []string{""}
	}
	var out []string
	cur, curWidth := words[0], termtext.Width(words[0])
	for _, w := range words[1:] {
		ww := termtext.Width(w)
		if curWidth+1+ww > n {
			out = append(out, cur)
			cur, curWidth = w, ww
			continue
		}
		cur, curWidth = cur+" "+w, curWidth+1+ww
	}
	return append(out, cur)
}

// plural returns "1 memory" or "2 memories" for n and the singular and
// plural nouns given.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// noneOr is "no memory file" for 0, else plural(n, one, many).
func noneOr(n int, one, many string) string {
	if n == 0 {
		return "no " + one
	}
	return plural(n, one, many)
}
