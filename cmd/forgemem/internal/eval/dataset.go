package eval

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/jsonlines"
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
	// Relevant lists the ids of the memories the query should find. Empty
	// makes the query off topic: nothing in the collection answers it, and
	// the right injection for it is none.
	Relevant []string `json:"relevant"`
	// Added is set on the queries [AddOffTopic] adds, never read from a
	// dataset, so that their figures can be told from the collection's own
	// (Report.AddedOffTopic).
	Added bool `json:"-"`
}

// Message is one message of a query conversation.
type Message struct {
	// Role is "user" or "assistant".
	Role    memcore.Role `json:"role"`
	Content string       `json:"content"`
}

// OffTopic reports whether the query is off topic: it has no relevant
// memories.
func (q Query) OffTopic() bool { return len(q.Relevant) == 0 }

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
// line and nothing else on it but space; blank lines are skipped, and a
// UTF-8 byte order mark at the start. Every collection is checked (see
// [Collection.Validate]); the first problem is returned, naming its line
// and wrapping [ErrDataset], and saying what is wrong and what is expected
// in the file's terms: the field, by its name in the file, and the memory,
// query or message by its place in its list. A line that is not exactly
// one JSON value (a second value after it, or the "]" of an array cut
// into lines) wraps jsonlines.ErrNotOneValue too.
func ReadDataset(r io.Reader) ([]Collection, error) {
	lines := jsonlines.NewReader(r)
	var out []Collection
	names := make(map[string]int)
	for {
		line, err := lines.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading the dataset: %w", err)
		}
		var c Collection
		if derr := decodeLine(line, &c, collectionShape, collectionLine); derr != nil {
			return nil, fmt.Errorf("line %d: %w: %w", line.N, ErrDataset, derr)
		}
		if verr := c.Validate(); verr != nil {
			return nil, fmt.Errorf("line %d: %w", line.N, verr)
		}
		if prev, dup := names[c.Name]; dup {
			return nil, fmt.Errorf("line %d: %w: collection %q is also on line %d", line.N, ErrDataset, c.Name, prev)
		}
		names[c.Name] = line.N
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no collection", ErrDataset)
	}
	return out, nil
}

// WriteDataset writes collections as a dataset file, one per line.
func WriteDataset(w io.Writer, collections []Collection) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, c := range collections {
		if err := enc.Encode(c); err != nil {
			return fmt.Errorf("writing the dataset: %w", err)
		}
	}
	return nil
}

// Validate reports the first problem of c, wrapping [ErrDataset]: a
// missing name, no memories or queries, an empty or repeated id, a memory
// without content or with an unknown category or scope, a query with both
// or neither of text and messages, a message of another role than user or
// assistant, or a relevant id that is not a memory of the collection or is
// listed twice. A query without relevant memories is off topic.
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
		if msg := m.check(i, mems); msg != "" {
			return bad("%s", msg)
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
		}
		queries[q.ID] = true
		if msg := q.check(mems); msg != "" {
			return bad("query %q: %s", q.ID, msg)
		}
	}
	return nil
}

// check says what is wrong with m, the memory at index i of a collection
// whose earlier memory ids are seen, or "" when nothing is: no id or one
// seen, no content, an unknown category or scope.
func (m *Memory) check(i int, seen map[string]bool) string {
	switch {
	case m.ID == "":
		return fmt.Sprintf("memory %d has no id", i+1)
	case seen[m.ID]:
		return fmt.Sprintf("memory id %q is repeated", m.ID)
	case strings.TrimSpace(m.Content) == "":
		return fmt.Sprintf("memory %q has no content", m.ID)
	case m.Category != "" && !m.Category.Valid():
		return fmt.Sprintf("memory %q: unknown category %q (want %s)", m.ID, m.Category, categories())
	case m.Scope != "" && !m.Scope.Valid():
		return fmt.Sprintf("memory %q: unknown scope %q (want repo or user)", m.ID, m.Scope)
	}
	return ""
}

