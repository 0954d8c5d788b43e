package fake_test

import (
	"testing"

	"github.com/forgemem/forgemem/providers/fake"
)

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
