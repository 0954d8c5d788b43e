package redact

import (
	"encoding/base64"
	"math"
	"strings"
	"unicode/utf8"
)

// randomish reports whether s looks machine-made rather than words: it
// mixes at least two of upper case, lower case and digits, and has a run of
// at least ten letters and digits.
func randomish(s string) bool {
	return classes(s) >= 2 && longestAlnumRun(s) >= 10
}

// longestAlnumRun is the length of the longest run of ASCII letters and
// digits in s.
func longestAlnumRun(s string) int {
	run, longest := 0, 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; isWord(c) && c != '_' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}

// mixedCase reports whether s looks machine-made (see randomish) and holds
// both upper- and lower-case letters, as a base64 key does and a hex hash
// does not.
func mixedCase(s string) bool {
	return randomish(s) && strings.ToLower(s) != s && strings.ToUpper(s) != s
}

// plainWord reports whether s is an ordinary word: letters only (with at
// most a leading capital) and shorter than 16 letters.
func plainWord(s string) bool {
	if len(s) >= 16 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z':
		case i == 0 && 'A' <= c && c <= 'Z':
		default:
			return false
		}
	}
	return true
}

// entropy is the Shannon entropy of s's bytes, in bits per byte.
func entropy(s string) float64 {
	if s == "" {
		return 0
	}
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	h := 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / float64(len(s))
			h -= p * math.Log2(p)
		}
	}
	return h
}

// skipBlanks returns the offset of the first byte of text at or after i
// that is neither a space nor a tab.
func skipBlanks(text string, i int) int {
	for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
		i++
	}
	return i
}

// isSpace reports whether c is ASCII white space.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// userPassword reports whether s is base64 of "user:password", the
// credentials of HTTP Basic authentication and of registry configuration
// files.
func userPassword(s string) bool {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		if b, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "=")); err != nil {
			return false
		}
	}
	i := strings.IndexByte(string(b), ':')
	if i < 1 || i == len(b)-1 || !utf8.Valid(b) {
		return false
	}
	for _, c := range b {
		if c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

// reference reports whether v, the value of a key that names a secret, is
// not the secret but where it comes from or a stand-in for it: a variable
// or template reference ($VAR, ${VAR}, $(cmd), {{ var }}, %(var)s, <your
// key>, !vault), a mask (****, xxxx, ...), or an obvious placeholder.
func reference(v string) bool {
	if v == "" {
		return true
	}
	switch v[0] {
	case '$', '<', '!', '@', '*':
		return true
	case '{':
		return strings.HasPrefix(v, "{{") || strings.HasPrefix(v, "{%")
	case '%':
		return strings.HasPrefix(v, "%(") || strings.HasPrefix(v, "%{") || strings.HasPrefix(v, "%s")
	}
	if strings.Trim(v, "*xX.•…_-") == "" {
		return true
	}
	l := strings.ToLower(v)
	for _, p := range []string{"your-", "your_", "yourkey", "your key", "your token", "your password", "placeholder", "<", "env(", "getenv", "environ"} {
		if strings.Contains(l, p) {
			return true
		}
	}
	switch l {
	case "null", "nil", "none", "undefined", "true", "false", "empty", "n/a", "todo", "tbd":
		return true
	}
	return false
}

// codeExpr reports whether v reads as program code rather than a secret: a
// call or an index (getToken(), os.environ["X"], []byte(cfg.Secret)).
func codeExpr(v string) bool {
	i := 0
	if strings.HasPrefix(v, "[]") { // a Go conversion: []byte(…)
		i = 2
	}
	start := i
	for i < len(v) && (isWord(v[i]) || v[i] == '.') {
		i++
	}
	if i == start || i == len(v) || '0' <= v[start] && v[start] <= '9' {
		return false
	}
	return v[i] == '(' || v[i] == '['
}

// identPath reports whether v is an identifier or a dotted path of
// identifiers (pw, cfg.Secret, process.env.NPM_TOKEN), once a trailing
// ',', ';' or ')' is dropped.
func identPath(v string) bool {
	v = strings.TrimRight(v, ",;)")
	if v == "" {
		return false
	}
	for _, part := range strings.Split(v, ".") {
		if part == "" || '0' <= part[0] && part[0] <= '9' {
			return false
		}
		for i := 0; i < len(part); i++ {
			if !isWord(part[i]) {
				return false
			}
		}
	}
	return true
}

// callDepth is how many parentheses are open at the end of s, a line.
func callDepth(s string) int {
	d := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			d++
		case ')':
			if d > 0 {
				d--
			}
		}
	}
	return d
}

