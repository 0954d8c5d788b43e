package memcapture

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/fake"
)

// fastRetry keeps retry back-offs short in tests.
var fastRetry = memcore.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}

// t0 is the base time of seeded memories.
var t0 = time.Date(2025, 1, 15, 10, 0, 0, 0, time.UTC)

// eachStore runs f once against a MemStore and once against a FileStore in
// a temporary folder.
func eachStore(t *testing.T, f func(t *testing.T, s memcore.MemoryStore)) {
	t.Helper()
	t.Run("MemStore", func(t *testing.T) { f(t, memcore.NewMemStore()) })
	t.Run("FileStore", func(t *testing.T) { f(t, newFileStore(t)) })
}

func newFileStore(t *testing.T) *memcore.FileStore {
	t.Helper()
	dir := t.TempDir()
	s, err := memcore.NewFileStore(filepath.Join(dir, "repo"), filepath.Join(dir, "user"), memcore.FileStoreConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// newPipeline makes a pipeline of cfg, with fast retries, the model
// "classifier-model" and review off unless cfg says otherwise, closed when
// the test ends. Review is off because the scripted classifiers of the
// tests of capture's other work give no evidence, which would hold every
// memory they write; trust_test.go tests review with the default.
func newPipeline(t *testing.T, llm memcore.LLMProvider, store memcore.MemoryStore, cfg Config) *Pipeline {
	t.Helper()
	if cfg.Retry == (memcore.RetryPolicy{}) {
		cfg.Retry = fastRetry
	}
	cfg.Review = cmp.Or(cfg.Review, memcore.ReviewOff)
	cfg.ClassifierModel = cmp.Or(cfg.ClassifierModel, "classifier-model")
	p, err := NewPipeline(llm, store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = p.Close(ctx)
	})
	return p
}

// startPipeline is newPipeline followed by Start.
func startPipeline(t *testing.T, llm memcore.LLMProvider, store memcore.MemoryStore, cfg Config) *Pipeline {
	t.Helper()
	p := newPipeline(t, llm, store, cfg)
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return p
}

// waitStats polls the pipeline's counters until cond holds, failing the
// test after a generous deadline.
func waitStats(t *testing.T, p *Pipeline, cond func(Stats) bool) Stats {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := p.Stats()
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not reached; stats: %+v", s)
		}
		time.Sleep(time.Millisecond)
	}
}

// passes waits until n passes have finished.
func passes(t *testing.T, p *Pipeline, n uint64) Stats {
	t.Helper()
	return waitStats(t, p, func(s Stats) bool { return s.Passes >= n })
}

// win makes a window of alternating user and assistant messages.
func win(texts ...string) []memcore.Message {
	out := make([]memcore.Message, len(texts))
	for i, s := range texts {
		role := memcore.RoleUser
		if i%2 == 1 {
			role = memcore.RoleAssistant
		}
		out[i] = memcore.Message{Role: role, Content: s}
	}
	return out
}

// mem is an item of a classifier reply.
type mem map[string]any

