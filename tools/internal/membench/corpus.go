package membench

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/forgemem/forgemem/memcore"
)

// words is the vocabulary of the generated memories and conversations.
var words = strings.Fields(`
the user prefers table-driven tests with subtests and clear names for every case
errors are wrapped with context using fmt.Errorf and checked with errors.Is or errors.As
the project keeps database migrations in the migrations folder and runs them with make migrate
use optimistic locking with retry for concurrent writes to the accounts table after an incident
logging goes through zerolog passed in by the caller and library code never prints
the service exposes a gRPC api and an http gateway generated from the proto files
configuration is read from environment variables with sane defaults and validated at start-up
benchmarks are compared with benchstat and never asserted with timings in tests
the team decided to keep one module per package group with replace directives during development
pull requests need a changelog entry and green ci before they are merged into main
functional options configure constructors and sentinel errors describe failures
the frontend is built with vite and tested with vitest and playwright in headless chromium
avoid goroutines without a clear owner and always pass a context for cancellation
the agent was corrected for using fmt.Println in library code instead of structured logging
deployments go through a staging cluster before production with a manual approval step
`)

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed)) }

// memory returns a deterministic memory: its content is 25 to 80 words of
// the vocabulary, its scope and category cycle, and some memories link to
// earlier ones.
func memory(rng *rand.Rand, i int, earlier []string) *memcore.MemoryFile {
	n := 25 + rng.IntN(56)
	var b strings.Builder
	for w := range n {
		if w > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[rng.IntN(len(words))])
	}
	b.WriteString(fmt.Sprintf(" (note %d).", i))
	t := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute)
	m := &memcore.MemoryFile{
		Meta: memcore.MemoryMeta{
			ID: memcore.NewMemoryID(), CreatedAt: t, UpdatedAt: t, Version: 1,
			Scope:     memcore.Scopes()[i%3/2], // two in three repo, one in three user
			Category:  memcore.Categories()[i%len(memcore.Categories())],
			SessionID: fmt.Sprintf("session-%d", i/20),
			Trigger:   memcore.TriggerCadence,
		},
		Content: b.String(),
	}
	if len(earlier) > 0 && i%5 == 0 {
		m.Meta.Related = []memcore.RelatedMemory{{ID: earlier[rng.IntN(len(earlier))], Relationship: memcore.RelationshipRelatesTo}}
	}
	return m
}

// writeCorpus writes n memories into the scope folders of store as a store
// would name and encode them. The files are written directly, without the
// fsync of FileStore.Write, to keep the set-up of a benchmark short; they
// are byte for byte what Write would leave.
func writeCorpus(store *memcore.FileStore, n int) ([]*memcore.MemoryFile, error) {
	rng := newRand(7)
	ms := make([]*memcore.MemoryFile, 0, n)
	ids := make([]string, 0, n)
	for i := range n {
		m := memory(rng, i, ids)
		if err := writeFile(store, m); err != nil {
			return nil, err
		}
		ms = append(ms, m)
		ids = append(ids, m.Meta.ID)
	}
	return ms, nil
}

func writeFile(store *memcore.FileStore, m *memcore.MemoryFile) error {
	data, err := memcore.Serialize(m)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(store.Dir(m.Meta.Scope), m.Meta.ID+".md"), data, 0o600)
}

// conversation returns a window of n messages, alternating user and
// assistant, about the vocabulary's topics; seed varies the text.
func conversation(n int, seed uint64) []memcore.Message {
	rng := rand.New(rand.NewPCG(seed, 11))
	msgs := make([]memcore.Message, n)
	for i := range msgs {
		var b strings.Builder
		for w := range 12 + rng.IntN(30) {
			if w > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[rng.IntN(len(words))])
		}
		role := memcore.RoleUser
		if i%2 == 1 {
			role = memcore.RoleAssistant
		}
		msgs[i] = memcore.Message{Role: role, Content: b.String()}
	}
	return msgs
}
