package termtext

import (
	"io"
	"strings"
)

// Table aligns tab-separated columns as a text/tabwriter.Writer made with
// tabwriter.NewWriter(w, 0, 0, gap, ' ', 0) does, measuring cells by
// Width rather than by their count of characters. Text written to it is
// cells, each ended by a tab but the last of its line, in lines ended by
// a newline; Flush writes it aligned. A cell ended by a tab is padded with
// spaces to gap columns more than the widest cell of its column block —
// the column's cells in the adjacent lines that have one ended by a tab —
// and the last cell of a line is written as it is, so a line of one cell
// ends a block. For ASCII text the output is text/tabwriter's, byte for
// byte.
//
// Unlike text/tabwriter, Table gives no meaning to '\v', '\f' or
// tabwriter.Escape: escape control characters before writing them.
type Table struct {
	w   io.Writer
	gap int
	buf strings.Builder
}

// NewTable returns a Table writing to w, its columns gap spaces apart (none
// for a gap below 0).
func NewTable(w io.Writer, gap int) *Table { return &Table{w: w, gap: max(gap, 0)} }

// Write adds p to the table; it never fails. Nothing reaches the
// underlying writer before Flush.
func (t *Table) Write(p []byte) (int, error) { return t.buf.Write(p) }

// Flush writes the text written since the last Flush, aligned, to the
// underlying writer, and returns its error. Text after the last newline
// is written without one.
func (t *Table) Flush() error {
	if t.buf.Len() == 0 {
		return nil
	}
	text := t.buf.String()
	t.buf.Reset()
	rows := strings.Split(text, "\n")
	f := formatter{lines: make([][]cell, len(rows)), gap: t.gap}
	for i, r := range rows {
		cells := strings.Split(r, "\t")
		if i == len(rows)-1 && cells[len(cells)-1] == "" {
			// The text after the last newline ends with no cell, as in
			// text/tabwriter: "a\t" is a cell ended by a tab, "" none.
			cells = cells[:len(cells)-1]
		}
		line := make([]cell, len(cells))
		for j, c := range cells {
			line[j] = cell{text: c, width: Width(c)}
		}
		f.lines[i] = line
	}
	f.format(0, len(f.lines))
	_, err := io.WriteString(t.w, f.out.String())
	return err
}

type cell struct {
	text  string
	width int
}

// formatter lays out a table's lines as text/tabwriter's Writer.format
// does.
type formatter struct {
	lines  [][]cell
	gap    int
	widths []int // of the columns of the enclosing blocks, gap included
	out    strings.Builder
}

// format writes lines [line0, line1), all in the blocks of the columns
// before len(f.widths): it finds the blocks of the next column among them
// and formats each with that column's width, writing the lines outside a
// block as they are.
func (f *formatter) format(line0, line1 int) {
	column := len(f.widths)
	for this := line0; this < line1; this++ {
		if column >= len(f.lines[this])-1 {
			continue // no cell ended by a tab in this column
		}
		f.write(line0, this)
		line0 = this
		width := 0
		for ; this < line1 && column < len(f.lines[this])-1; this++ {
			width = max(width, f.lines[this][column].width+f.gap)
		}
		f.widths = append(f.widths, width)
		f.format(line0, this)
		f.widths = f.widths[:len(f.widths)-1]
		line0 = this
	}
	f.write(line0, line1)
}

// write writes lines [line0, line1), each cell in a column of a block
// padded to the column's width, each line but the table's last followed by
// a newline.
func (f *formatter) write(line0, line1 int) {
	for i := line0; i < line1; i++ {
		for j, c := range f.lines[i] {
			f.out.WriteString(c.text)
			if j < len(f.widths) {
				f.out.WriteString(strings.Repeat(" ", max(f.widths[j]-c.width, 0)))
			}
		}
		if i+1 < len(f.lines) {
			f.out.WriteByte('\n')
		}
	}
}
