package redact

import (
	"regexp"
	"strings"
)

// rule is one kind of secret.
//
// A rule looks only where one of its keywords occurs: in the lines that
// hold one, or in the whole text for a multiline rule. Keywords are
// lower-case ASCII and are looked for in an ASCII-lower-cased copy of the
// text, so most rules cost a few substring searches on a text that holds
// none of their secrets, and no rule scans more than the lines it may match.
//
// In each place, every match of re is a candidate: keep, when set, can veto
// it; value, when set, says which part of the text is the secret (it may
// reach past the match, for an assigned value); otherwise it is the first
// group of groups that took part in the match, or the whole match. bounded
// vetoes a match preceded by a letter, digit or '_' (a regular expression
// that starts with a literal, rather than \b, lets the regexp package skip
// ahead to that literal).
type rule struct {
	name      string
	keywords  []string
	multiline bool
	re        *regexp.Regexp
	groups    []int
	bounded   bool
	// inToken: the rule's secrets are machine-made words (see tokenRuns)
	// and it looks only inside those that hold a keyword.
	inToken bool
	keep    func(text string, m []int) bool
	value   func(text string, m []int) (start, end int, ok bool)
	// scan, when set, replaces keywords and re: it returns the spans of
	// the rule's secrets in text, given lower = asciiLower(text) and runs
	// = tokenRuns(text).
	scan func(text, lower string, runs [][2]int) [][2]int
}

// spans returns the parts of text the rule replaces, in order and without
// overlaps, skipping those that start with a Placeholder left by an earlier
// rule, each widened over what continues it (see continueSpans). lower is
// asciiLower(text) and runs is tokenRuns(text).
func (r *rule) spans(text, lower string, runs [][2]int) [][2]int {
	return continueSpans(text, r.find(text, lower, runs))
}

