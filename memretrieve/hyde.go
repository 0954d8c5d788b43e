package memretrieve

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/forgemem/forgemem/memcore"
)

// hypothesisSystemPrompt asks the hypothesis model for sentences written the
// way stored memories are, so that their embeddings land near the memories
// (HyDE). %d is the number of sentences.
const hypothesisSystemPrompt = `You help a coding assistant recall notes from its long-term memory. The notes were written in earlier sessions as short, declarative statements: the user's coding preferences, project conventions, architectural decisions and their reasons, facts about how the user works, corrections of the assistant's mistakes, and recurring patterns. For example:
- Prefers table-driven tests with t.Run subtests.
- Database migrations live in db/migrations and are numbered sequentially.
- Chose optimistic locking with retry for user updates because pessimistic locks caused timeouts.

Read the conversation and write %d different sentences that a note relevant to it might contain: what the assistant should already know to continue this conversation well. Write each one the way such a note is written: one terse, declarative, third-person sentence, no questions, no hedging, no mention of "the conversation". Cover different aspects (preferences, conventions, decisions, past corrections). Do not answer the user.

Reply with JSON only, in the form {"hypotheses": ["...", "..."]}.`

// HypothesisSchemaName is the Name of the response schema of the
// hypothesis request, the one model call a turn makes in [ModeLLM]. It is
// stable, so that a scripted LLM standing in for the hypothesis model can
// tell that call from other model calls: a scripted LLM recognises the
// hypothesis call by req.ResponseSchema.Name ==
// memretrieve.HypothesisSchemaName.
const HypothesisSchemaName = "memory_hypotheses"

// hypothesisSchema is the structured-output schema of the reply.
var hypothesisSchema = &memcore.Schema{
	Name:        HypothesisSchemaName,
	Description: "Sentences a relevant stored memory might contain.",
	Definition: json.RawMessage(`{"type":"object","properties":{"hypotheses":{"type":"array","items":{"type":"string"}}},` +
		`"required":["hypotheses"],"additionalProperties":false}`),
}

// maxHypothesisRunes bounds one hypothesis; a longer one is cut.
const maxHypothesisRunes = 500

// maxReplyBytes bounds the part of a hypothesis reply that is read. An
// honest reply is at most ten sentences of at most maxHypothesisRunes — a
// few kilobytes —, so 64 KB holds any of them with room to spare; the rest
// of a longer reply is ignored, which keeps the parsing of a flooded reply
// (tens of megabytes arriving at once) within the turn's budget.
const maxReplyBytes = 64 << 10

// capReply returns the first maxReplyBytes of reply, cut on a rune
// boundary.
func capReply(reply string) string {
	if len(reply) <= maxReplyBytes {
		return reply
	}
	i := maxReplyBytes
	for i > 0 && !utf8.RuneStart(reply[i]) {
		i--
	}
	return reply[:i]
}

// hypothesisRequest builds the one completion request of a turn.
func hypothesisRequest(cfg Config, window []memcore.Message) memcore.CompletionRequest {
	temp := 0.0
	return memcore.CompletionRequest{
		Model:          cfg.HypothesisModel,
		System:         fmt.Sprintf(hypothesisSystemPrompt, cfg.HypothesisCount),
		Messages:       []memcore.Message{{Role: memcore.RoleUser, Content: transcript(window)}},
		MaxTokens:      64 + 80*cfg.HypothesisCount,
		Temperature:    &temp,
		ResponseSchema: hypothesisSchema,
	}
}

// transcript renders the window as one text, oldest first, with role labels.
func transcript(window []memcore.Message) string {
	var b strings.Builder
	b.WriteString("Conversation, oldest message first:\n")
	for _, m := range window {
		label := "User"
		if m.Role == memcore.RoleAssistant {
			label = "Assistant"
		}
		fmt.Fprintf(&b, "\n%s: %s\n", label, m.Content)
	}
	return b.String()
}

// windowText is the window as ModeIdentity embeds it: the messages' text,
// oldest first, separated by blank lines.
func windowText(window []memcore.Message) string {
	parts := make([]string, len(window))
	for i, m := range window {
		parts[i] = m.Content
	}
	return strings.Join(parts, "\n\n")
}

