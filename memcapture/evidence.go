package memcapture

import (
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memcore/redact"
)

// replyEvidence is where the classifier says a memory comes from: the
// numbers of the messages (1 for the window's first) and a short quote.
type replyEvidence struct {
	Messages []int  `json:"messages"`
	Quote    string `json:"quote"`
}

// The bounds of a quote.
const (
	// minQuoteWords is the fewest words a quote must have to count: "yes"
	// or "ok" says nothing about what was agreed to.
	minQuoteWords = 2
	// maxQuoteRunes bounds the quote recorded in a memory file.
	maxQuoteRunes = 300
)

// provenance is who stated a memory and where: the source, and the
// evidence to record.
type provenance struct {
	source   memcore.Source
	evidence *memcore.Evidence
	// found reports whether the quote was found in the window.
	found bool
}

// provenanceOf checks the classifier's evidence for a memory of content
// against window, the redacted window the classifier saw, and says who
// stated it (see [memcore.Source]):
//
//   - user: the quote is in a user message's own words — not in text the
//     user pasted (a code block, quoted lines, log lines, markup) — and
//     shares a key word with the memory's text;
//   - assistant: the quote is only in the assistant's messages;
//   - mixed: otherwise — in pasted text only, in both but not in the user's
//     own words, sharing nothing with the memory, or not found at all (too
//     short, or not in the window): the memory is not trusted.
//
// Quotes and messages are compared normalised: case, runs of white space,
// and quote characters (straight, curly, guillemets, backticks) do not
// matter, and a quote may leave out words with "..." between parts found
// in order in one message. The evidence recorded is the passage as it is
// in the window (or the classifier's quote when none was found), redacted
// and clipped, with the time of its message, or now when unknown.
func provenanceOf(window []memcore.Message, ev replyEvidence, content string, now time.Time) provenance {
	w := locate(window, quoteParts(ev.Quote))
	p := provenance{source: memcore.SourceMixed, found: w.first != nil}
	switch {
	case w.own && shareKeyWord(content, ev.Quote):
		p.source = memcore.SourceUser
	case w.assistant && !w.own && !w.pasted:
		p.source = memcore.SourceAssistant
	}
	occ := w.ownFirst
	if occ == nil {
		occ = w.first
	}
	quote, at := ev.Quote, now
	if occ != nil {
		msg := window[occ.msg]
		quote = msg.Content[occ.start:occ.end]
		if !msg.At.IsZero() {
			at = msg.At.UTC().Truncate(time.Second)
		}
	}
	quote, _ = redact.Text(strings.Join(strings.Fields(quote), " "))
	if quote = clipRunes(quote, maxQuoteRunes); quote != "" || occ != nil {
		p.evidence = &memcore.Evidence{Quote: quote, At: at}
	}
	return p
}

// whereFound says where in a window a quote is: in a user's own words, in
// what a user pasted, in the assistant's words; the first occurrence, and
// the first in a user's own words.
type whereFound struct {
	own, pasted, assistant bool
	first, ownFirst        *occurrence
}

// locate finds the quote parts (nil: nothing to find) in each message of
// window.
func locate(window []memcore.Message, parts []string) whereFound {
	var w whereFound
	if parts == nil {
		return w
	}
	for i, msg := range window {
		occ, ok := findQuote(msg.Content, parts)
		if !ok {
			continue
		}
		occ.msg = i
		switch {
		case msg.Role == memcore.RoleAssistant:
			w.assistant = true
		case pastedAt(msg.Content, occ.start, occ.end):
			w.pasted = true
		default:
			w.own = true
			if w.ownFirst == nil {
				w.ownFirst = &occ
			}
		}
		if w.first == nil {
			w.first = &occ
		}
	}
	return w
}

// occurrence is where a quote is in a message: the byte range of its
// first part to its last, in the original text.
type occurrence struct {
	msg, start, end int
}

// quoteParts returns the normalised parts of a quote, split at "..." (or
// "…"), without surrounding punctuation, or nil when the quote is too
// short to count.
func quoteParts(quote string) []string {
	n := normalizeQuote(strings.ReplaceAll(quote, "…", "..."))
	var parts []string
	words := 0
	for _, p := range strings.Split(n.s, "...") {
		p = strings.Trim(p, ` .,;:!?'-`)
		if p != "" {
			parts = append(parts, p)
			words += wordCount(p)
		}
	}
	if words < minQuoteWords {
		return nil
	}
	return parts
}

// findQuote finds parts, in order, in text, compared normalised, and
// returns the byte range of text they span.
func findQuote(text string, parts []string) (occurrence, bool) {
	n := normalizeQuote(text)
	from := 0
	start, end := -1, 0
	for _, part := range parts {
		i := strings.Index(n.s[from:], part)
		if i < 0 {
			return occurrence{}, false
		}
		i += from
		if start < 0 {
			start = i
		}
		from = i + len(part)
		end = from
	}
	return occurrence{start: n.off[start], end: n.end(end)}, true
}

// normText is a text normalised for comparing quotes, with, for each of
// its bytes, the offset in the original text of the rune it comes from.
type normText struct {
	s   string
	off []int
	// orig is the length of the original text.
	orig int
}

