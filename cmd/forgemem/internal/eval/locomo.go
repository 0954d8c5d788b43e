package eval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/forgemem/forgemem/memcore"
)

// ErrLoCoMo is wrapped by the errors of [LoCoMo] about its input.
var ErrLoCoMo = errors.New("invalid LoCoMo data")

// locomoAdversarial is the category of LoCoMo's adversarial questions:
// they ask about what the conversation never says, so no memory answers
// them.
const locomoAdversarial = 5

// LoCoMoSkipped counts the questions of a LoCoMo file that [LoCoMo] leaves
// out of its dataset.
type LoCoMoSkipped struct {
	// Adversarial counts the questions of category 5, about what the
	// conversation never says.
	Adversarial int
	// Uncited counts the questions whose evidence turns no observation
	// cites: no memory of the dataset is the right answer to them.
	Uncited int
}

// LoCoMo converts the LoCoMo benchmark's file (locomo10.json: a JSON array
// of conversations, each with its sample_id, its observations and its
// questions, qa) into a dataset of one collection per conversation, named
// by its sample_id:
//
//   - the collection's memories are the conversation's observations — the
//     facts about each speaker the benchmark's authors drew from each
//     session, such as "Caroline attended an LGBTQ support group" — with
//     category user-facts and scope user, each with the id
//     "S<session>:<speaker>:<n>" (its n-th observation of the speaker in
//     that session);
//   - each question of categories 1–4 is a query, "qa-<n>" (its place in
//     the conversation's qa list), whose relevant memories are the
//     observations that cite one of its evidence turns ("D<session>:<turn>").
//
// Adversarial questions (category 5) and questions whose evidence no
// observation cites are left out and counted in LoCoMoSkipped.
func LoCoMo(data []byte) ([]Collection, LoCoMoSkipped, error) {
	var skipped LoCoMoSkipped
	t := bytes.TrimSpace(data)
	if len(t) == 0 {
		return nil, skipped, fmt.Errorf("%w: the file is empty", ErrLoCoMo)
	}
	if t[0] != '[' {
		return nil, skipped, fmt.Errorf("%w: want a JSON array of conversations, as in locomo10.json; this file starts with %q (a converted dataset goes to --dataset)", ErrLoCoMo, clipJSON(t[:min(len(t), 20)]))
	}
	var samples []locomoSample
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&samples); err != nil {
		return nil, skipped, fmt.Errorf("%w: %s", ErrLoCoMo, decodeProblem(err))
	}
	if dec.More() {
		return nil, skipped, fmt.Errorf("%w: more than one JSON value in the file", ErrLoCoMo)
	}
	if len(samples) == 0 {
		return nil, skipped, fmt.Errorf("%w: no conversation", ErrLoCoMo)
	}
	out := make([]Collection, 0, len(samples))
	names := make(map[string]int, len(samples))
	for i, s := range samples {
		c, err := s.collection(&skipped)
		if err != nil {
			return nil, skipped, fmt.Errorf("%w: conversation %d (%q): %w", ErrLoCoMo, i+1, s.SampleID, err)
		}
		if prev, dup := names[c.Name]; dup {
			return nil, skipped, fmt.Errorf("%w: conversations %d and %d are both %q", ErrLoCoMo, prev, i+1, c.Name)
		}
		names[c.Name] = i + 1
		out = append(out, c)
	}
	return out, skipped, nil
}

// locomoSample is one conversation of the LoCoMo file, as far as the
// conversion reads it.
type locomoSample struct {
	SampleID string `json:"sample_id"`
	// Observation holds, by "session_<n>_observation", by speaker, the
	// observations: each [text, evidence], the evidence a turn id such as
	// "D1:3", several in one string, or a list of them.
	Observation map[string]map[string][]json.RawMessage `json:"observation"`
	QA          []struct {
		Question string          `json:"question"`
		Evidence json.RawMessage `json:"evidence"`
		Category int             `json:"category"`
	} `json:"qa"`
}

// sessionKey matches an observation key and captures its session number.
var sessionKey = regexp.MustCompile(`^session_(\d+)_observation$`)

