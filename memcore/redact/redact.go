package redact

import (
	"regexp"
	"strings"
)

// Placeholder replaces each secret [Text] finds.
const Placeholder = "[REDACTED]"

// Match is one secret found by [Find].
type Match struct {
	// Rule names the kind of secret, for example "GitHub token" or
	// "e-mail address"; it never holds the secret itself.
	Rule string
	// Start and End are the byte offsets of the secret in the text
	// searched: the secret is text[Start:End].
	Start, End int
}

// rule is one kind of secret. The text matched by the first group of
// groups that took part in the match (the whole match when groups is
// empty) is replaced; keep, when set, can veto a match, given the text and
// the submatch indexes.
type rule struct {
	name   string
	re     *regexp.Regexp
	groups []int
	keep   func(text string, m []int) bool
}

// kvKeys are the key names whose values are secrets in key=value and
// key: value pairs; a key may carry a prefix (DB_PASSWORD, client_secret,
// aws_secret_access_key, x-api-key) but must end with one of these.
const kvKeys = `(?:password|passwd|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key|secret[_-]?key|private[_-]?key|credentials?)`

// rules are applied in order, each to the text the previous ones left.
// Specific formats come before generic ones so that, for example, the
// Anthropic key is not half-matched as an OpenAI key.
var rules = []rule{
	{name: "private key block", re: regexp.MustCompile(
		`-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)`)},
	{name: "JWT", re: regexp.MustCompile(
		`\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`)},
	{name: "Anthropic key", re: regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_-]{20,}`)},
	{name: "OpenAI key", re: regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-)?([A-Za-z0-9_-]{20,})`),
		keep: func(t string, m []int) bool { return !randomish(t[m[2]:m[3]]) }},
	{name: "AWS access key id", re: regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`)},
	{name: "AWS secret key", re: regexp.MustCompile(
		`(?i)aws.{0,20}?secret.{0,20}?[:=][ \t]*["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+]|$)`), groups: []int{1}},
	{name: "GitHub token", re: regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})`)},
	{name: "Google API key", re: regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`)},
	{name: "Slack token", re: regexp.MustCompile(`\b(?:xox[abposr]|xapp-\d)-([A-Za-z0-9-]{10,})`),
		keep: func(t string, m []int) bool { return !randomish(t[m[2]:m[3]]) }},
	{name: "Slack webhook", re: regexp.MustCompile(`https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]+`)},
	{name: "Stripe key", re: regexp.MustCompile(`\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}|\bwhsec_[A-Za-z0-9]{24,}`)},
	{name: "bearer token", re: regexp.MustCompile(`(?i)\bbearer[ \t]+([A-Za-z0-9._~+/-]{16,}=*)`), groups: []int{1},
		keep: func(t string, m []int) bool { return !randomish(t[m[2]:m[3]]) }},
	{name: "URL password", re: regexp.MustCompile(`\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#@]*:([^\s/?#@]+)@`), groups: []int{1}},
	// key=value: any value. key: value and key = value: a quoted value,
	// or an unquoted one that is not a plain word ("password: required" and
	// "password= empty" are prose, "password: hunter2" is not).
	{name: "secret assignment", re: regexp.MustCompile(
		`(?i)\b[A-Za-z0-9_.-]*` + kvKeys + `["']?[ \t]*(=|:)([ \t]*)(?:"([^"\r\n]+)"|'([^'\r\n]+)'|([^\s"',;&<>` + "`" + `]+))`),
		groups: []int{3, 4, 5},
		keep: func(t string, m []int) bool {
			if m[10] < 0 { // quoted
				return false
			}
			if t[m[2]:m[3]] == "=" && m[4] == m[5] { // key=value
				return false
			}
			return plainWord(t[m[10]:m[11]])
		}},
	{name: "e-mail address", re: regexp.MustCompile(`\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b`),
		keep: func(t string, m []int) bool {
			// git@host is an SSH remote; user@host after "://" is a URL's
			// user name, kept as the URL rule keeps it.
			return strings.HasPrefix(t[m[0]:m[1]], "git@") || strings.HasSuffix(t[:m[0]], "://")
		}},
}

// Text returns s with every secret replaced by [Placeholder], and the
// number of secrets replaced. The result is valid UTF-8 if s is, and
// redacting it again replaces nothing more. See the package documentation
// for what counts as a secret.
func Text(s string) (string, int) {
	text, segs := scan(s)
	return text, countSecrets(segs)
}