// end returns the original offset just after normalised byte i-1.
func (n normText) end(i int) int {
	if i >= len(n.off) {
		return n.orig
	}
	return n.off[i]
}

// quoteChars are the characters a quote may be written with, all read as
// an apostrophe.
const quoteChars = "'\"`´‘’‚‛“”„‟«»‹›′″"

// normalizeQuote lowers s, makes each run of white space one space (none
// leading or trailing) and every quote character an apostrophe.
func normalizeQuote(s string) normText {
	var b strings.Builder
	off := make([]int, 0, len(s))
	space := false
	for i, r := range s {
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			off = append(off, i)
			space = false
		}
		if strings.ContainsRune(quoteChars, r) {
			r = '\''
		}
		r = unicode.ToLower(r)
		for range utf8.RuneLen(r) {
			off = append(off, i)
		}
		b.WriteRune(r)
	}
	return normText{s: b.String(), off: off, orig: len(s)}
}

// pastedLineRE matches a line that is not the user's own words: a quoted
// line, indented code, log or trace lines, markup.
var pastedLineRE = regexp.MustCompile(`^(?:\s*>|    |\t|\s*\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}|\s*\d{2}:\d{2}:\d{2}\b|(?i)\s*\[?(?:trace|debug|info|warn|warning|error|err|fatal|crit|critical)\]?[\s:]|.*\blevel=\w|\s+at\s|\s*File "|Traceback|panic:|goroutine \d|\s*<[a-zA-Z!/?])`)

// pastedAt reports whether the text from start to end of a user message
// lies, even in part, in what the user pasted rather than wrote: a fenced
// code block (``` or ~~~), or a line pastedLineRE matches.
func pastedAt(text string, start, end int) bool {
	inFence := false
	pos := 0
	for _, line := range strings.SplitAfter(text, "\n") {
		lineStart, lineEnd := pos, pos+len(line)
		pos = lineEnd
		trimmed := strings.TrimSpace(line)
		fence := strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")
		pasted := inFence || fence || pastedLineRE.MatchString(strings.TrimRight(line, "\r\n"))
		if fence {
			inFence = !inFence
		}
		if pasted && lineStart < end && start < lineEnd {
			return true
		}
	}
	return false
}

// stopWords are the words shareKeyWord ignores: they say nothing of what
// a memory is about.
var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`the and for with that this these those from are was were will would should could can
		must always never not but all any our ours you your yours they them their its it's his her she him
		use uses used using prefer prefers preferred like likes want wants please just also only then than
		have has had been being into onto over under when where what which who why how let lets make makes
		sure okay yes from now on going keep here there some more most very too much many each every other
		user users project assistant memory remember`) {
		stopWords[w] = true
	}
}

// unspacedStopWords are the pairs of characters keyWords ignores in text
// written without spaces: Chinese and Japanese for the stop words above
// (user, always, use, like, prefer, remember, project, we, must, from now
// on, …).
var unspacedStopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`用户 总是 永远 一直 喜欢 使用 偏好 记住 项目 我们 你们 不要 以后 现在 应该 需要 可以 必须 这个 那个
		ユー ーザ ザー 使用 常時 絶対 今後 以後 記憶 好き`) {
		unspacedStopWords[w] = true
	}
}

// isUnspaced reports whether r is of a script written without spaces
// between words whose characters, two at a time, carry meaning: Han and
// Katakana (with its prolonged sound mark). Hiragana, mostly grammar in
// Japanese, ends such a run.
func isUnspaced(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Katakana, r) || r == 'ー'
}

// wordCount counts the words of s: its fields, a field of Chinese or
// Japanese characters counting one word for every two of them (a field of
// one or two is one word).
func wordCount(s string) int {
	n := 0
	for _, f := range strings.Fields(s) {
		unspaced := 0
		for _, r := range f {
			if isUnspaced(r) || unicode.Is(unicode.Hiragana, r) {
				unspaced++
			}
		}
		n += max(1, unspaced/2)
	}
	return n
}

// keyWords returns the stems of the words of s that say what it is about:
// lower case letter and digit runs of three characters or more, not stop
// words, a plural "s" dropped, cut to five characters; and, in Chinese
// and Japanese, which are written without spaces, every two adjacent Han
// or Katakana characters (制表, 表符; エラ, ラー) that are not stop words.
func keyWords(s string) map[string]bool {
	out := map[string]bool{}
	prev := rune(-1)
	for _, r := range s {
		if !isUnspaced(r) {
			prev = -1
			continue
		}
		if pair := string([]rune{prev, r}); prev >= 0 && !unspacedStopWords[pair] {
			out[pair] = true
		}
		prev = r
	}
	notWord := func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) || isUnspaced(r) || unicode.Is(unicode.Hiragana, r)
	}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), notWord) {
		if utf8.RuneCountInString(w) < 3 || stopWords[w] {
			continue
		}
		if utf8.RuneCountInString(w) > 3 {
			w = strings.TrimSuffix(w, "s")
		}
		out[clipRunes(w, 5)] = true
	}
	return out
}

// shareKeyWord reports whether a memory's text and its quote share a key
// word: a quote that says nothing of the memory does not show who stated
// it.
func shareKeyWord(content, quote string) bool {
	q := keyWords(quote)
	for w := range keyWords(content) {
		if q[w] {
			return true
		}
	}
	return false
}