// quoted reads a string in quotes at the start of s (s[0] is the quote),
// honouring backslash escapes, and returns the offset of its closing
// quote, or -1 when it is not closed on its line.
func quoted(s string) int {
	q := s[0]
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '\n':
			return -1
		case q:
			return i
		}
	}
	return -1
}

// The ways a value is assigned to a key that names a secret.
type assignKind int

const (
	// tight: KEY=value with no space around '=' (.env files, shell, URL
	// queries, command-line flags): any value is a secret.
	tight assignKind = iota
	// loose: key: value, key = value, a command-line flag and its value: a
	// value that reads as a plain word or as code is not.
	loose
	// walrus: key := value, a Go declaration: only a quoted value, or one
	// that looks machine-made, is a secret.
	walrus
)

// assignedValue returns the secret assigned at text[i:] to a key that
// starts at keyStart, with the operator op ("=", ":", ":=", or "" for a
// command-line flag and its value); spaced reports white space around op.
// The value is a quoted string (the span is inside the quotes, escapes
// included) or runs to white space — in a URL query to the next '&' or
// '#', and in a call's arguments to the next ',' or ')'.
func assignedValue(text string, keyStart int, op string, spaced bool, i int) (start, end int, ok bool) {
	if op == "=" && i < len(text) && text[i] == '=' {
		return 0, 0, false // a comparison: ==
	}
	for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
		i++
	}
	if i == len(text) || keyIsReference(text, keyStart) {
		return 0, 0, false
	}
	site := siteOf(text, keyStart, op, spaced)
	if isQuote(text[i]) {
		return quotedValue(text, i, site)
	}
	return bareValue(text, keyStart, i, site)
}

// valueSite is what the place of an assignment says about its value: how
// it is assigned, and whether the key is a parameter of a URL query or an
// argument of a call, where the value ends sooner.
type valueSite struct {
	kind   assignKind
	colon  bool // the operator is ':', which a YAML block scalar may follow
	query  bool // the key follows '?' or '&'
	inCall bool // the key is inside the parentheses of a call
}

// siteOf returns the site of the value assigned with op to the key that
// starts at keyStart.
func siteOf(text string, keyStart int, op string, spaced bool) valueSite {
	kind := loose
	switch {
	case op == ":=":
		kind = walrus
	case op == "=" && !spaced:
		kind = tight
	}
	lineStart := strings.LastIndexByte(text[:keyStart], '\n') + 1
	return valueSite{
		kind:   kind,
		colon:  op == ":",
		query:  keyStart > 0 && (text[keyStart-1] == '?' || text[keyStart-1] == '&'),
		inCall: callDepth(text[lineStart:keyStart]) > 0,
	}
}

// keyIsReference reports whether the key that starts at keyStart is itself
// part of a reference, ${TOKEN:?missing} or $TOKEN, rather than assigned.
func keyIsReference(text string, keyStart int) bool {
	return keyStart > 0 && (text[keyStart-1] == '{' || text[keyStart-1] == '$')
}

// isQuote reports whether c opens a quoted string.
func isQuote(c byte) bool { return c == '"' || c == '\'' || c == '`' }

// quotedValue returns the secret of a value that starts with a quote at
// text[i]: the inside of the quotes, unless it is a reference; or, for a
// tight assignment, the whole shell word when it goes on after the closing
// quote ("ab"cd) or the quote is never closed.
func quotedValue(text string, i int, site valueSite) (int, int, bool) {
	j := quoted(text[i:])
	if j < 0 {
		if site.kind != tight {
			return 0, 0, false // prose: `api_key:` is the field name
		}
		// Never closed: the rest of the word, quote and all.
		return i, wordEnd(text, i, site.query, false), true
	}
	j += i
	if reference(strings.TrimSpace(text[i+1 : j])) {
		return 0, 0, false
	}
	if site.kind == tight && wordGoesOn(text, j+1) {
		// A shell word that goes on after the quotes: "ab"cd.
		return i, wordEnd(text, i, site.query, false), true
	}
	return i + 1, j, true
}

