package redact

import (
	"regexp"
	"strings"
	"sync"
)

// This file holds the scanners of credentials whose place, rather than
// their format, makes them secret, where a regular expression would say
// too little or cost too much.

// connectionPassword is the value assigned to the key k, Pwd, of a
// connection string: a key that follows a ';', or whose value holds or is
// followed by one (Server=db;Uid=sa;Pwd=…;). The value runs as a
// PASSWORD=… value does (see assignment).
func connectionPassword(text string, k keyAt) (int, int, bool) {
	start, end, ok := assignment(text, k)
	if !ok {
		return 0, 0, false
	}
	before := strings.TrimRight(text[:k.start], " \t")
	if strings.HasSuffix(before, ";") || strings.Contains(text[start:end], ";") || end < len(text) && text[end] == ';' {
		return start, end, true
	}
	return 0, 0, false
}

// pgpassPasswords returns the passwords of the .pgpass lines of text:
// words of five fields, host:port:database:user:password (see
// pgpassPassword), on lines that hold at least four ':'. The scanner looks
// for colons, not keywords.
func pgpassPasswords(text, _ string, _ [][2]int) [][2]int {
	var out [][2]int
	for start := 0; start < len(text); {
		end := strings.IndexByte(text[start:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += start
		}
		if strings.Count(text[start:end], ":") >= 4 {
			out = appendPgpassPasswords(out, text, start, end)
		}
		start = end + 1
	}
	return out
}

// appendPgpassPasswords appends to out the passwords of the .pgpass words
// of the line text[start:end]. A word ends at white space; quotes and
// backquotes around it are not part of it.
func appendPgpassPasswords(out [][2]int, text string, start, end int) [][2]int {
	for i := start; i < end; {
		for i < end && (isSpace(text[i]) || isQuote(text[i])) {
			i++
		}
		j := i
		for j < end && !isSpace(text[j]) {
			j++
		}
		word := strings.TrimRight(text[i:j], "\"'`")
		word = word[:trimPunct(word)]
		if at, ok := pgpassPassword(word); ok {
			out = append(out, [2]int{i + at, i + len(word)})
		}
		i = j
	}
	return out
}

// pgpassPassword returns the offset of the password in word when word is
// a line of a .pgpass file: hostname:port:database:username:password, a
// '\:' being part of a field. So that times, MAC and IPv6 addresses,
// compiler positions and cache keys are not taken for one, the host must
// be a host name or '*', the port a number of four or five digits or '*',
// the user must hold a letter or be '*', and the password must not be a
// reference.
func pgpassPassword(word string) (int, bool) {
	var cuts [4]int
	n := 0
	for i := 0; i < len(word); i++ {
		switch word[i] {
		case '\\':
			i++
		case ':':
			if n == len(cuts) {
				return 0, false
			}
			cuts[n] = i
			n++
		}
	}
	if n != len(cuts) {
		return 0, false
	}
	host, port, db := word[:cuts[0]], word[cuts[0]+1:cuts[1]], word[cuts[1]+1:cuts[2]]
	user, password := word[cuts[2]+1:cuts[3]], word[cuts[3]+1:]
	if !hostOrAny(host) || !portOrAny(port) || db == "" || !userOrAny(user) || password == "" || reference(password) {
		return 0, false
	}
	return cuts[3] + 1, true
}

// hostOrAny reports whether s is '*' or a host name: letters, digits, '.'
// and '-', starting with a letter or a digit.
func hostOrAny(s string) bool {
	if s == "*" {
		return true
	}
	if s == "" || !isWord(s[0]) || s[0] == '_' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isWord(c) && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

// portOrAny reports whether s is '*' or a port of four or five digits.
func portOrAny(s string) bool {
	if s == "*" {
		return true
	}
	if len(s) < 4 || len(s) > 5 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// userOrAny reports whether s is '*' or a user name holding a letter.
func userOrAny(s string) bool {
	if s == "*" {
		return true
	}
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; 'a' <= c && c <= 'z' {
			return true
		}
	}
	return false
}

// argPattern matches a command-line argument: in single or double quotes
// (groups 1 and 2: the inside), or a word that does not start with '-'
// (group 3).
const argPattern = `(?:'([^'\n]*)'|"([^"\n]*)"|([^\s'"-]\S*))`

// commandArg returns the rule of a password given as a command-line
// argument: prefix, a regular expression, matches the command and the
// option up to the argument, on a line that holds one of keywords. The
// secret is the argument (the inside of its quotes), unless it is a
// reference ($MYSQL_PWD); value, when not nil, picks the secret out of the
// argument instead, given its offsets.
func commandArg(name string, keywords []string, prefix string, value func(text string, start, end int) (int, int, bool)) rule {
	r := rule{name: name, keywords: keywords, re: regexp.MustCompile(prefix + argPattern)}
	r.value = func(t string, m []int) (int, int, bool) {
		for g := 1; g <= 3; g++ {
			start, end := m[2*g], m[2*g+1]
			switch {
			case start < 0:
				continue
			case value != nil:
				return value(t, start, end)
			case reference(t[start:end]):
				return 0, 0, false
			}
			return start, end, true
		}
		return 0, 0, false
	}
	return r
}

// userPasswordArg returns the password of the argument text[start:end]
// when it is user:password and the password is not a reference: curl -u
// user alone asks for the password.
func userPasswordArg(text string, start, end int) (int, int, bool) {
	i := strings.IndexByte(text[start:end], ':')
	if i < 0 || start+i+1 == end || reference(text[start+i+1:end]) {
		return 0, 0, false
	}
	return start + i + 1, end, true
}

// csvSecretColumns returns the values of the columns of a CSV table whose
// header names a secret (see secretKeyName): Password and Secret access
// key in an AWS credentials.csv, password or api_token in an export. A
// header is a line holding one of the keywords of secretKeys, of at least
// two comma-separated names (see csvHeader); its rows are the lines that
// follow with as many fields, up to the first that has not. Empty values
// and references are left alone.
func csvSecretColumns(text, lower string, _ [][2]int) [][2]int {
	var out [][2]int
	f := newFinder(lower, secretKeyWords)
	for pos := 0; pos < len(text); {
		at := f.from(pos)
		if at < 0 {
			break
		}
		start, end, next := lineBounds(text, at)
		pos = next
		n, secret := csvHeader(text[start:end])
		if len(secret) == 0 {
			continue
		}
		for pos < len(text) {
			rowStart, rowEnd, rowNext := lineBounds(text, pos)
			fields := csvFields(text[rowStart:rowEnd])
			if len(fields) != n {
				break
			}
			for _, col := range secret {
				if v := fields[col]; v[1] > v[0] && !reference(text[rowStart+v[0]:rowStart+v[1]]) {
					out = append(out, [2]int{rowStart + v[0], rowStart + v[1]})
				}
			}
			pos = rowNext
		}
	}
	return out
}

// lineBounds returns the start and end of the line of text that holds
// offset at, without its line break (and a carriage return before it), and
// the start of the next line.
func lineBounds(text string, at int) (start, end, next int) {
	start = strings.LastIndexByte(text[:at], '\n') + 1
	end = strings.IndexByte(text[at:], '\n')
	if end < 0 {
		end = len(text)
	} else {
		end += at
	}
	next = end + 1
	if end > start && text[end-1] == '\r' {
		end--
	}
	return start, end, next
}

// csvHeader returns the number of fields of line, when it is the header of
// a CSV table, and the indexes of the columns that name a secret. Every
// field must be a name: letters, digits, spaces, '_', '.' and '-', starting
// with a letter, optionally in double quotes, with no space around the
// commas — so that prose ("the user, the password, and the key") is not a
// header.
func csvHeader(line string) (n int, secret []int) {
	if !headerShaped(line) {
		return 0, nil
	}
	fields := csvFields(line)
	if len(fields) < 2 {
		return 0, nil
	}
	for i, f := range fields {
		name := line[f[0]:f[1]]
		if !columnName(name) {
			return 0, nil
		}
		if secretKeyName(strings.ReplaceAll(strings.ToLower(name), " ", "_")) {
			secret = append(secret, i)
		}
	}
	return len(fields), secret
}

// headerShaped reports whether line may be a CSV header, before it is
// split: it holds a comma, and only the characters of column names, commas
// and double quotes.
func headerShaped(line string) bool {
	if !strings.Contains(line, ",") {
		return false
	}
	for i := 0; i < len(line); i++ {
		if c := line[i]; !isWord(c) && !strings.ContainsRune(" .-,\"", rune(c)) {
			return false
		}
	}
	return true
}

// columnName reports whether s can name a column of a CSV header (see
// csvHeader).
func columnName(s string) bool {
	if s == "" || len(s) > 40 || !('a' <= s[0]|0x20 && s[0]|0x20 <= 'z') || s[len(s)-1] == ' ' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isWord(c) && c != ' ' && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

// csvFields returns the offsets in line of its comma-separated fields, the
// inside of the quotes for a field in double quotes ("" standing for a
// quote), or nil when a quote is not closed.
func csvFields(line string) [][2]int {
	var out [][2]int
	for i := 0; i <= len(line); i++ {
		if i < len(line) && line[i] == '"' {
			j := i + 1
			for j < len(line) && (line[j] != '"' || j+1 < len(line) && line[j+1] == '"') {
				if line[j] == '"' {
					j++
				}
				j++
			}
			if j >= len(line) || j+1 < len(line) && line[j+1] != ',' {
				return nil
			}
			out = append(out, [2]int{i + 1, j})
			i = j + 1
			continue
		}
		j := strings.IndexByte(line[i:], ',')
		if j < 0 {
			j = len(line) - i
		}
		out = append(out, [2]int{i, i + j})
		i += j
	}
	return out
}

// twilioHex matches a Twilio auth token: 32 lower-case hex digits.
var twilioHex = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b[0-9a-f]{32}\b`) })

// maxTwilioGap bounds the bytes between an account SID and its auth token.
const maxTwilioGap = 200

// twilioAuthTokens returns the Twilio auth tokens of text: the first 32
// lower-case hex digits after an account SID (AC and 32 hex digits, found
// in the token runs of text) on the same line, within maxTwilioGap bytes —
// Client("AC…", "…"), "account AC…, auth token …". An auth token assigned
// to a key that names it (TWILIO_AUTH_TOKEN=…) is an assignment's.
func twilioAuthTokens(text, _ string, runs [][2]int) [][2]int {
	var out [][2]int
	for _, run := range runs {
		for i := run[0]; ; {
			j := strings.Index(text[i:run[1]], "AC")
			if j < 0 {
				break
			}
			sid := i + j
			i = sid + 2
			if !accountSID(text, sid) {
				continue
			}
			end := sid + 34 + min(maxTwilioGap, len(text)-sid-34)
			if nl := strings.IndexByte(text[sid+34:end], '\n'); nl >= 0 {
				end = sid + 34 + nl
			}
			m := twilioHex().FindStringIndex(text[sid+34 : end])
			if m == nil || len(out) > 0 && sid+34+m[0] < out[len(out)-1][1] {
				continue
			}
			out = append(out, [2]int{sid + 34 + m[0], sid + 34 + m[1]})
		}
	}
	return out
}

// accountSID reports whether a Twilio account SID, AC and 32 lower-case
// hex digits, makes a word at text[at:].
func accountSID(text string, at int) bool {
	end := at + 34
	if end > len(text) || at > 0 && isWord(text[at-1]) || end < len(text) && isWord(text[end]) {
		return false
	}
	for i := at + 2; i < end; i++ {
		if c := text[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// sessionCookieWords are the words of the names of cookies that hold a
// session or a credential: sessionid, PHPSESSID, connect.sid,
// remember_token, next-auth.session-token, XSRF-TOKEN.
var sessionCookieWords = []string{"sess", "sid", "auth", "token", "jwt", "remember", "login", "secret", "csrf", "xsrf"}

// sessionCookies returns the values of the session cookies of text (see
// cookieValue) in a Cookie or Set-Cookie header, a curl --cookie option or
// a document.cookie assignment: the pairs name=value after "cookie:",
// "cookie=" or "--cookie ", up to the end of the line or a quote. Of a
// Set-Cookie header only the first pair is a cookie; the others are its
// attributes.
func sessionCookies(text, lower string, _ [][2]int) [][2]int {
	var out [][2]int
	f := newFinder(lower, []string{"cookie"})
	for pos := 0; pos < len(text); {
		at := f.from(pos)
		if at < 0 {
			break
		}
		pos = at + len("cookie")
		start, ok := cookiesStart(text, at)
		if !ok {
			continue
		}
		end := strings.IndexAny(text[start:], "\n\"'`")
		if end < 0 {
			end = len(text)
		} else {
			end += start
		}
		first := at >= 4 && lower[at-4:at] == "set-"
		out = appendSessionCookies(out, text, start, end, first)
		pos = max(pos, end)
	}
	return out
}

// cookiesStart returns where the cookies start after the word "cookie" at
// text[at:]: after ':' or '=' (not "=="), or, for the option --cookie,
// after white space; and after an opening quote.
func cookiesStart(text string, at int) (int, bool) {
	i := at + len("cookie")
	if i < len(text) && isWord(text[i]) {
		return 0, false
	}
	j := skipBlanks(text, i)
	switch {
	case j < len(text) && (text[j] == ':' || text[j] == '=' && !strings.HasPrefix(text[j:], "==")):
		j++
	case j == i || !strings.HasSuffix(text[:at], "--"):
		return 0, false // only the option --cookie takes its value after a blank
	}
	j = skipBlanks(text, j)
	if j < len(text) && isQuote(text[j]) {
		j++
	}
	return j, true
}

// appendSessionCookies appends to out the values of the session cookies
// among the pairs name=value, separated by ';', of text[start:end]; only
// the first pair when first is set.
func appendSessionCookies(out [][2]int, text string, start, end int, first bool) [][2]int {
	for i := start; i < end; {
		j := strings.IndexByte(text[i:end], ';')
		if j < 0 {
			j = end - i
		}
		pair := text[i : i+j]
		if eq := strings.IndexByte(pair, '='); eq > 0 {
			name := strings.TrimSpace(pair[:eq])
			vs := i + eq + 1 + len(pair[eq+1:]) - len(strings.TrimLeft(pair[eq+1:], " \t"))
			ve := i + len(strings.TrimRight(pair, " \t"))
			if ve > vs && text[vs] == '"' && text[ve-1] == '"' && ve-vs >= 2 {
				vs, ve = vs+1, ve-1
			}
			if ve > vs && sessionCookie(strings.ToLower(name), text[vs:ve]) {
				out = append(out, [2]int{vs, ve})
			}
		}
		if first {
			break
		}
		i += j + 1
	}
	return out
}

// sessionCookie reports whether the cookie name=value holds a session or a
// credential: a name holding one of sessionCookieWords and a value that is
// neither a reference nor a plain word (sessionid=deleted), or any name
// and a machine-made value of 16 characters or more.
func sessionCookie(name, value string) bool {
	if reference(value) {
		return false
	}
	if len(value) >= 16 && randomish(value) {
		return true
	}
	return containsAny(name, sessionCookieWords) && !plainWord(value)
}

// The widths of the lines of a private key's body: 64 characters of
// base64 in PEM, 70 in an OpenSSH key. Base64 wrapped at 76 (MIME, the
// base64 command) is not taken for a key.
const (
	pemWidth     = 64
	openSSHWidth = 70
)

// minBodyLines is the fewest full lines of a key's body found without its
// header.
const minBodyLines = 2

// keyBodies returns the bodies of private keys pasted without their
// -----BEGIN and -----END lines: blocks of at least minBodyLines full lines
// of base64 of one width (pemWidth or openSSHWidth) and one indentation,
// and the shorter line that may end them. A block is left alone when its
// first line begins as a certificate's does, or when it follows a -----BEGIN
// line or PuTTY's Public-Lines (a private key's block was redacted whole
// by an earlier rule, so what remains is public).
func keyBodies(text, _ string, _ [][2]int) [][2]int {
	var out [][2]int
	for pos := 0; pos < len(text); {
		start, end, next := lineBounds(text, pos)
		indent, width := bodyLine(text[start:end], 0)
		if width == 0 {
			pos = next
			continue
		}
		blockEnd, after, lines := bodyBlock(text, next, indent, width, end)
		if lines >= minBodyLines && !certificate(text[start+indent:end]) && !afterPublicHeader(text, start) {
			out = append(out, [2]int{start + indent, blockEnd})
		}
		pos = after
	}
	return out
}

// bodyLine returns the indentation and the width of line when it is a full
// line of a key's body: after blanks, pemWidth or openSSHWidth characters
// of base64 that look machine-made. When want is not 0, only that width
// counts. It returns a width of 0 otherwise.
func bodyLine(line string, want int) (indent, width int) {
	body := strings.TrimLeft(line, " \t")
	indent, width = len(line)-len(body), len(body)
	if want != 0 && width != want || want == 0 && width != pemWidth && width != openSSHWidth {
		return 0, 0
	}
	if !base64Line(body) || !randomish(body) {
		return 0, 0
	}
	return indent, width
}

// bodyBlock reads the lines of a key's body that follow the first, from
// offset pos: full lines of width with the given indentation, then
// optionally one shorter line of base64. It returns the end of the block's
// last line (end, that of the first line, when none follows), where the
// next line after the block starts, and the number of full lines, the
// first included.
func bodyBlock(text string, pos, indent, width, end int) (blockEnd, after, full int) {
	blockEnd, after, full = end, pos, 1
	for after < len(text) {
		start, lineEnd, next := lineBounds(text, after)
		line := text[start:lineEnd]
		if in, w := bodyLine(line, width); w != 0 && in == indent {
			blockEnd, after, full = lineEnd, next, full+1
			continue
		}
		if body := strings.TrimLeft(line, " \t"); len(line)-len(body) == indent && body != "" && len(body) < width && base64Line(body) {
			blockEnd, after = lineEnd, next
		}
		break
	}
	return blockEnd, after, full
}

// base64Line reports whether s is base64: letters, digits, '+' and '/',
// then at most two '='.
func base64Line(s string) bool {
	body := strings.TrimRight(s, "=")
	if len(s)-len(body) > 2 {
		return false
	}
	for i := 0; i < len(body); i++ {
		if c := body[i]; !isWord(c) && c != '+' && c != '/' || c == '_' {
			return false
		}
	}
	return true
}

// certificate reports whether line, the first of a body in base64, begins
// as an X.509 certificate's does: a SEQUENCE holding a SEQUENCE (MII… then
// CCA), where a private key's holds a version number.
func certificate(line string) bool {
	return len(line) >= 9 && strings.HasPrefix(line, "MII") && line[6:9] == "CCA"
}

// afterPublicHeader reports whether one of the three lines before the
// line that starts at start begins with -----BEGIN (a certificate's, a
// public key's, a PGP block's) or Public-Lines: (PuTTY's public key).
func afterPublicHeader(text string, start int) bool {
	for n := 0; n < 3 && start > 0; n++ {
		prev, _, _ := lineBounds(text, start-1)
		line := strings.TrimLeft(text[prev:start-1], " \t")
		if strings.HasPrefix(line, "-----BEGIN") || strings.HasPrefix(line, "Public-Lines:") {
			return true
		}
		start = prev
	}
	return false
}

// encodedSecrets returns the secrets of the URL-encoded words of text:
// each word (up to white space, quotes and angle brackets) that holds a
// percent-escape is decoded (see decodeURLWord) and scanned with the other
// rules, and the secrets they find there are mapped back to the encoded
// text: "?next=%2Fhome%3Ftoken%3D…", "password%3D…", "sk-proj-abc%2Bdef…".
func encodedSecrets(text, _ string, _ [][2]int) [][2]int {
	var out [][2]int
	for i := 0; i < len(text); {
		j := strings.IndexByte(text[i:], '%')
		if j < 0 {
			break
		}
		at := i + j
		if !escapeAt(text, at) {
			i = at + 1
			continue
		}
		start, end := urlWord(text, at)
		view, offsets := decodeURLWord(text[start:end])
		_, segs := scanWith(view, decodedRules())
		for _, g := range segs {
			if g.rule != "" {
				out = append(out, [2]int{start + offsets[g.start], start + offsets[g.end]})
			}
		}
		i = end
	}
	return out
}

// decodedRules are the rules encodedSecrets applies to a decoded word:
// all but itself, the last.
var decodedRules func() []rule

// The rules refer to encodedSecrets, which refers to decodedRules: set in
// init, not in its declaration, to break the cycle of initialisation.
func init() {
	decodedRules = sync.OnceValue(func() []rule {
		all := rules()
		return all[:len(all)-1]
	})
}

// urlWord returns the bounds of the word of text around offset at: up to
// white space, a quote or an angle bracket on either side.
func urlWord(text string, at int) (start, end int) {
	inWord := func(c byte) bool { return !isSpace(c) && !isQuote(c) && c != '<' && c != '>' }
	start, end = at, at
	for start > 0 && inWord(text[start-1]) {
		start--
	}
	for end < len(text) && inWord(text[end]) {
		end++
	}
	return start, end
}

// urlStructure are the characters a percent-escape is decoded to in a
// decoded word besides letters and digits: those that give a URL, a query
// or an e-mail address its structure, and the unreserved - . _ ~.
const urlStructure = "-._~=&?#/:@;, "

// decodeURLWord returns word with its percent-escapes decoded, and the
// offset in word of each byte of the result (and of its end). An escape of
// a character outside urlStructure and the letters and digits — '+', '%',
// a quote — becomes a '0', so that a token whose body was escaped still
// reads as one word of a token's characters.
func decodeURLWord(word string) (string, []int) {
	var b strings.Builder
	offsets := make([]int, 0, len(word)+1)
	for i := 0; i < len(word); i++ {
		offsets = append(offsets, i)
		if !escapeAt(word, i) {
			b.WriteByte(word[i])
			continue
		}
		c := unhex(word[i+1])<<4 | unhex(word[i+2])
		if !isWord(c) && strings.IndexByte(urlStructure, c) < 0 {
			c = '0'
		}
		b.WriteByte(c)
		i += 2
	}
	return b.String(), append(offsets, len(word))
}

// unhex is the value of the hex digit c.
func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// awsKeyID matches an AWS access key id; awsKeyIDWords are its prefixes in
// lower case.
var (
	awsKeyID      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`) })
	awsKeyIDWords = []string{"akia", "asia", "abia", "acca", "a3t"}
)

// awsSecretAfterID matches, right after an AWS access key id, what
// separates it from its secret access key — a comma, a slash, white
// space… — and the key (group 1).
var awsSecretAfterID = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^["']?[ \t]*[,;|/:=\t ][ \t]*["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`)
})

// awsSecretsBesideIDs returns the AWS secret access keys that follow an
// access key id, whatever surrounds them: a row of a credentials.csv,
// "AKIA… / …". The ids are found in the token runs of text, and stay for
// the rule of the ids; a key must mix upper and lower case (see
// mixedCase).
func awsSecretsBesideIDs(text, lower string, runs [][2]int) [][2]int {
	var out [][2]int
	for _, run := range runs {
		if !containsAny(lower[run[0]:run[1]], awsKeyIDWords) {
			continue
		}
		for _, id := range awsKeyID().FindAllStringIndex(text[run[0]:run[1]], -1) {
			start, end := run[0]+id[0], run[0]+id[1]
			if start > 0 && isWord(text[start-1]) {
				continue
			}
			m := awsSecretAfterID().FindStringSubmatchIndex(text[end:min(end+60, len(text))])
			if m == nil || !mixedCase(text[end+m[2]:end+m[3]]) || len(out) > 0 && end+m[2] < out[len(out)-1][1] {
				continue
			}
			out = append(out, [2]int{end + m[2], end + m[3]})
		}
	}
	return out
}
