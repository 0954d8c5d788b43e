package memcapture

import (
	"regexp"
	"strings"
)

// Redacted replaces each secret [Redact] finds.
const Redacted = "[REDACTED]"

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

// Redact replaces every secret in text with [Redacted] and returns the
// result and the number of secrets replaced. It is deterministic and finds:
//
//   - API keys and tokens of OpenAI (sk-…, sk-proj-…), Anthropic
//     (sk-ant-…), AWS (access key ids AKIA…/ASIA…, and secret access keys
//     next to an "aws … secret" key), GitHub (ghp_, gho_, ghu_, ghs_, ghr_,
//     github_pat_), Google (AIza…), Slack (xox?-…, xapp-…, hooks.slack.com
//     web hooks) and Stripe (sk_/rk_/pk_ live and test keys, whsec_);
//   - PEM private key blocks (an unterminated one to the end of the text);
//   - JSON Web Tokens (eyJ….….…) and other bearer tokens;
//   - the password of a URL (scheme://user:password@host keeps user and
//     host);
//   - the values of password=, passwd:, secret=, token=, api_key= and
//     similar pairs, with any key prefix (DB_PASSWORD, client_secret,
//     X-Api-Key): key=value always, a quoted value always, key: value and
//     key = value when the value is not a plain word;
//   - e-mail addresses (but not git@host remotes or a URL's user name).
//
// Look-alikes are left alone: "sk-" inside words ("risk-based"),
// hyphenated prose after sk-, prefixes named in prose, commit hashes, UUIDs
// and memory ids, a key with no value ("password=", "password= empty"),
// max_tokens=4096, "the password: required", URLs without a password,
// version strings, "eyJ" in prose, public keys and certificates.
func Redact(text string) (string, int) {
	total := 0
	for i := range rules {
		var n int
		text, n = rules[i].apply(text)
		total += n
	}
	return text, total
}

func (r *rule) apply(text string) (string, int) {
	matches := r.re.FindAllStringSubmatchIndex(text, -1)
	if matches == nil {
		return text, 0
	}
	var b strings.Builder
	last, n := 0, 0
	for _, m := range matches {
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
		if strings.HasPrefix(text[start:end], Redacted) {
			continue // already redacted by an earlier rule
		}
		b.WriteString(text[last:start])
		b.WriteString(Redacted)
		last = end
		n++
	}
	if n == 0 {
		return text, 0
	}
	b.WriteString(text[last:])
	return b.String(), n
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