// reply is a classifier reply holding items.
func reply(items ...mem) string {
	if items == nil {
		items = []mem{}
	}
	b, err := json.Marshal(map[string]any{"memories": items})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// nothing is the reply "nothing worth keeping".
var nothing = reply()

// always answers every call with text.
func always(text string) fake.LLMConfig {
	return fake.LLMConfig{ReplyFunc: func(context.Context, memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
		return &memcore.CompletionResponse{Text: text}, nil
	}}
}

// seed writes a memory and returns it as stored.
func seed(t *testing.T, s memcore.MemoryStore, content string, scope memcore.Scope, cat memcore.Category, created time.Time, pred *memcore.MemoryFile, related ...memcore.RelatedMemory) *memcore.MemoryFile {
	t.Helper()
	var m *memcore.MemoryFile
	if pred != nil {
		m = memcore.NewVersion(pred, "seed", memcore.TriggerManual)
		m.Meta.Related = append(m.Meta.Related, related...)
	} else {
		m = &memcore.MemoryFile{Meta: memcore.MemoryMeta{ID: memcore.NewMemoryID(), Version: 1, Related: related, Trigger: memcore.TriggerManual}}
	}
	m.Meta.CreatedAt, m.Meta.UpdatedAt = created, created
	m.Meta.Scope, m.Meta.Category = scope, cat
	m.Content = content
	if err := s.Write(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	got, err := s.Read(context.Background(), m.Meta.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// listAll lists the store, failing the test on error.
func listAll(t *testing.T, s memcore.MemoryStore) []*memcore.MemoryFile {
	t.Helper()
	all, err := s.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// newMemories returns the stored memories not among seeded.
func newMemories(t *testing.T, s memcore.MemoryStore, seeded ...*memcore.MemoryFile) []*memcore.MemoryFile {
	t.Helper()
	old := map[string]bool{}
	for _, m := range seeded {
		old[m.Meta.ID] = true
	}
	var out []*memcore.MemoryFile
	for _, m := range listAll(t, s) {
		if !old[m.Meta.ID] {
			out = append(out, m)
		}
	}
	return out
}

// userText is the user message of a classifier request.
func userText(req memcore.CompletionRequest) string {
	if len(req.Messages) == 0 {
		return ""
	}
	return req.Messages[0].Content
}

// promptParts splits the user message of a classifier request into its
// sections: the pinned existing-memories list (its lines, without the
// heading; "" if none), the conversation (its messages, without the
// heading), and the memories added since the list was pinned (their lines,
// "" if none).
func promptParts(req memcore.CompletionRequest) (pinned, conversation, since string) {
	text := userText(req)
	before, rest, _ := strings.Cut(text, conversationHeading+"\n")
	pinned = strings.TrimPrefix(before, existingHeading+"\n")
	conversation, since, ok := strings.Cut(rest, "\n"+sinceHeading+"\n")
	if !ok {
		conversation = strings.TrimSuffix(rest, "\n"+replyReminder)
		return pinned, conversation, ""
	}
	return pinned, conversation, strings.TrimSuffix(since, "\n"+replyReminder)
}

// existingSection is the pinned EXISTING MEMORIES list of a request, ""
// if none.
func existingSection(req memcore.CompletionRequest) string {
	pinned, _, _ := promptParts(req)
	return pinned
}

// sinceSection is the MEMORIES ADDED SINCE list of a request, "" if none.
func sinceSection(req memcore.CompletionRequest) string {
	_, _, since := promptParts(req)
	return since
}

// lineIDs are the ids of the "- [id] …" lines of a list, in order.
func lineIDs(list string) []string {
	var ids []string
	for _, line := range strings.Split(list, "\n") {
		if id, ok := strings.CutPrefix(line, "- ["); ok {
			ids = append(ids, id[:strings.IndexByte(id, ']')])
		}
	}
	return ids
}

// listedIDs are the ids of the pinned list of a request, in order.
func listedIDs(req memcore.CompletionRequest) []string { return lineIDs(existingSection(req)) }

// sinceIDs are the ids listed as added since, in order.
func sinceIDs(req memcore.CompletionRequest) []string { return lineIDs(sinceSection(req)) }

func must[T any](v T, err error) T {
	if err != nil {
		panic(fmt.Sprint("unexpected error: ", err))
	}
	return v
}

// newLLM returns fake.NewLLM(cfg), failing the test if it reports an
// error.
func newLLM(t testing.TB, cfg fake.LLMConfig) *fake.LLM {
	t.Helper()
	l, err := fake.NewLLM(cfg)
	if err != nil {
		t.Fatalf("fake.NewLLM: %v", err)
	}
	return l
}

// newEmbedder returns fake.NewEmbedder(cfg), failing the test if it
// reports an error.
func newEmbedder(t testing.TB, cfg fake.EmbedderConfig) *fake.Embedder {
	t.Helper()
	e, err := fake.NewEmbedder(cfg)
	if err != nil {
		t.Fatalf("fake.NewEmbedder: %v", err)
	}
	return e
}

// failNext schedules failures with f.FailNext, failing the test if it
// reports an error.
func failNext(t testing.TB, f interface{ FailNext(int, error) error }, n int, err error) {
	t.Helper()
	if e := f.FailNext(n, err); e != nil {
		t.Fatalf("FailNext(%d, %v): %v", n, err, e)
	}
}