// find returns the spans of the rule's secrets in text (see spans).
func (r *rule) find(text, lower string, runs [][2]int) [][2]int {
	if r.scan != nil {
		var out [][2]int
		for _, sp := range r.scan(text, lower, runs) {
			if !strings.HasPrefix(text[sp[0]:sp[1]], Placeholder) {
				out = append(out, sp)
			}
		}
		return out
	}
	if r.inToken {
		var out [][2]int
		for _, run := range runs {
			if containsAny(lower[run[0]:run[1]], r.keywords) {
				out = r.spansIn(text[run[0]:run[1]], run[0], out)
			}
		}
		return out
	}
	if r.multiline {
		if !containsAny(lower, r.keywords) {
			return nil
		}
		return r.spansIn(text, 0, nil)
	}
	var out [][2]int
	f := newFinder(lower, r.keywords)
	for pos := 0; pos < len(text); {
		at := f.from(pos)
		if at < 0 {
			break
		}
		start := strings.LastIndexByte(text[:at], '\n') + 1
		end := strings.IndexByte(text[at:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += at
		}
		out = r.spansIn(text[start:end], start, out)
		pos = end + 1
	}
	return out
}

// spansIn appends to out the spans the rule finds in part, a piece of the
// text that starts at offset base.
func (r *rule) spansIn(part string, base int, out [][2]int) [][2]int {
	for _, m := range r.re.FindAllStringSubmatchIndex(part, -1) {
		if r.bounded && m[0] > 0 && isWord(part[m[0]-1]) {
			continue
		}
		if r.keep != nil && r.keep(part, m) {
			continue
		}
		start, end, ok := r.span(part, m)
		if !ok || end <= start || strings.HasPrefix(part[start:end], Placeholder) {
			continue
		}
		if n := len(out); n > 0 && base+start < out[n-1][1] {
			continue // inside a value an earlier match reached into
		}
		out = append(out, [2]int{base + start, base + end})
	}
	return out
}

// span returns the part of text that match m makes a secret.
func (r *rule) span(text string, m []int) (int, int, bool) {
	switch {
	case r.value != nil:
		return r.value(text, m)
	case len(r.groups) > 0:
		for _, g := range r.groups {
			if m[2*g] >= 0 {
				return m[2*g], m[2*g+1], true
			}
		}
		return 0, 0, false
	}
	return m[0], m[1], true
}

// asciiLower returns s with the ASCII letters in lower case: the same
// length as s, so offsets in one are offsets in the other.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; 'A' <= c && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// finder finds the next occurrence of any of a list of words in a text,
// remembering where each word occurs next so that a pass over the whole
// text searches for each word once.
type finder struct {
	text  string
	words []string
	next  []int // next[i]: offset of words[i] at or after the last search, -1 if none, -2 if not known
}

func newFinder(text string, words []string) *finder {
	f := &finder{text: text, words: words, next: make([]int, len(words))}
	for i := range f.next {
		f.next[i] = -2
	}
	return f
}

// from returns the offset of the first occurrence at or after pos of any
// of the words, or -1.
func (f *finder) from(pos int) int {
	best := -1
	for i, w := range f.words {
		n := f.next[i]
		if n == -1 {
			continue
		}
		if n < pos {
			n = -1
			if j := strings.Index(f.text[min(pos, len(f.text)):], w); j >= 0 {
				n = pos + j
			}
			f.next[i] = n
			if n < 0 {
				continue
			}
		}
		if best < 0 || n < best {
			best = n
		}
	}
	return best
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// isWord reports whether c is an ASCII letter, digit or '_'.
func isWord(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// token returns the rule of a token format recognised by its literal
// prefix: keyword is the prefix in lower case, pattern a regular expression
// starting with the prefix. The match must not follow a letter, digit or
// '_', and, when tail is not 0, the match's last tail characters must look
// machine-made (see randomish).
func token(name, keyword, pattern string, tail int) rule {
	r := rule{name: name, keywords: []string{keyword}, re: regexp.MustCompile(pattern), bounded: true, inToken: true}
	if tail > 0 {
		r.keep = func(t string, m []int) bool { return !randomish(t[max(m[0], m[1]-tail):m[1]]) }
	}
	return r
}

// minTokenLen is the length of the shortest token format (an AWS access
// key id): shorter words are not looked at by inToken rules.
const minTokenLen = 20

// tokenRuns returns the maximal runs of text of at least minTokenLen
// characters that may make up a token: ASCII letters and digits and
// _ . + / = ~ : % -. Rules for token formats look only inside them, so a
// text is scanned once for all of those formats.
func tokenRuns(text string) [][2]int {
	var out [][2]int
	start := -1
	for i := 0; i <= len(text); i++ {
		if i < len(text) && isTokenChar(text[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 && i-start >= minTokenLen {
			out = append(out, [2]int{start, i})
		}
		start = -1
	}
	return out
}

func isTokenChar(c byte) bool {
	return isWord(c) || c == '.' || c == '+' || c == '/' || c == '=' || c == '~' || c == ':' || c == '%' || c == '-'
}

// minContinued is the length of the shortest secret continueSpans widens.
const minContinued = 16

// continueSpans widens each span that is a machine-made word of at least
// minContinued characters — a token, a key, a base64 value — over what
// continues it (see continuedEnd). A span never grows into the next one.
func continueSpans(text string, spans [][2]int) [][2]int {
	for i, sp := range spans {
		limit := len(text)
		if i+1 < len(spans) {
			limit = spans[i+1][0]
		}
		if sp[1]-sp[0] >= minContinued && isTokenWord(text[sp[0]:sp[1]]) {
			spans[i][1] = continuedEnd(text, sp[1], limit)
		}
	}
	return spans
}

// continuedEnd returns the end of the secret that seems to end at end,
// reaching no further than limit: past the escapes of a key's characters
// and the characters that follow them ("…abc%2Bdef", a key that was
// URL-encoded; see keyEscape), and over the lines that go on with such
// characters alone (a key wrapped by a terminal or an editor, see
// wrappedLine).
func continuedEnd(text string, end, limit int) int {
	for end+3 <= limit && keyEscape(text, end) {
		end += 3
		for end < limit && isKeyBodyChar(text[end]) {
			end++
		}
	}
	for {
		next, ok := wrappedLine(text, end, limit)
		if !ok {
			return end
		}
		end = next
	}
}

// wrappedLine returns the end of the line after end when a secret that
// ends at end, at the end of its line, goes on there: the line holds, after
// any indentation, one word of at least four characters of a key (see
// isKeyBodyChar) that mixes at least two of upper case, lower case and
// digits, and ends no further than limit.
func wrappedLine(text string, end, limit int) (int, bool) {
	i, ok := afterLineBreak(text, end)
	if !ok {
		return 0, false
	}
	i = skipBlanks(text, i)
	j := i
	for j < len(text) && isKeyBodyChar(text[j]) {
		j++
	}
	if _, broken := afterLineBreak(text, j); j > limit || j < len(text) && !broken || j-i < 4 || classes(text[i:j]) < 2 {
		return 0, false
	}
	return j, true
}

// afterLineBreak returns the offset after the line break ("\n" or "\r\n")
// at text[i:], and whether there is one.
func afterLineBreak(text string, i int) (int, bool) {
	switch {
	case strings.HasPrefix(text[i:], "\n"):
		return i + 1, true
	case strings.HasPrefix(text[i:], "\r\n"):
		return i + 2, true
	}
	return 0, false
}

// isTokenWord reports whether s is made of the characters of tokens and
// keys: letters, digits and _ - + / = . ~ %.
func isTokenWord(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isKeyBodyChar(c) && c != '.' && c != '~' && c != '%' {
			return false
		}
	}
	return true
}

// isKeyBodyChar reports whether c may be part of the body of a key in
// base64 or base64url: a letter, a digit, or _ - + / =.
func isKeyBodyChar(c byte) bool {
	return isWord(c) || c == '-' || c == '+' || c == '/' || c == '='
}

// keyEscape reports whether a percent-escape of a character of a key in
// base64 starts at text[i]: '+', '/', '-' or '_' (see escapedKeyChar), or
// '=' as padding — followed by neither a key's character nor its escape:
// %3D then a value is an assignment. The '&', '?' and '#' of a query end a
// key.
func keyEscape(text string, i int) bool {
	if escapedKeyChar(text, i) {
		return true
	}
	if !escapeAt(text, i) || !strings.EqualFold(text[i+1:i+3], "3D") {
		return false
	}
	j := i + 3
	return j == len(text) || !isKeyBodyChar(text[j]) && !escapedKeyChar(text, j)
}

// escapedKeyChar reports whether a percent-escape of '+', '/', '-' or '_'
// starts at text[i].
func escapedKeyChar(text string, i int) bool {
	if !escapeAt(text, i) {
		return false
	}
	switch strings.ToUpper(text[i+1 : i+3]) {
	case "2B", "2F", "2D", "5F":
		return true
	}
	return false
}

// escapeAt reports whether a percent-escape, % and two hex digits, starts
// at text[i].
func escapeAt(text string, i int) bool {
	return i+2 < len(text) && text[i] == '%' && isHex(text[i+1]) && isHex(text[i+2])
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// classes is how many of upper case, lower case and digits s holds.
func classes(s string) int {
	var upper, lower, digit int
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'A' <= c && c <= 'Z':
			upper = 1
		case 'a' <= c && c <= 'z':
			lower = 1
		case '0' <= c && c <= '9':
			digit = 1
		}
	}
	return upper + lower + digit
}
