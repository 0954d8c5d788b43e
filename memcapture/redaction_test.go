package memcapture

import (
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memcore/redact"
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
