package anchor

import (
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/forgemem/forgemem/memcore"
)

// The bounds of extraction from one text.
const (
	// maxTextBytes is how much of a memory's text is looked at.
	maxTextBytes = 64 << 10
	// maxCandidates bounds the distinct tokens looked up in the tree.
	maxCandidates = 128
	// minSearchWord is the shortest word a walk of the tree looks for.
	minSearchWord = 3
)

// candidate is a token of a memory's text that may name a path of the
// repository or an identifier defined in it.
type candidate struct {
	text string
	// quoted: the token is a whole `code span`, so a plain word counts.
	quoted bool
}

// candidates returns the tokens of text that may name a path or an
// identifier, in order of first appearance, each once: whole code spans
// (`GetOrder`, `internal/db`), and the words of the rest and of longer
// spans and code blocks, with the punctuation around them removed. It is
// deterministic and looks at the first 64 KiB of text only.
func candidates(text string) []candidate {
	if len(text) > maxTextBytes {
		text = text[:maxTextBytes]
	}
	var out []candidate
	seen := map[string]int{} // token → its index in out
	add := func(tok string, quoted bool) {
		tok = trimToken(tok)
		if tok == "" {
			return
		}
		if i, ok := seen[tok]; ok {
			out[i].quoted = out[i].quoted || quoted
			return
		}
		if len(out) >= maxCandidates {
			return
		}
		seen[tok] = len(out)
		out = append(out, candidate{text: tok, quoted: quoted})
	}
	words := func(s string) {
		for _, w := range strings.FieldsFunc(s, isSeparator) {
			add(w, false)
		}
	}
	for text != "" {
		i := strings.IndexByte(text, '`')
		if i < 0 {
			words(text)
			break
		}
		words(text[:i])
		text = text[i:]
		ticks := len(text) - len(strings.TrimLeft(text, "`"))
		fence := text[:ticks]
		body, rest, ok := strings.Cut(text[ticks:], fence)
		if !ok {
			words(text[ticks:])
			break
		}
		if span := strings.TrimSpace(body); ticks < 3 && span != "" && !strings.ContainsFunc(span, unicode.IsSpace) {
			add(span, true)
		} else {
			words(body)
		}
		text = rest
	}
	return out
}

// isSeparator reports whether r separates the words of a text: white
// space, brackets, quotes and the punctuation that joins words in prose or
// in a key=value pair.
func isSeparator(r rune) bool {
	if unicode.IsSpace(r) {
		return true
	}
	switch r {
	case '(', ')', '[', ']', '{', '}', '<', '>', ',', ';', '"', '\'', '|', '*', '=', '`', '!', '?', '&':
		return true
	}
	return false
}

// trimToken removes from tok what surrounds a name in prose or code: a
// trailing call's parentheses, a line number after a file (queries.go:42),
// a Go package pattern's /..., sentence-ending dots and colons, and the
// dashes of a flag.
func trimToken(tok string) string {
	if i := strings.IndexByte(tok, '('); i >= 0 {
		tok = tok[:i]
	}
	for {
		before := tok
		tok = strings.TrimSuffix(tok, "/...")
		if i := strings.LastIndexByte(tok, ':'); i > 0 && isDigits(tok[i+1:]) {
			tok = tok[:i]
		}
		if !strings.HasSuffix(tok, "/...") {
			tok = strings.TrimRight(tok, ".:")
		}
		if tok == before {
			break
		}
	}
	tok = strings.TrimLeft(tok, "-:")
	if !utf8.ValidString(tok) || len(tok) > 512 {
		return ""
	}
	return tok
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// asPath returns tok as a clean repository-relative path when it is
// written like one — with a slash, or a file name with an extension
// (queries.go, .gitignore); quoted tokens may be any name (Makefile) — and
// false otherwise. URLs, home-relative, absolute and escaping paths, globs
// and variables are not paths.
func asPath(tok string, quoted bool) (string, bool) {
	switch {
	case tok == "" || strings.Contains(tok, "://") || strings.HasPrefix(tok, "~") || strings.HasPrefix(tok, "/") ||
		strings.HasPrefix(tok, "www.") || strings.ContainsAny(tok, `*?[]{}$%\@#`):
		return "", false
	case !strings.Contains(tok, "/") && !quoted && !hasExtension(tok):
		return "", false
	}
	p := path.Clean(strings.TrimSuffix(tok, "/"))
	if (memcore.Anchor{Path: p}).Validate() != nil {
		return "", false
	}
	return p, true
}

// hasExtension reports whether name is a file name with an extension of
// letters (and digits) — queries.go, config.yaml, .gitignore — rather than
// a version or an abbreviation's dots.
func hasExtension(name string) bool {
	i := strings.LastIndexByte(name, '.')
	if i < 0 || i == len(name)-1 || len(name)-i-1 > 10 {
		return false
	}
	ext, letter := name[i+1:], false
	for j := 0; j < len(ext); j++ {
		c := ext[j]
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			letter = true
		case '0' <= c && c <= '9':
		default:
			return false
		}
	}
	for j := 0; j < i; j++ {
		if c := name[j]; !isWordByte(c) && c != '.' && c != '-' {
			return false
		}
	}
	return letter
}

