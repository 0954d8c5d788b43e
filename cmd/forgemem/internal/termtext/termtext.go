package termtext

import (
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
)

// columns measures text as a terminal displays it (see the package
// documentation).
var columns = &runewidth.Condition{EastAsianWidth: false, StrictEmojiNeutral: true}

// Width is the number of columns a terminal displays s in.
func Width(s string) int { return columns.StringWidth(s) }

// clipRunesPerColumn bounds the runes Clip keeps per column, for text of
// characters that take none (a flood of combining marks): real text needs
// far fewer, an emoji sequence of a family seven for two columns.
const clipRunesPerColumn = 8

// Clip shortens s to n columns of a terminal, ending it with "…" when cut,
// never in the middle of a character as it is displayed (a letter and its
// accents, an emoji sequence): a wide character the cut would split is
// left out, so the result may take a column less than n. It reads and
// returns at most clipRunesPerColumn (8) runes per column, however long s
// is. Clip gives "" for an n of 0 or less, too narrow even for "…".
func Clip(s string, n int) string {
	if n <= 0 {
		return ""
	}
	limit := n * clipRunesPerColumn
	i, count, keep := 0, 0, 0
	for ; i < len(s) && count <= limit; count++ {
		if count == limit-1 {
			keep = i // the first limit-1 runes, and "…"
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	cut := count > limit
	if cut {
		s = s[:keep]
	}
	if !cut && columns.StringWidth(s) <= n {
		return s
	}
	return columns.Truncate(s, n-1, "") + "…"
}