// parseHypotheses extracts at most n hypotheses from a reply of the
// hypothesis model, tolerating what models do to JSON: code fences, leading
// or trailing prose, a bare array, another key name, a reply cut short. A
// reply that holds no JSON at all is read as one hypothesis per line, with
// bullets and numbering removed. The results are single-line, trimmed,
// distinct (ignoring case) and non-empty.
func parseHypotheses(reply string, n int) []string {
	text := strings.TrimSpace(stripFences(reply))
	if hs, ok := jsonHypotheses(text); ok {
		return cleanHypotheses(hs, n)
	}
	if strings.HasPrefix(text, "{") || strings.HasPrefix(text, "[") {
		if hs := quotedStrings(text); len(hs) > 0 {
			return cleanHypotheses(hs, n)
		}
	}
	return cleanHypotheses(lineHypotheses(text), n)
}

// stripFences returns the inside of the first ``` code fence of s, or s.
func stripFences(s string) string {
	i := strings.Index(s, "```")
	if i < 0 {
		return s
	}
	rest := s[i+3:]
	// Drop the info string ("json") on the opening line.
	if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
		rest = rest[nl+1:]
	} else {
		return s
	}
	if j := strings.Index(rest, "```"); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// maxJSONStarts bounds how many '{' or '[' positions are tried as the start
// of a JSON document.
const maxJSONStarts = 16

// jsonHypotheses finds the first JSON document in text that carries
// hypotheses and returns them. ok is false when there is none; an object
// with an explicit empty "hypotheses" list is ok with no hypotheses.
func jsonHypotheses(text string) (hs []string, ok bool) {
	tried := 0
	for i := 0; i < len(text) && tried < maxJSONStarts; i++ {
		if text[i] != '{' && text[i] != '[' {
			continue
		}
		tried++
		var v any
		if err := json.NewDecoder(strings.NewReader(text[i:])).Decode(&v); err != nil {
			continue
		}
		hs, explicit := stringsOf(v)
		if len(hs) > 0 || explicit {
			return hs, true
		}
	}
	return nil, false
}

// stringsOf collects the hypotheses in a decoded JSON value. explicit
// reports an object with a "hypotheses" key, which is taken at its word
// even when empty.
func stringsOf(v any) (hs []string, explicit bool) {
	switch t := v.(type) {
	case []any:
		return arrayStrings(t), false
	case map[string]any:
		return objectStrings(t)
	}
	return nil, false
}

// arrayStrings returns the hypotheses of a JSON array: its strings, and the
// text of its objects (see firstString).
func arrayStrings(a []any) []string {
	var hs []string
	for _, e := range a {
		switch e := e.(type) {
		case string:
			hs = append(hs, e)
		case map[string]any:
			if s := firstString(e); s != "" {
				hs = append(hs, s)
			}
		}
	}
	return hs
}

// objectStrings returns the hypotheses of a JSON object: those under its
// "hypotheses" key in any case (explicit), else those of the first key,
// sorted for determinism, whose value is a list holding some, else the
// object's string values.
func objectStrings(m map[string]any) (hs []string, explicit bool) {
	keys := sortedKeys(m)
	for _, k := range keys {
		if strings.EqualFold(k, "hypotheses") {
			hs, _ := stringsOf(m[k])
			return hs, true
		}
	}
	for _, k := range keys {
		if l, ok := m[k].([]any); ok {
			if hs := arrayStrings(l); len(hs) > 0 {
				return hs, false
			}
		}
	}
	for _, k := range keys {
		if s, ok := m[k].(string); ok {
			hs = append(hs, s)
		}
	}
	return hs, false
}