// wordGoesOn reports whether a shell word goes on at text[i], after a
// closing quote: it does unless white space, the end of the text or a
// separator (, ; ) } ] &) follows.
func wordGoesOn(text string, i int) bool {
	return i < len(text) && !isSpace(text[i]) && !strings.ContainsRune(",;)}]&", rune(text[i]))
}

// bareValue returns the secret of an unquoted value at text[i:] (see
// assignedValue), or the lines of a YAML block scalar introduced there.
func bareValue(text string, keyStart, i int, site valueSite) (int, int, bool) {
	end := trimPunct(text[i:wordEnd(text, i, site.query, site.inCall)]) + i
	v := text[i:end]
	if site.kind == loose && site.colon && blockScalar(v) {
		return blockLines(text, keyStart, end)
	}
	if end == i || standsIn(v, site) {
		return 0, 0, false
	}
	return i, end, true
}

// standsIn reports whether v, an unquoted value assigned at site, stands
// for a secret rather than holds one: a reference, code, a URL; a keyword
// argument naming a variable (login(password=pw)); for key := value, a
// value that is not machine-made; for key: value and key = value, a plain
// word or a dotted path of identifiers.
func standsIn(v string, site valueSite) bool {
	switch {
	case reference(v), codeExpr(v), strings.Contains(v, "://"):
		return true
	case site.inCall && identPath(v) && !randomish(v):
		return true
	case site.kind == walrus && !randomish(v):
		return true
	case site.kind != tight:
		return plainWord(strings.TrimRight(v, ",;")) || identPath(v) && !randomish(v) && strings.Contains(v, ".")
	}
	return false
}

// blockScalar reports whether v introduces a YAML block scalar (|, >,
// with a chomping indicator), whose text is on the lines that follow.
func blockScalar(v string) bool {
	switch v {
	case "|", "|-", "|+", ">", ">-", ">+":
		return true
	}
	return false
}

// blockLines returns the span of the lines after offset after that are
// indented more than the line of keyStart (blank lines among them
// included): the text of a YAML block scalar.
func blockLines(text string, keyStart, after int) (int, int, bool) {
	lineStart := strings.LastIndexByte(text[:keyStart], '\n') + 1
	indent := keyStart - lineStart
	nl := strings.IndexByte(text[after:], '\n')
	if nl < 0 {
		return 0, 0, false
	}
	start, end := -1, -1
	for pos := after + nl + 1; pos < len(text); {
		lineEnd := strings.IndexByte(text[pos:], '\n')
		if lineEnd < 0 {
			lineEnd = len(text)
		} else {
			lineEnd += pos
		}
		line := text[pos:lineEnd]
		trimmed := strings.TrimLeft(line, " \t")
		if trimmed != "" && len(line)-len(trimmed) <= indent {
			break
		}
		if trimmed != "" {
			if start < 0 {
				start = pos + len(line) - len(trimmed)
			}
			end = lineEnd
		}
		pos = lineEnd + 1
	}
	if start < 0 {
		return 0, 0, false
	}
	return start, end, true
}

// trimPunct returns the length of v without one trailing '.', ',' or ';',
// which end a sentence or a list item rather than a secret, and without a
// trailing ')' that closes no '(' of v.
func trimPunct(v string) int {
	n := len(v)
	if n > 1 && v[n-1] == ')' && !strings.Contains(v, "(") {
		n--
	}
	if n > 1 && strings.IndexByte(".,;", v[n-1]) >= 0 {
		n--
	}
	return n
}

// wordEnd returns the end of the word that starts at text[i]: the next
// white space, or in a URL query the next '&' or '#', or in a call the next
// ',' or ')'.
func wordEnd(text string, i int, query, inCall bool) int {
	for ; i < len(text); i++ {
		c := text[i]
		if isSpace(c) || query && (c == '&' || c == '#') || inCall && (c == ',' || c == ')') {
			break
		}
	}
	return i
}

