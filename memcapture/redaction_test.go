package memcapture

import (
	"context"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memcore/redact"
	"github.com/forgemem/forgemem/providers/fake"
)

// randomKey returns n characters of alphabet from a fixed seed: it looks
// like a real credential to the scanner, but no file of the repository
// holds a literal that secret scanners would flag.
func randomKey(rng *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return "A1" + string(b) // an upper-case letter and a digit, as real keys have
}

// Whatever the classifier returns, no secret reaches the memory files: the
// pipeline redacts each memory's content and counts the secrets replaced.
func TestSecretsNeverReachDisk(t *testing.T) {
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	rng := rand.New(rand.NewPCG(1, 2))
	store := newFileStore(t)
	privateKey := "-----BEGIN EC PRIVATE KEY-----\n" + randomKey(rng, alnum+"+/", 64) + "\n-----END EC PRIVATE KEY-----"
	secrets := []string{"sk-proj-" + randomKey(rng, alnum+"-_", 100), "jo.doe@example.com", "S3cr3tP4ss!", privateKey}
	content := "Connects with " + secrets[0] + " as " + secrets[1] + " to postgres://app:" + secrets[2] + "@db:5432/x.\nKey:\n" + secrets[3]
	llm := newLLM(t, always(reply(mem{"content": content, "scope": "repo", "category": "project-conventions"})))
	p := startPipeline(t, llm, store, Config{})
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("setup")})
	s := passes(t, p, 1)
	if s.MemoriesWritten != 1 || s.Redactions != 4 {
		t.Fatalf("written = %d, Redactions = %d; want 1 and 4", s.MemoriesWritten, s.Redactions)
	}
	files := 0
	root := filepath.Dir(store.Dir(memcore.ScopeRepo))
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, sec := range secrets {
			lines := strings.Split(sec, "\n")
			if strings.Contains(string(raw), sec) || strings.Contains(string(raw), lines[1%len(lines)]) {
				t.Errorf("%s holds a secret:\n%s", path, raw)
			}
		}
		if !strings.Contains(string(raw), "postgres://app:"+redact.Placeholder+"@db:5432/x.") {
			t.Errorf("%s lost the text around the secret:\n%s", path, raw)
		}
		return nil
	})
	if err != nil || files != 1 {
		t.Fatalf("walked %d files: %v", files, err)
	}
	m := listAll(t, store)[0]
	if err := m.Validate(); err != nil {
		t.Error(err)
	}
}

// recordingEmbedder is an embedder that records every text it is given.
type recordingEmbedder struct {
	memcore.Embedder
	mu    sync.Mutex
	texts []string
}

func (r *recordingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	r.mu.Lock()
	r.texts = append(r.texts, texts...)
	r.mu.Unlock()
	return r.Embedder.Embed(ctx, texts)
}

func (r *recordingEmbedder) embedded() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.texts)
}

// secretTurns returns a conversation holding secrets of several formats,
// and the secrets — for a wrapped key or a private key, each of its lines.
func secretTurns(rng *rand.Rand) ([]memcore.Message, []string) {
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	openai := "sk-proj-" + randomKey(rng, alnum+"-_", 100)
	github := "ghp_" + randomKey(rng, alnum, 34)
	awsID, awsSecret := "AKIA"+randomKey(rng, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 14), randomKey(rng, alnum+"+/", 38)
	password, dbPass, cookie := randomKey(rng, alnum, 10), randomKey(rng, alnum, 10), randomKey(rng, alnum, 30)
	bearer := randomKey(rng, alnum+"-_", 40)
	keyLines := []string{randomKey(rng, alnum+"+/", 62), randomKey(rng, alnum+"+/", 62)}
	wrapped := []string{"sk-proj-" + randomKey(rng, alnum, 40), randomKey(rng, alnum, 30)}
	msgs := win(
		"Here is my setup: OPENAI_API_KEY="+openai+" and the deploy token "+github+".",
		"I see the key. Which AWS keys does the CI use?",
		"User name,Password,Access key ID,Secret access key\nci,,"+awsID+","+awsSecret+"\nand the db: mysql -u root -p"+dbPass+" app",
		"Connect with password="+password+"; mail jo.doe@example.com if it fails.",
		"curl -H 'Authorization: Bearer "+bearer+"' -H 'Cookie: sessionid="+cookie+"' https://api.example.com",
		"The deploy key:\n-----BEGIN OPENSSH PRIVATE KEY-----\n"+keyLines[0]+"\n"+keyLines[1]+"\n-----END OPENSSH PRIVATE KEY-----",
		"and the old key, wrapped by the terminal:\n"+wrapped[0]+"\n"+wrapped[1]+"\nThanks!",
	)
	secrets := []string{openai, github, awsID, awsSecret, dbPass, password, "jo.doe@example.com", bearer, cookie}
	return msgs, append(append(secrets, keyLines...), wrapped...)
}

// Conversation text is redacted before it leaves the machine: the
// classifier request (the window and the existing-memories list, which
// may hold a hand-written memory with a secret) and every text embedded to
// rank the existing memories hold no secret. The secrets replaced are
// counted, and consecutive prompts still share their beginning.
func TestNoSecretReachesTheProviders(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	msgs, secrets := secretTurns(rng)
	handToken := "glpat-" + randomKey(rng, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", 20)
	secrets = append(secrets, handToken)
	store := memcore.NewMemStore()
	seed(t, store, "The CI reads its token from the vault; it was "+handToken+" before.", memcore.ScopeRepo, memcore.CategoryProjectConventions, t0, nil)
	llm := newLLM(t, always(nothing))
	emb := &recordingEmbedder{Embedder: newEmbedder(t, fake.EmbedderConfig{})}
	p := startPipeline(t, llm, store, Config{Embedder: emb})

	enqueue(t, p, 1, "s", msgs)
	first := p.Stats().RequestRedactions
	enqueue(t, p, 2, "s", append(slices.Clone(msgs), win("Fine.", "Noted: the token is "+handToken)...))

	reqs := llm.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d classifier requests, want 2", len(reqs))
	}
	sent := append(emb.embedded(), promptText(reqs[0]), promptText(reqs[1]))
	for _, text := range sent {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("a provider was sent the secret %q in:\n%s", s, text)
			}
		}
	}
	if !strings.Contains(promptText(reqs[0]), redact.Placeholder) {
		t.Errorf("the prompt holds no %s:\n%s", redact.Placeholder, promptText(reqs[0]))
	}
	if first < uint64(len(secrets)-3) || p.Stats().RequestRedactions <= first {
		t.Errorf("RequestRedactions = %d after the first pass and %d after the second; want at least %d, then more",
			first, p.Stats().RequestRedactions, len(secrets)-3)
	}
	wantPrefix(t, reqs[0], reqs[1])
}