// Find returns the secrets of s that [Text] replaces, in order and without
// overlaps: Text(s) is s with each s[m.Start:m.End] replaced by
// [Placeholder], and len(Find(s)) is the count Text reports. It returns nil
// when s holds no secret.
func Find(s string) []Match {
	_, segs := scan(s)
	var out []Match
	for _, g := range segs {
		if g.rule != "" {
			out = append(out, Match{Rule: g.rule, Start: g.start, End: g.end})
		}
	}
	return out
}

// segment is a piece of the text being redacted: a piece of the original
// text (rule "") or a Placeholder that stands for the secret original[start:end]
// found by rule.
type segment struct {
	start, end int
	rule       string
}

func (g segment) len() int {
	if g.rule != "" {
		return len(Placeholder)
	}
	return g.end - g.start
}

func countSecrets(segs []segment) int {
	n := 0
	for _, g := range segs {
		if g.rule != "" {
			n++
		}
	}
	return n
}

// scan applies the rules in order, each to the text the previous ones left,
// and returns the redacted text with its segments, which map every
// placeholder back to the part of s it replaced.
func scan(s string) (string, []segment) {
	text := s
	segs := []segment{{start: 0, end: len(s)}}
	for i := range rules {
		spans := rules[i].spans(text)
		if len(spans) == 0 {
			continue
		}
		segs = replaceSpans(segs, spans, rules[i].name)
		text = render(s, segs)
	}
	return text, segs
}

// replaceSpans returns segs, the segments of the current text, with each
// span (offsets in the current text, in order, not overlapping) replaced by
// a placeholder of rule. A span that covers part of an earlier placeholder
// is widened to cover all of it, so placeholders are never cut, and the new
// placeholder stands for everything the span covers.
func replaceSpans(segs []segment, spans [][2]int, rule string) []segment {
	out := make([]segment, 0, len(segs)+2*len(spans))
	i, cur := 0, 0 // segs[i] starts at offset cur of the current text
	for _, sp := range spans {
		s, e := max(sp[0], cur), sp[1]
		if e <= s {
			continue
		}
		for i < len(segs) && cur+segs[i].len() <= s {
			out = append(out, segs[i])
			cur += segs[i].len()
			i++
		}
		if i == len(segs) {
			break
		}
		// segs[i] holds offset s.
		start := segs[i].start
		if g := segs[i]; g.rule == "" && s > cur {
			out = append(out, segment{start: g.start, end: g.start + (s - cur)})
			start = g.start + (s - cur)
		}
		for i < len(segs) && cur+segs[i].len() < e {
			cur += segs[i].len()
			i++
		}
		if i == len(segs) {
			break
		}
		// segs[i] holds offset e-1.
		end := segs[i].end
		if g := segs[i]; g.rule == "" && e < cur+g.len() {
			end = g.start + (e - cur)
			segs[i] = segment{start: end, end: g.end} // the rest stays
			cur = e
		} else {
			cur += g.len()
			i++
		}
		out = append(out, segment{start: start, end: end, rule: rule})
	}
	return append(out, segs[i:]...)
}

// render is the text segs stand for, given the original text s.
func render(s string, segs []segment) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, g := range segs {
		if g.rule != "" {
			b.WriteString(Placeholder)
		} else {
			b.WriteString(s[g.start:g.end])
		}
	}
	return b.String()
}

// spans returns the parts of text the rule replaces, in order: for each
// match not vetoed by keep, the first group of groups that took part (the
// whole match when groups is empty), unless it starts with a Placeholder
// left by an earlier rule.
func (r *rule) spans(text string) [][2]int {
	var out [][2]int
	for _, m := range r.re.FindAllStringSubmatchIndex(text, -1) {
		if r.keep != nil && r.keep(text, m) {
			continue
		}
		start, end := m[0], m[1]
		if len(r.groups) > 0 {
			start = -1
			for _, g := range r.groups {
				if m[2*g] >= 0 {
					start, end = m[2*g], m[2*g+1]
					break
				}
			}
			if start < 0 {
				continue
			}
		}
		if strings.HasPrefix(text[start:end], Placeholder) {
			continue // already redacted by an earlier rule
		}
		out = append(out, [2]int{start, end})
	}
	return out
}

// randomish reports whether s looks machine-made rather than words: it
// mixes at least two of upper case, lower case and digits, and has a run of
// at least ten letters and digits.
func randomish(s string) bool {
	var upper, lower, digit bool
	run, longest := 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z':
			upper = true
		case 'a' <= c && c <= 'z':
			lower = true
		case '0' <= c && c <= '9':
			digit = true
		default:
			run = 0
			continue
		}
		run++
		longest = max(longest, run)
	}
	classes := 0
	for _, ok := range []bool{upper, lower, digit} {
		if ok {
			classes++
		}
	}
	return classes >= 2 && longest >= 10
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