// proseWords are words that follow "the password is" in prose without
// being the password.
var proseWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the this that these those it its my our your their his her
		not no now too very also still just only already never always usually often sometimes again
		in on at for from of to by with without as into inside outside under behind
		set reset same different correct incorrect wrong right weak strong short long empty blank
		missing invalid valid case secret private public visible hidden available unavailable
		temporary permanent random mandatory unique sent kept known unknown shown written
		what which who where whatever something nothing anything there here one two three
		mine yours ours theirs hers his all any some none each both either neither
		be being been is was are were will would should can could must may might
		needed good bad new old simple complex strong easy hard same fine ok okay
		and or but nor so yet because than then if when while since until unless enough every per via like`) {
		proseWords[w] = true
	}
	for _, w := range strings.Fields(`correct incorrect wrong right weak strong short long empty blank secret private
		public simple complex easy hard good bad new old random unique temporary permanent same different`) {
		passphraseAdjectives[w] = true
	}
}

// proseValue returns the password that follows "the password is" at
// text[i:]: a quoted string, or the next word without trailing
// punctuation, unless that word reads as prose (see readsAsProse).
func proseValue(text string, i int) (start, end int, ok bool) {
	if i >= len(text) {
		return 0, 0, false
	}
	if isQuote(text[i]) {
		if j := quoted(text[i:]); j > 1 && !reference(text[i+1:i+j]) {
			return i + 1, i + j, true
		}
		return 0, 0, false
	}
	if end, ok := passphrase(text, i); ok {
		return i, end, true
	}
	end = wordEnd(text, i, false, false)
	for end > i && strings.IndexByte(".,;:!?)", text[end-1]) >= 0 {
		end--
	}
	if readsAsProse(text[i:end]) {
		return 0, 0, false
	}
	return i, end, true
}

// wordAfterPassword returns the password that follows the word "password" at
// text[i:] with nothing between: a word of at least 8 characters that
// mixes letters and digits, symbols allowed ("hunter2secret",
// "Xk9!pq7Lm2"), and is no reference ($PASSWORD), no name of code
// (password_hash, user.password), no path or address and no hash's name
// (argon2id, sha256sum). A word of the sentence ("the
// password reset flow", "password hashing with argon2id") is not one.
func wordAfterPassword(text string, i int) (start, end int, ok bool) {
	end = wordEnd(text, i, false, false)
	for end > i && strings.IndexByte(".,;:!?)\"'", text[end-1]) >= 0 {
		end--
	}
	w := text[i:end]
	if len(w) < 8 || len(w) > 64 || reference(w) || strings.ContainsAny(w, "_./\\=()[]{}<>:;,\"'`") {
		return 0, 0, false
	}
	var letters, digits int
	for j := 0; j < len(w); j++ {
		switch c := w[j]; {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			letters++
		case '0' <= c && c <= '9':
			digits++
		case c > 0x7e || c < 0x21:
			return 0, 0, false
		}
	}
	if letters == 0 || digits == 0 || hasAnyPrefix(strings.ToLower(w), hashNames) {
		return 0, 0, false
	}
	return i, end, true
}

// hashNames begin the names of the hashes and encodings a text says a
// password is stored or sent with ("password sha256sum", "password
// argon2id"), which are no passwords.
var hashNames = []string{"argon2", "bcrypt", "scrypt", "pbkdf2", "sha1", "sha2", "sha3", "sha5", "md5", "base64", "utf8", "utf16", "hmac", "blake2", "yescrypt"}

// hasAnyPrefix reports whether s starts with one of prefixes.
func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// minPassphraseWords is the fewest words of a passphrase in prose.
const minPassphraseWords = 3

// passphrase returns the end of a passphrase of several words at text[i:],
// "the passphrase is correct horse battery staple": at least
// minPassphraseWords plain words separated by blanks, up to the end of the
// clause or the first word that reads as prose ("… staple and never
// changes"). The first may be an adjective that otherwise reads as prose
// ("correct"), not a word such as "the", "not" or "required": "the
// password is correct and works" is prose.
func passphrase(text string, i int) (int, bool) {
	end, words := i, 0
	for j := i; j < len(text) && isWord(text[j]); words++ {
		k := j
		for k < len(text) && isWord(text[k]) {
			k++
		}
		w := text[j:k]
		if !plainWord(w) || words == 0 && readsAsProse(w) && !passphraseAdjectives[strings.ToLower(w)] ||
			words > 0 && readsAsProse(w) {
			break
		}
		end = k
		for k < len(text) && (text[k] == ' ' || text[k] == '\t') {
			k++
		}
		j = k
	}
	return end, words >= minPassphraseWords
}

