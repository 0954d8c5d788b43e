package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/forgemem/forgemem/memcore"
)

// ErrDataset is wrapped by every error about the content of a dataset file.
var ErrDataset = errors.New("invalid evaluation dataset")

// The defaults of a dataset memory's optional fields.
const (
	DefaultCategory = memcore.CategoryUserFacts
	DefaultScope    = memcore.ScopeUser
)

// Collection is one line of a dataset file: memories, and queries each
// ranked against those memories alone.
type Collection struct {
	// Name names the collection in reports and errors.
	Name     string   `json:"collection"`
	Memories []Memory `json:"memories"`
	Queries  []Query  `json:"queries"`
}

// Memory is one memory of a collection.
type Memory struct {
	// ID is any string, unique in the collection; queries name it in
	// Relevant. The evaluation gives each memory a memory id of its own.
	ID string `json:"id"`
	// Content is the memory's text.
	Content string `json:"content"`
	// Category is a memcore category; empty means user-facts.
	Category memcore.Category `json:"category,omitempty"`
	// Scope is repo or user; empty means user.
	Scope memcore.Scope `json:"scope,omitempty"`
}

// Query is one query of a collection: a text, or a conversation.
type Query struct {
	// ID is any string, unique in the collection.
	ID string `json:"id"`
	// Text is the query as one user message. Exactly one of Text and
	// Messages is set.
	Text string `json:"text,omitempty"`
	// Messages is the query as a conversation, oldest message first: the
	// window a turn's retrieval gets.
	Messages []Message `json:"messages,omitempty"`
	// Relevant lists the ids of the memories the query should find; at
	// least one.
	Relevant []string `json:"relevant"`
}

// Message is one message of a query conversation.
type Message struct {
	// Role is "user" or "assistant".
	Role    memcore.Role `json:"role"`
	Content string       `json:"content"`
}

// Window returns the query as the conversation window retrieval gets.
func (q Query) Window() []memcore.Message {
	if q.Text != "" {
		return []memcore.Message{{Role: memcore.RoleUser, Content: q.Text}}
	}
	out := make([]memcore.Message, len(q.Messages))
	for i, m := range q.Messages {
		out[i] = memcore.Message{Role: m.Role, Content: m.Content}
	}
	return out
}

// ReadDataset reads a dataset file: JSON Lines, one [Collection] per
// line; blank lines are skipped. Every collection is checked (see
// [Collection.Validate]); the first problem is returned, naming its line
// and wrapping [ErrDataset].
func ReadDataset(r io.Reader) ([]Collection, error) {
	br := bufio.NewReader(r)
	var out []Collection
	names := make(map[string]int)
	for line := 1; ; line++ {
		text, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("eval: reading the dataset: %w", err)
		}
		if t := bytes.TrimSpace(text); len(t) > 0 {
			var c Collection
			dec := json.NewDecoder(bytes.NewReader(t))
			dec.DisallowUnknownFields()
			if derr := dec.Decode(&c); derr != nil {
				return nil, fmt.Errorf("eval: line %d: %w: %v", line, ErrDataset, derr)
			}
			if dec.More() {
				return nil, fmt.Errorf("eval: line %d: %w: more than one JSON value on the line", line, ErrDataset)
			}
			if verr := c.Validate(); verr != nil {
				return nil, fmt.Errorf("eval: line %d: %w", line, verr)
			}
			if prev, dup := names[c.Name]; dup {
				return nil, fmt.Errorf("eval: line %d: %w: collection %q is also on line %d", line, ErrDataset, c.Name, prev)
			}
			names[c.Name] = line
			out = append(out, c)
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("eval: %w: no collection", ErrDataset)
	}
	return out, nil
}

// WriteDataset writes collections as a dataset file, one per line.
func WriteDataset(w io.Writer, collections []Collection) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, c := range collections {
		if err := enc.Encode(c); err != nil {
			return fmt.Errorf("eval: writing the dataset: %w", err)
		}
	}
	return nil
}

// Validate reports the first problem of c, wrapping [ErrDataset]: a
// missing name, no memories or queries, an empty or repeated id, a memory
// without content or with an unknown category or scope, a query with both
// or neither of text and messages, a message of another role than user or
// assistant, or a relevant id that is not a memory of the collection.
func (c *Collection) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: collection %q: %s", ErrDataset, c.Name, fmt.Sprintf(format, args...))
	}
	if strings.TrimSpace(c.Name) == "" {
		return fmt.Errorf("%w: a collection without a name (\"collection\")", ErrDataset)
	}
	if len(c.Memories) == 0 || len(c.Queries) == 0 {
		return bad("%d memories and %d queries; want at least one of each", len(c.Memories), len(c.Queries))
	}
	mems := make(map[string]bool, len(c.Memories))
	for i, m := range c.Memories {
		switch {
		case m.ID == "":
			return bad("memory %d has no id", i+1)
		case mems[m.ID]:
			return bad("memory id %q is repeated", m.ID)
		case strings.TrimSpace(m.Content) == "":
			return bad("memory %q has no content", m.ID)
		case m.Category != "" && !m.Category.Valid():
			return bad("memory %q: unknown category %q (want one of %v)", m.ID, m.Category, memcore.Categories())
		case m.Scope != "" && !m.Scope.Valid():
			return bad("memory %q: unknown scope %q (want repo or user)", m.ID, m.Scope)
		}
		mems[m.ID] = true
	}
	queries := make(map[string]bool, len(c.Queries))
	for i, q := range c.Queries {
		switch {
		case q.ID == "":
			return bad("query %d has no id", i+1)
		case queries[q.ID]:
			return bad("query id %q is repeated", q.ID)
		case (q.Text == "") == (len(q.Messages) == 0):
			return bad("query %q: want exactly one of \"text\" and \"messages\"", q.ID)
		case len(q.Relevant) == 0:
			return bad("query %q has no relevant memories", q.ID)
		}
		queries[q.ID] = true
		for j, m := range q.Messages {
			if m.Role != memcore.RoleUser && m.Role != memcore.RoleAssistant {
				return bad("query %q: message %d has role %q; want user or assistant", q.ID, j+1, m.Role)
			}
		}
		seen := make(map[string]bool, len(q.Relevant))
		for _, id := range q.Relevant {
			if !mems[id] {
				return bad("query %q: relevant memory %q is not in the collection", q.ID, id)
			}
			if seen[id] {
				return bad("query %q: relevant memory %q is listed twice", q.ID, id)
			}
			seen[id] = true
		}
	}
	return nil
}
