package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/forgemem/forgemem/memcapture"
	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memcore/redact"
	"github.com/forgemem/forgemem/providers/fake"
)

// classifierModel is the model name the pipeline is given; the scripted
// LLM reports it back.
const classifierModel = "scripted-classifier"

// newModels returns the offline stand-ins for the demo's two models: a
// scripted LLM playing the capture classifier of the sessions, and the
// hashing embedder that retrieval and capture search with. It is the only
// place the fakes are made.
func newModels(sessions []session) (*fake.LLM, *fake.Embedder, error) {
	llm, err := fake.NewLLM(fake.LLMConfig{ReplyFunc: newClassifier(sessions).reply})
	if err != nil {
		return nil, nil, err
	}
	emb, err := fake.NewEmbedder(fake.EmbedderConfig{})
	if err != nil {
		return nil, nil, err
	}
	return llm, emb, nil
}

// rule is one memory the scripted classifier keeps once a user message is
// in the conversation.
type rule struct {
	// said is the user message that makes the memory worth keeping.
	said string
	mem  memorySpec
}

// classifier answers the capture pipeline's classifier calls the way a
// model would, from the request alone: it reads the conversation and the
// lists of existing memories of the prompt, keeps the memories whose user
// message it sees unless the list already holds them, quoting that message
// as their evidence, and finds the id a memory supersedes by looking for a
// phrase in that list. It keeps no
// state, so however capture passes fall (a turn trigger may replace one
// still waiting), the memories written are the same.
type classifier struct {
	rules []rule
}

func newClassifier(sessions []session) *classifier {
	c := &classifier{}
	for _, s := range sessions {
		for _, t := range s.turns {
			for _, m := range t.remember {
				c.rules = append(c.rules, rule{said: t.user, mem: m})
			}
		}
	}
	return c
}

// replyItem is one memory in the classifier's reply format.
type replyItem struct {
	Content    string         `json:"content"`
	Scope      string         `json:"scope"`
	Category   string         `json:"category"`
	Supersedes string         `json:"supersedes"`
	Related    []replyRelated `json:"related"`
	Evidence   replyEvidence  `json:"evidence"`
}

// replyEvidence is where the conversation states a memory: the numbers of
// its messages and a quote.
type replyEvidence struct {
	Messages []int  `json:"messages"`
	Quote    string `json:"quote"`
}

type replyRelated struct {
	ID           string `json:"id"`
	Relationship string `json:"relationship"`
}

// The prompt's section headings (see the memcapture documentation): the
// existing memories are listed before the conversation, and those added
// since that list was made after it.
const (
	conversationHeading = "CONVERSATION (oldest first):"
	addedSinceHeading   = "MEMORIES ADDED SINCE"
)

// listedLine is a line of the lists of existing memories:
// "- [id] (scope/category) first line".
var listedLine = regexp.MustCompile(`^- \[([^\]]+)\] \(([^/)]+)/([^)]+)\) (.*)$`)

// listed is an existing memory as the prompt lists it.
type listed struct {
	id, scope, category, title string
}

// reply implements [fake.ReplyFunc].
func (c *classifier) reply(_ context.Context, req memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
	if req.ResponseSchema == nil || req.ResponseSchema.Name != memcapture.ClassifierSchemaName {
		return nil, fmt.Errorf("%w: the demo's scripted model only classifies", memcore.ErrInvalidRequest)
	}
	if len(req.Messages) == 0 {
		return nil, fmt.Errorf("%w: no message", memcore.ErrInvalidRequest)
	}
	conversation, existing := splitPrompt(req.Messages[len(req.Messages)-1].Content)
	items := []replyItem{}
	for _, r := range c.rules {
		// The conversation reaches the model redacted, as capture sends it.
		said, _ := redact.Text(r.said)
		if !strings.Contains(conversation, "User: "+said) || isListed(existing, r.mem) {
			continue
		}
		items = append(items, replyItem{
			Content:    r.mem.content,
			Scope:      string(r.mem.scope),
			Category:   string(r.mem.category),
			Supersedes: supersededID(existing, r.mem),
			Related:    []replyRelated{},
			Evidence:   replyEvidence{Messages: []int{}, Quote: said},
		})
	}
	text, err := json.Marshal(map[string][]replyItem{"memories": items})
	if err != nil {
		return nil, err
	}
	return &memcore.CompletionResponse{Text: string(text)}, nil
}

// splitPrompt returns the conversation section of the classifier's prompt
// and the memories it lists: those of the EXISTING MEMORIES list before
// the conversation and those of the MEMORIES ADDED SINCE list after it.
func splitPrompt(prompt string) (string, []listed) {
	existing, rest, _ := strings.Cut(prompt, conversationHeading)
	conversation, added, _ := strings.Cut(rest, "\n"+addedSinceHeading)
	var out []listed
	for _, line := range strings.Split(existing+"\n"+added, "\n") {
		if m := listedLine.FindStringSubmatch(line); m != nil {
			out = append(out, listed{id: m[1], scope: m[2], category: m[3], title: m[4]})
		}
	}
	return conversation, out
}

// isListed reports whether a memory with m's first line is listed already.
func isListed(existing []listed, m memorySpec) bool {
	title := firstLine(m.content)
	for _, l := range existing {
		if l.scope == string(m.scope) && l.title == title {
			return true
		}
	}
	return false
}

// supersededID returns the id of the listed memory of m's scope and
// category whose line holds m's supersedes phrase, or "".
func supersededID(existing []listed, m memorySpec) string {
	if m.supersedes == "" {
		return ""
	}
	for _, l := range existing {
		if l.scope == string(m.scope) && l.category == string(m.category) &&
			strings.Contains(strings.ToLower(l.title), strings.ToLower(m.supersedes)) {
			return l.id
		}
	}
	return ""
}

// firstLine is the first line of s, trimmed.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(line)
}
