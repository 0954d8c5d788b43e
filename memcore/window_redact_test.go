package memcore

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/memcore/redact"
)

// randomKey returns an OpenAI-style project key made at run time from a
// fixed seed, so that no file holds a literal secret scanners would flag.
func randomKey(seed uint64, n int) string {
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	r := rand.New(rand.NewPCG(seed, 9))
	b := make([]byte, n)
	for i := range b {
		b[i] = alnum[r.IntN(len(alnum))]
	}
	return "sk-proj-A1b" + string(b)
}

// RedactWindow redacts the messages of the window it fits, counts the
// secrets, leaves the messages fitted out alone, and finds a secret the
// cut went through.
func TestRedactWindow(t *testing.T) {
	key1, key2, key3 := randomKey(1, 80), randomKey(2, 80), randomKey(3, 80)
	old := user("first, with " + key1)
	mid := assistant("use password=hunter2 and mail ops@example.com")
	newest := user("the key is " + key2 + " and that is all")
	fitTo := func(budget int) func([]Message) []Message {
		return func(m []Message) []Message { return CapWindow(m, budget) }
	}
	tests := []struct {
		name   string
		msgs   []Message
		budget int
		want   []Message
		n      int
	}{
		{"whole window", []Message{old, mid, newest}, 1000, []Message{
			user("first, with " + redact.Placeholder),
			assistant("use password=" + redact.Placeholder + " and mail " + redact.Placeholder),
			user("the key is " + redact.Placeholder + " and that is all")}, 4},
		{"oldest fitted out", []Message{old, mid, newest}, WindowTokens([]Message{mid, newest}), []Message{
			assistant("use password=" + redact.Placeholder + " and mail " + redact.Placeholder),
			user("the key is " + redact.Placeholder + " and that is all")}, 3},
		// Capped first, the newest message would keep the key's tail.
		{"cut through a secret", []Message{user(key3 + " is the key")}, 10, []Message{
			user(redact.Placeholder + " is the key")}, 1},
		{"nothing to redact", []Message{user("hello")}, 1000, []Message{user("hello")}, 0},
		{"empty", nil, 1000, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.msgs)
			got, n := RedactWindow(in, fitTo(tt.budget))
			if !slices.Equal(got, tt.want) || n != tt.n {
				t.Errorf("RedactWindow =\n%q, %d\nwant\n%q, %d", got, n, tt.want, tt.n)
			}
			if !slices.Equal(in, tt.msgs) {
				t.Errorf("the input was modified: %q", in)
			}
			again, _ := RedactWindow(tt.msgs, fitTo(tt.budget))
			if !slices.Equal(again, got) {
				t.Errorf("not deterministic: %q then %q", got, again)
			}
		})
	}
	// What the test above guards against: redacting the fitted window
	// leaves the tail of a key whose start was cut off.
	if capped, _ := redactMessages(CapWindow([]Message{user(key3 + " is the key")}, 10)); !strings.Contains(key3, strings.TrimSuffix(capped[0].Content, " is the key")) {
		t.Fatalf("the cut no longer goes through the key: %q", capped)
	}
}

// BenchmarkRedactWindow is what redaction adds to a turn of retrieval or a
// pass of capture: a long coding conversation fitted to 4,000 tokens (the
// retrieval window's default budget, about 16 KB) and redacted, with a few
// secrets in it.
func BenchmarkRedactWindow(b *testing.B) {
	turns := []string{
		"How do we configure the database? The token budget is 2000 and max_tokens=4096.",
		"Use the connection pool; read the password from os.Getenv(\"DB_PASSWORD\") and never log it. See https://example.com/docs?page=2.",
		"```go\nfunc connect(ctx context.Context, cfg Config) (*sql.DB, error) {\n\treturn sql.Open(\"mysql\", cfg.DSN())\n}\n```",
		"Run `go test ./...` then `git push origin main`; commit e83c5163316f89bfbde7d9ab23ca2e25604af290 pinned golang.org/x/tools@v0.24.0.",
		"export OPENAI_API_KEY=" + randomKey(4, 100) + " and mail ops@example.com if it fails.",
	}
	var msgs []Message
	for i := 0; i < 300; i++ {
		msgs = append(msgs, Message{Role: []Role{RoleUser, RoleAssistant}[i%2], Content: turns[i%len(turns)]})
	}
	fit := func(m []Message) []Message { return CapWindow(m, 4000) }
	b.ReportAllocs()
	for b.Loop() {
		RedactWindow(msgs, fit)
	}
}