// firstString returns the text of an object standing for one hypothesis:
// its "text", "hypothesis", "sentence" or "content" field, else its first
// string field by key order.
func firstString(m map[string]any) string {
	for _, k := range []string{"text", "hypothesis", "sentence", "content"} {
		if s, ok := m[k].(string); ok {
			return s
		}
	}
	for _, k := range sortedKeys(m) {
		if s, ok := m[k].(string); ok {
			return s
		}
	}
	return ""
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// jsonString matches a complete JSON string literal.
var jsonString = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// quotedStrings recovers the complete string values of a JSON document that
// does not parse, typically one cut short by the token limit. Strings
// followed by ':' are keys and are skipped.
func quotedStrings(text string) []string {
	var out []string
	for _, loc := range jsonString.FindAllStringIndex(text, -1) {
		if rest := strings.TrimLeft(text[loc[1]:], " \t\r\n"); strings.HasPrefix(rest, ":") {
			continue
		}
		lit := text[loc[0]:loc[1]]
		var s string
		if err := json.Unmarshal([]byte(lit), &s); err != nil {
			if s, err = strconv.Unquote(lit); err != nil {
				s = lit[1 : len(lit)-1]
			}
		}
		out = append(out, s)
	}
	return out
}

// listMarker matches a bullet or a number at the start of a line: "- ",
// "* ", "• ", "1. ", "2) ", "(3) ", "[4] ", "Hypothesis 5: ".
var listMarker = regexp.MustCompile(`^(?:[-*•+–—]+\s*|\(?\[?\d{1,3}[.):\]]\s*|(?i:hypothesis|sentence)\s*\d{0,3}\s*[:.)-]\s*)`)

// lineHypotheses reads a reply with no JSON as one hypothesis per line.
// Lines that introduce a list (ending in ':') and lines of bare punctuation
// are skipped.
func lineHypotheses(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		for i := 0; i < 3; i++ { // "1. - text" has two markers
			stripped := strings.TrimSpace(listMarker.ReplaceAllString(line, ""))
			if stripped == line {
				break
			}
			line = stripped
		}
		if line == "" || strings.HasSuffix(line, ":") || !hasLetter(line) {
			continue
		}
		out = append(out, line)
	}
	return out
}

func hasLetter(s string) bool {
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > utf8.RuneSelf {
			return true
		}
	}
	return false
}

// cleanHypotheses makes each hypothesis one trimmed line without wrapping
// quotes or a trailing comma, cuts it to maxHypothesisRunes, and keeps the
// first n distinct non-empty ones.
func cleanHypotheses(hs []string, n int) []string {
	out := make([]string, 0, min(len(hs), n))
	seen := make(map[string]bool)
	for _, h := range hs {
		if len(out) == n {
			break
		}
		h = strings.Join(strings.Fields(strings.ToValidUTF8(h, "")), " ")
		h = strings.TrimSuffix(h, ",")
		h = strings.TrimSpace(strings.Trim(h, "\"'`“”"))
		if !hasLetter(h) {
			continue
		}
		if utf8.RuneCountInString(h) > maxHypothesisRunes {
			h = string([]rune(h)[:maxHypothesisRunes])
		}
		key := strings.ToLower(h)
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, h)
	}
	return out
}

// hypotheses asks the hypothesis model, in one call, for sentences a memory
// relevant to the window might contain. The reply is read (its first
// maxReplyBytes) within ctx too, so a flooded reply cannot hold the turn.
func (e *Engine) hypotheses(ctx context.Context, win []memcore.Message) ([]string, *skipped) {
	req, llm, n := hypothesisRequest(e.cfg, win), e.llm, e.cfg.HypothesisCount
	hs, err := callWithin(ctx, func(ctx context.Context) ([]string, error) {
		resp, err := llm.Complete(ctx, req)
		if err != nil {
			return nil, err
		}
		if resp == nil {
			return nil, fmt.Errorf("%w: nil response", memcore.ErrInvalidResponse)
		}
		return parseHypotheses(capReply(resp.Text), n), nil
	})
	if err != nil {
		return nil, &skipped{kind: SkipHypothesisError, reason: "the hypothesis model failed", err: err}
	}
	if len(hs) == 0 {
		return nil, &skipped{kind: SkipHypothesisError, reason: "the hypothesis model's reply holds no hypotheses",
			err: fmt.Errorf("%w: the reply holds no hypotheses", memcore.ErrInvalidResponse)}
	}
	return hs, nil
}