// collection converts s, counting in skipped the questions left out.
func (s *locomoSample) collection(skipped *LoCoMoSkipped) (Collection, error) {
	c := Collection{Name: strings.TrimSpace(s.SampleID)}
	if c.Name == "" {
		return c, errors.New("no sample_id")
	}
	citing, err := s.memories(&c)
	if err != nil {
		return c, err
	}
	for i, q := range s.QA {
		n := i + 1
		if q.Category < 1 || q.Category > locomoAdversarial {
			return c, fmt.Errorf("question %d: category %d, want 1–5", n, q.Category)
		}
		if q.Category == locomoAdversarial {
			skipped.Adversarial++
			continue
		}
		if strings.TrimSpace(q.Question) == "" {
			return c, fmt.Errorf("question %d has no text", n)
		}
		turns, err := evidenceTurns(q.Evidence)
		if err != nil {
			return c, fmt.Errorf("question %d: evidence: %w", n, err)
		}
		relevant := make(map[string]bool)
		for _, t := range turns {
			for _, id := range citing[t] {
				relevant[id] = true
			}
		}
		if len(relevant) == 0 {
			skipped.Uncited++
			continue
		}
		c.Queries = append(c.Queries, Query{ID: "qa-" + strconv.Itoa(n), Text: strings.TrimSpace(q.Question),
			Relevant: slices.Sorted(maps.Keys(relevant))})
	}
	if err := c.Validate(); err != nil {
		return c, err
	}
	return c, nil
}

// memories adds the observations of s to c as memories, sessions in order
// and speakers by name, and returns the ids of the memories citing each
// evidence turn.
func (s *locomoSample) memories(c *Collection) (map[string][]string, error) {
	type session struct {
		n   int
		key string
	}
	var sessions []session
	for key := range s.Observation {
		m := sessionKey.FindStringSubmatch(key)
		if m == nil {
			return nil, fmt.Errorf("observation key %q, want session_<n>_observation", key)
		}
		n, err := strconv.Atoi(m[1])
		if err != nil {
			return nil, fmt.Errorf("observation key %q: %w", key, err)
		}
		sessions = append(sessions, session{n, key})
	}
	slices.SortFunc(sessions, func(a, b session) int { return a.n - b.n })
	citing := make(map[string][]string)
	for _, ses := range sessions {
		bySpeaker := s.Observation[ses.key]
		for _, speaker := range slices.Sorted(maps.Keys(bySpeaker)) {
			for i, raw := range bySpeaker[speaker] {
				id := fmt.Sprintf("S%d:%s:%d", ses.n, speaker, i+1)
				text, turns, err := observation(raw)
				if err != nil {
					return nil, fmt.Errorf("observation %s: %w", id, err)
				}
				c.Memories = append(c.Memories, Memory{ID: id, Content: text,
					Category: memcore.CategoryUserFacts, Scope: memcore.ScopeUser})
				for _, t := range turns {
					citing[t] = append(citing[t], id)
				}
			}
		}
	}
	return citing, nil
}

// observation reads one observation, [text, evidence].
func observation(raw json.RawMessage) (string, []string, error) {
	var item []json.RawMessage
	if err := json.Unmarshal(raw, &item); err != nil || len(item) != 2 {
		return "", nil, fmt.Errorf("want [text, evidence], got %s", clipJSON(raw))
	}
	var text string
	if err := json.Unmarshal(item[0], &text); err != nil || strings.TrimSpace(text) == "" {
		return "", nil, fmt.Errorf("want a text first, got %s", clipJSON(item[0]))
	}
	turns, err := evidenceTurns(item[1])
	if err != nil {
		return "", nil, err
	}
	return strings.TrimSpace(text), turns, nil
}

// turnID matches one evidence turn, "D<session>:<turn>" (a few of the
// benchmark's are written "D:<session>:<turn>").
var turnID = regexp.MustCompile(`^D:?(\d+):(\d+)$`)

// evidenceTurns reads evidence — a string or a list of strings, each
// holding turn ids separated by commas, semicolons or spaces — and returns
// its turn ids as "D<session>:<turn>". A part that is no turn id (the
// benchmark has a lone "D") is passed over.
func evidenceTurns(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var parts []string
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		parts = []string{one}
	} else if err := json.Unmarshal(raw, &parts); err != nil {
		return nil, fmt.Errorf("want a string or a list of strings, got %s", clipJSON(raw))
	}
	var out []string
	for _, p := range parts {
		for _, f := range strings.FieldsFunc(p, func(r rune) bool { return r == ',' || r == ';' || r == ' ' || r == '\t' || r == '\n' }) {
			if m := turnID.FindStringSubmatch(f); m != nil {
				out = append(out, "D"+m[1]+":"+m[2])
			}
		}
	}
	return out, nil
}

// decodeProblem says what is wrong with a file that does not decode,
// without the Go types a json.UnmarshalTypeError names.
func decodeProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return fmt.Sprintf("a JSON %s where a list of conversations belongs", te.Value)
		}
		return fmt.Sprintf("%s is a JSON %s, which it cannot be (at byte %d)", te.Field, te.Value, te.Offset)
	}
	return "not JSON: " + err.Error()
}

// clipJSON is raw cut short for an error message.
func clipJSON(raw json.RawMessage) string {
	const most = 80
	if len(raw) <= most {
		return string(raw)
	}
	return string(raw[:most]) + "…"
}
