package memretrieve

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/fake"
)

// plantingEmbedder embeds the text target as if it were the text as: the
// vectors a repository's author would commit in the cache folder so that a
// memory of theirs matches a turn it has nothing to do with.
type plantingEmbedder struct {
	*fake.Embedder
	target, as string
}

func (p plantingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	texts = slices.Clone(texts)
	for i, t := range texts {
		if strings.TrimSpace(t) == p.target {
			texts[i] = p.as
		}
	}
	return p.Embedder.Embed(ctx, texts)
}

// TestCacheSecretKeepsPlantedFilesOut: a repository can commit its .cache
// folder, with vectors and a gate calibration made so that one of its
// memories matches a turn about something else. With no CacheSecret the
// engine uses them (which is why the command sets one); with a secret it
// reads only files written under that secret: it embeds the memories and
// measures the calibration itself, and the planted memory stays out. A
// restart with the same secret reads the files it wrote. The engine keeps
// its own copy of the secret.
func TestCacheSecretKeepsPlantedFilesOut(t *testing.T) {
	const prompt = "Install the chart library in the frontend with pnpm."
	// The repository's memories, all of them: its author can plant the
	// vectors and the calibration of these.
	ms := gateMemories()
	for _, m := range ms {
		m.Meta.Scope = memcore.ScopeRepo
	}
	planted := ms[1] // "Does not want testify in Go tests; …"
	fs := newFileStore(t)
	write(t, fs, ms...)
	repoCache := filepath.Join(fs.Dir(memcore.ScopeRepo), cacheDirName)

	// The repository's author builds with planted vectors and commits the
	// cache folder.
	author := plantingEmbedder{Embedder: newEmbedder(t), target: planted.Content, as: prompt}
	rebuild(t, newEngine(t, fs, author, nil, identityConfig()))
	model := author.Model()
	for _, name := range []string{cacheFileName(model, nil), calibrationFileName(model, nil)} {
		if _, err := os.Stat(filepath.Join(repoCache, name)); err != nil {
			t.Fatalf("the author's build left no %s: %v", name, err)
		}
	}
	injected := func(e *Engine) bool {
		t.Helper()
		res, err := e.Retrieve(context.Background(), "", userWindow(prompt))
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(res.Memories, func(r Recalled) bool { return r.Memory.Meta.ID == planted.Meta.ID })
	}

	// No secret: the planted files are read, and the memory comes along.
	// This is the attack the secret stops; if it no longer works, the
	// checks below prove nothing.
	plain := newEngine(t, fs, newEmbedder(t), nil, identityConfig())
	rebuild(t, plain)
	if n := plain.calibrations.Load(); n != 0 {
		t.Fatalf("without a secret the calibration was measured %d times, want the planted one read", n)
	}
	if !injected(plain) {
		t.Fatal("without a secret the planted vectors did not bring their memory into an unrelated turn")
	}

	secret := []byte("the user's own secret, 32 bytes")
	emb := newEmbedder(t)
	given := slices.Clone(secret)
	keyed := newEngine(t, fs, emb, nil, identityConfig(), withCacheSecret(given))
	clear(given) // the engine keeps its own copy
	rebuild(t, keyed)
	if n := keyed.calibrations.Load(); n < 1 {
		t.Error("with a secret the planted calibration was used: measured 0 times")
	}
	if in := emb.Inputs(); in < len(ms) {
		t.Errorf("with a secret %d texts were embedded, want the %d memories at least (the planted vectors unread)", in, len(ms))
	}
	if injected(keyed) {
		t.Errorf("with a secret the planted memory %s was injected into an unrelated turn", planted.Meta.ID)
	}
	for _, name := range []string{cacheFileName(model, secret), calibrationFileName(model, secret)} {
		if _, err := os.Stat(filepath.Join(repoCache, name)); err != nil {
			t.Errorf("with a secret no %s was written: %v", name, err)
		}
	}

	// A restart with the same secret reads what it wrote.
	emb2 := newEmbedder(t)
	again := newEngine(t, fs, emb2, nil, identityConfig(), withCacheSecret(secret))
	rebuild(t, again)
	if n, in := again.calibrations.Load(), emb2.Inputs(); n != 0 || in != 0 {
		t.Errorf("a restart with the secret measured %d times and embedded %d texts, want 0 and 0", n, in)
	}
	if injected(again) {
		t.Errorf("after a restart the planted memory %s was injected", planted.Meta.ID)
	}
}

// TestCacheFileNames: with no secret a file's name depends on the model
// alone; with one it depends on the secret too, and neither the secret nor
// the unkeyed name can be read from it.
func TestCacheFileNames(t *testing.T) {
	a, b := []byte("0123456789abcdef"), []byte("fedcba9876543210")
	for _, name := range []func(string, []byte) string{cacheFileName, calibrationFileName} {
		plain := name("text-embedding-3-small", nil)
		if got := name("text-embedding-3-small", []byte{}); got != plain {
			t.Errorf("an empty secret names %s, want %s as with none", got, plain)
		}
		ka, kb := name("text-embedding-3-small", a), name("text-embedding-3-small", b)
		if ka == plain || kb == plain || ka == kb {
			t.Errorf("names %s (none), %s and %s (two secrets), want three different", plain, ka, kb)
		}
		if name("text-embedding-3-small", a) != ka {
			t.Error("the same secret and model name two files")
		}
		if name("text-embedding-3-large", a) == ka {
			t.Error("two models share a file under one secret")
		}
		if !strings.HasPrefix(ka, strings.SplitN(plain, "-", 2)[0]+"-text-embedding-3-small-") || strings.Contains(ka, string(a)) {
			t.Errorf("keyed name %s, want the prefix and the model's slug, and not the secret", ka)
		}
	}
}
