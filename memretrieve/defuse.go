package memretrieve

import (
	"strings"
	"unicode"

	"github.com/forgemem/forgemem/memcore"
)

// blockTagName is the name of the injection block's tag, as defuse reads
// it: letters only, lower case.
const blockTagName = "recalledmemories"

// maxTagLookahead bounds how far after a '<' defuse looks for the tag name.
const maxTagLookahead = 64

// defuse returns s, memory text to be shown in the injection block, with
// every '<' that a model could read as starting the block's opening or
// closing tag replaced by "&lt;": a '<' followed, within maxTagLookahead
// runes, by the letters of "recalled_memories" in any case, with anything
// but letters and digits — white space, '/', '_', '-', invisible format
// characters — before and between them. So no memory text can end the
// block early or open a new one, however it spells the tag
// (</RECALLED_MEMORIES>, </ recalled memories >, <recalled_memories>).
//
// Then each character memcore.CheckText refuses — a control character, a
// bidirectional override, a zero-width space, a tag character, which a
// hand edit or a cloned repository can leave in a file — is written as
// its code point (memcore.VisibleText: "<U+E0041>"), so the agent never
// reads text a person reading the memory cannot see. An escape starts
// with "<U", which spells no tag.
func defuse(s string) string {
	return memcore.VisibleText(defuseTags(s))
}

// defuseTags is defuse's first step: the '<' of the block's tags.
func defuseTags(s string) string {
	if !strings.Contains(s, "<") {
		return s
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '<' && spellsTag(s[i+1:]) {
			b.WriteString(s[last:i])
			b.WriteString("&lt;")
			last = i + 1
		}
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// spellsTag reports whether s starts with the letters of blockTagName, in
// any case, with any runes but letters and digits around and among them.
func spellsTag(s string) bool {
	k, n := 0, 0
	for _, r := range s {
		if k == len(blockTagName) {
			return true
		}
		if n++; n > maxTagLookahead {
			return false
		}
		switch {
		case foldsTo(r, rune(blockTagName[k])):
			k++
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			return false
		}
	}
	return k == len(blockTagName)
}

// foldsTo reports whether r is the lower-case ASCII letter c under Unicode
// case folding (so 'K', 'k' and the Kelvin sign all fold to 'k').
func foldsTo(r, c rune) bool {
	if r == c {
		return true
	}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f == c {
			return true
		}
	}
	return false
}