// passphraseAdjectives are the words of proseWords that may start a
// passphrase.
var passphraseAdjectives = map[string]bool{}

// proseSuffixes end the words that, after "the password is", describe the
// password rather than give it: "is required", "is rotated monthly".
var proseSuffixes = []string{"ed", "ing", "ly", "able", "ible", "ful", "less", "ous", "ive"}

// readsAsProse reports whether w, the word after "the password is", reads
// as prose: it is empty, a reference, one of proseWords, or a plain word
// with one of proseSuffixes.
func readsAsProse(w string) bool {
	if w == "" || !isWord(w[0]) || reference(w) {
		return true
	}
	l := strings.ToLower(w)
	if proseWords[l] {
		return true
	}
	return plainWord(w) && hasAnySuffix(l, proseSuffixes)
}

// hasAnySuffix reports whether s ends with one of suffixes.
func hasAnySuffix(s string, suffixes []string) bool {
	for _, suffix := range suffixes {
		if strings.HasSuffix(s, suffix) {
			return true
		}
	}
	return false
}

// keyAt is a key name found in a text: text[start:end], letters, digits,
// '_', '.' and '-'.
type keyAt struct{ start, end int }

// isKeyChar reports whether c may be part of a key name.
func isKeyChar(c byte) bool { return isWord(c) || c == '.' || c == '-' }

// scanKeys finds, in order, each key name of text that holds one of words
// (lower is asciiLower(text)) and that name accepts (given in lower case),
// and returns the spans value gives for them. Key names inside a value
// already found are not looked at.
func scanKeys(text, lower string, words []string, name func(string) bool, value func(string, keyAt) (int, int, bool)) [][2]int {
	var out [][2]int
	f := newFinder(lower, words)
	for pos := 0; pos < len(text); {
		at := f.from(pos)
		if at < 0 {
			break
		}
		k := keyAt{start: at, end: at}
		for k.start > 0 && isKeyChar(text[k.start-1]) {
			k.start--
		}
		for k.end < len(text) && isKeyChar(text[k.end]) {
			k.end++
		}
		pos = k.end
		if !name(lower[k.start:k.end]) {
			continue
		}
		start, end, ok := value(text, k)
		if !ok || len(out) > 0 && start < out[len(out)-1][1] {
			continue
		}
		out = append(out, [2]int{start, end})
		pos = max(pos, end)
	}
	return out
}

// assignment returns the value assigned to the key k of text: the key, an
// optional closing quote, an operator (=, :, :=) with optional white space
// around it, and the value (see assignedValue).
func assignment(text string, k keyAt) (int, int, bool) {
	i := k.end
	if i < len(text) && (text[i] == '"' || text[i] == '\'') {
		i++
	}
	before := i
	for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
		i++
	}
	spaced := i > before
	var op string
	switch {
	case strings.HasPrefix(text[i:], ":="):
		op = ":="
	case strings.HasPrefix(text[i:], "::"):
		return 0, 0, false // a path: Token::new
	case strings.HasPrefix(text[i:], "="), strings.HasPrefix(text[i:], ":"):
		op = text[i : i+1]
	default:
		return 0, 0, false
	}
	i += len(op)
	spaced = spaced || i < len(text) && (text[i] == ' ' || text[i] == '\t')
	return assignedValue(text, k.start, op, spaced, i)
}

// flag returns the value given to the command-line flag k of text
// (--api-key VALUE): a flag that starts a word, white space, and a value
// that is not another flag.
func flag(text string, k keyAt) (int, int, bool) {
	if text[k.start] != '-' || k.start > 0 && text[k.start-1] != ' ' && text[k.start-1] != '\t' {
		return 0, 0, false
	}
	i := k.end
	for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
		i++
	}
	if i == k.end || i == len(text) || text[i] == '-' {
		return 0, 0, false
	}
	return assignedValue(text, k.start, "", true, i)
}