// check says what is wrong with q, a query of a collection whose memory
// ids are mems, or "" when nothing is: both or neither of text and
// messages, a message of another role than user or assistant, a relevant
// id that is not in mems or is listed twice.
func (q *Query) check(mems map[string]bool) string {
	if (q.Text == "") == (len(q.Messages) == 0) {
		return `want exactly one of "text" and "messages"`
	}
	for j, m := range q.Messages {
		if m.Role != memcore.RoleUser && m.Role != memcore.RoleAssistant {
			return fmt.Sprintf("message %d has role %q; want user or assistant", j+1, m.Role)
		}
	}
	seen := make(map[string]bool, len(q.Relevant))
	for _, id := range q.Relevant {
		if !mems[id] {
			return fmt.Sprintf("relevant memory %q is not in the collection", id)
		}
		if seen[id] {
			return fmt.Sprintf("relevant memory %q is listed twice", id)
		}
		seen[id] = true
	}
	return ""
}

// ReadOffTopic reads a file of off-topic queries: JSON Lines, one [Query]
// per line and nothing else on it but space, each without relevant
// memories (an empty or absent "relevant"); blank lines are skipped, and a
// UTF-8 byte order mark at the start. The first problem is returned, naming its line and wrapping
// [ErrDataset], in the file's terms as [ReadDataset]'s are. [AddOffTopic]
// adds them to every collection of a dataset.
func ReadOffTopic(r io.Reader) ([]Query, error) {
	lines := jsonlines.NewReader(r)
	var out []Query
	ids := make(map[string]int)
	for {
		line, err := lines.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading the off-topic queries: %w", err)
		}
		q, qerr := decodeOffTopic(line, ids)
		if qerr != nil {
			return nil, fmt.Errorf("off-topic queries: line %d: %w", line.N, qerr)
		}
		ids[q.ID] = line.N
		out = append(out, q)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("off-topic queries: %w: no query", ErrDataset)
	}
	return out, nil
}

// decodeOffTopic decodes one line of an off-topic file and checks it: an
// id not in ids, no relevant memories, and a text or messages.
func decodeOffTopic(line jsonlines.Line, ids map[string]int) (Query, error) {
	var q Query
	if err := decodeLine(line, &q, offTopicShape, offTopicLine); err != nil {
		return q, fmt.Errorf("%w: %w", ErrDataset, err)
	}
	switch prev, dup := ids[q.ID]; {
	case q.ID == "":
		return q, fmt.Errorf("%w: a query without an id", ErrDataset)
	case dup:
		return q, fmt.Errorf("%w: query id %q is also on line %d", ErrDataset, q.ID, prev)
	case len(q.Relevant) > 0:
		return q, fmt.Errorf("%w: query %q lists relevant memories; an off-topic query has none", ErrDataset, q.ID)
	}
	if msg := q.check(nil); msg != "" {
		return q, fmt.Errorf("%w: query %q: %s", ErrDataset, q.ID, msg)
	}
	q.Relevant = []string{}
	return q, nil
}

// AddOffTopic returns the collections with the off-topic queries added to
// each, after its own queries and marked Added, so that one set of
// off-topic queries serves every collection of a dataset. A query id that a collection already
// uses is an error wrapping [ErrDataset].
func AddOffTopic(collections []Collection, offTopic []Query) ([]Collection, error) {
	out := make([]Collection, len(collections))
	for i, c := range collections {
		ids := make(map[string]bool, len(c.Queries))
		for _, q := range c.Queries {
			ids[q.ID] = true
		}
		for _, q := range offTopic {
			if ids[q.ID] {
				return nil, fmt.Errorf("%w: collection %q already has a query %q (rename the off-topic one)", ErrDataset, c.Name, q.ID)
			}
		}
		c.Queries = slices.Clip(c.Queries)
		for _, q := range offTopic {
			q.Added = true
			c.Queries = append(c.Queries, q)
		}
		out[i] = c
	}
	return out, nil
}