// identKind says how an identifier-like token is looked up.
type identKind int

const (
	// notIdent: the token is no identifier.
	notIdent identKind = iota
	// plainIdent: a quoted plain word (`main`, `Execute`): looked up only
	// in the files and folders the text names, or, when it has an upper
	// case letter, in the whole tree.
	plainIdent
	// distinctIdent: CamelCase, snake_case or dotted (GetOrder,
	// retrieval_top_k, errors.As), or a quoted kebab-case key: looked up in
	// the whole tree too.
	distinctIdent
)

// identOf says whether tok is an identifier a memory may name, and how
// distinctive it is: letters, digits and underscores, joined by dots; a
// quoted token may also hold dashes (a configuration key).
func identOf(tok string, quoted bool) identKind {
	if tok == "" || len(tok) > 256 {
		return notIdent
	}
	dotted := strings.Contains(tok, ".")
	dashes, ok := identParts(tok, quoted)
	switch {
	case !ok:
		return notIdent
	case dotted || dashes || isSnake(tok) || isCamel(tok):
		return distinctIdent
	case quoted:
		return plainIdent
	}
	return notIdent
}

// identParts reports whether each dotted part of tok is an identifier —
// letters, digits and underscores, not starting with a digit; inside a
// quoted token also dashes — and whether it holds a dash.
func identParts(tok string, quoted bool) (dashes, ok bool) {
	for _, p := range strings.Split(tok, ".") {
		if p == "" || !isIdentStart(p[0]) {
			return false, false
		}
		for i := 1; i < len(p); i++ {
			switch c := p[i]; {
			case isWordByte(c):
			case c == '-' && quoted && i < len(p)-1:
				dashes = true
			default:
				return false, false
			}
		}
	}
	return dashes, true
}

// searchWord is the word a walk of the tree looks for to find where tok is
// defined: its last dotted part.
func searchWord(tok string) string {
	if i := strings.LastIndexByte(tok, '.'); i >= 0 {
		return tok[i+1:]
	}
	return tok
}

// treeWide reports whether an identifier of kind k is looked up in the
// whole tree: a distinctive one, or a quoted word with an upper-case letter
// (an exported Go name), whose search word is long enough to be worth a
// walk.
func treeWide(tok string, k identKind) bool {
	if len(searchWord(tok)) < minSearchWord {
		return false
	}
	return k == distinctIdent || k == plainIdent && strings.ContainsFunc(tok, unicode.IsUpper)
}

func isIdentStart(c byte) bool { return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// isWordByte reports whether c may be part of an identifier.
func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// isSnake reports whether s joins two words with an underscore.
func isSnake(s string) bool {
	for i := 1; i < len(s)-1; i++ {
		if s[i] == '_' && isWordByte(s[i-1]) && s[i-1] != '_' && isWordByte(s[i+1]) && s[i+1] != '_' {
			return true
		}
	}
	return false
}

// isCamel reports whether s mixes cases the way CamelCase and camelCase
// names do: a lower-case letter and an upper-case one after the first
// byte (GetOrder, getOrder, HTTPServer — not Execute or OK).
func isCamel(s string) bool {
	lower, innerUpper := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z':
			lower = true
		case 'A' <= c && c <= 'Z' && i > 0:
			innerUpper = true
		}
	}
	return lower && innerUpper
}
