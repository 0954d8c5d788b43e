package redact

import "strings"

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
func scan(s string) (string, []segment) { return scanWith(s, rules()) }

// scanWith is scan with the rules rs.
func scanWith(s string, rs []rule) (string, []segment) {
	text := s
	lower, runs := asciiLower(s), tokenRuns(s)
	segs := []segment{{start: 0, end: len(s)}}
	for i := range rs {
		spans := rs[i].spans(text, lower, runs)
		if len(spans) == 0 {
			continue
		}
		segs = replaceSpans(segs, spans, rs[i].name)
		text = render(s, segs)
		lower, runs = asciiLower(text), tokenRuns(text)
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

// Error returns err with its message redacted, for an error that may quote
// a conversation or a model's output — a provider's error echoing its
// request — before it is logged or shown. The result reads as Text of
// err's message and wraps err, so errors.Is and errors.As still reach the
// cause. It returns err itself when the message holds no secret, and nil
// for nil.
func Error(err error) error {
	if err == nil {
		return nil
	}
	msg, n := Text(err.Error())
	if n == 0 {
		return err
	}
	return &redactedError{msg: msg, err: err}
}

// redactedError is an error whose message was redacted.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
