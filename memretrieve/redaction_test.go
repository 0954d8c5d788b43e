package memretrieve

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memcore/redact"
)

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

// randomSecret returns n characters of alphabet from r after "A1", so that
// it looks like a credential to the scanner while no file of the
// repository holds a literal secret scanners would flag.
func randomSecret(r *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return "A1" + string(b)
}

// secretConversation returns a conversation holding secrets of several
// formats, and the secrets — for a wrapped or a private key, each line.
func secretConversation(r *rand.Rand) ([]memcore.Message, []string) {
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	openai := "sk-proj-" + randomSecret(r, alnum+"-_", 100)
	github := "ghp_" + randomSecret(r, alnum, 34)
	awsID, awsSecret := "AKIA"+randomSecret(r, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 14), randomSecret(r, alnum+"+/", 38)
	password, cookie, bearer := randomSecret(r, alnum, 10), randomSecret(r, alnum, 30), randomSecret(r, alnum+"-_", 40)
	keyLines := []string{randomSecret(r, alnum+"+/", 62), randomSecret(r, alnum+"+/", 62)}
	wrapped := []string{"sk-proj-" + randomSecret(r, alnum, 40), randomSecret(r, alnum, 30)}
	msgs := []memcore.Message{
		{Role: memcore.RoleUser, Content: "Set OPENAI_API_KEY=" + openai + " and the deploy token " + github + "; how do we wrap errors?"},
		{Role: memcore.RoleAssistant, Content: "With sentinel errors. Which AWS keys does the CI use?"},
		{Role: memcore.RoleUser, Content: "Access key ID,Secret access key\n" + awsID + "," + awsSecret + "\nand mysql -u root -p" + password + " app"},
		{Role: memcore.RoleAssistant, Content: "curl -H 'Authorization: Bearer " + bearer + "' -H 'Cookie: sessionid=" + cookie + "' https://api.example.com"},
		{Role: memcore.RoleUser, Content: "The deploy key:\n-----BEGIN OPENSSH PRIVATE KEY-----\n" + keyLines[0] + "\n" + keyLines[1] +
			"\n-----END OPENSSH PRIVATE KEY-----\nand the old one, wrapped:\n" + wrapped[0] + "\n" + wrapped[1] + "\nmail jo.doe@example.com. How do we log errors?"},
	}
	secrets := []string{openai, github, awsID, awsSecret, password, bearer, cookie, "jo.doe@example.com"}
	return msgs, append(append(secrets, keyLines...), wrapped...)
}

// Conversation text is redacted before it leaves the machine: the
// hypothesis request and every text embedded — the queries, the
// hypotheses (a model may echo a secret), and the memories, of which one
// was written by hand with a token in it — hold no secret, and the Result
// counts the secrets replaced in the turn's requests.
func TestNoSecretReachesTheProviders(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	window, secrets := secretConversation(r)
	handToken := "glpat-" + randomSecret(r, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", 20)
	echoed := "ghp_" + randomSecret(r, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", 34)
	secrets = append(secrets, handToken, echoed)
	store := memcore.NewMemStore()
	write(t, store,
		mem(testID(1), memcore.ScopeRepo, memcore.CategoryProjectConventions, 1, 0, "Errors are wrapped with sentinel values and errors.Is."),
		mem(testID(2), memcore.ScopeRepo, memcore.CategoryProjectConventions, 1, 1, "The CI logs in with "+handToken+" until the vault is ready."))
	for _, mode := range []HypothesisMode{ModeLLM, ModeIdentity} {
		t.Run(string(mode), func(t *testing.T) {
			llm := hypothesisLLM(t, "Errors are wrapped with sentinel values.", "The CI token is "+echoed+".")
			emb := &recordingEmbedder{Embedder: newEmbedder(t)}
			cfg := DefaultConfig()
			cfg.Mode = mode
			e := newEngine(t, store, emb, llm, cfg)
			rebuild(t, e)
			res, err := e.Retrieve(context.Background(), "", window)
			if err != nil || res.Skipped != SkipNone || res.VectorSkipped != SkipNone {
				t.Fatalf("Retrieve: %v (skipped %v, vector skipped %v)", err, res.Skipped, res.VectorSkipped)
			}
			var sent []string
			for _, req := range llm.Requests() {
				for _, m := range req.Messages {
					sent = append(sent, m.Content)
				}
			}
			if mode == ModeLLM && (len(sent) != 1 || !strings.Contains(sent[0], redact.Placeholder)) {
				t.Errorf("hypothesis requests: %q, want one holding %s", sent, redact.Placeholder)
			}
			sent = append(sent, emb.embedded()...)
			for _, text := range sent {
				for _, s := range secrets {
					if strings.Contains(text, s) {
						t.Errorf("a provider was sent the secret %q in:\n%s", s, text)
					}
				}
			}
			if want := len(secrets) - 5; res.Redactions < want {
				t.Errorf("Result.Redactions = %d, want at least %d", res.Redactions, want)
			}
			if len(res.Memories) == 0 {
				t.Errorf("the redacted turn found no memory")
			}
		})
	}
}
