package memcapture

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/fake"
	"github.com/rs/zerolog"
)

// syncBuffer is a bytes.Buffer safe for the pipeline goroutine to write
// while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestLogsHoldNoSecrets: whatever the classifier, the embedder or a panic
// put in what the pipeline logs — unknown scopes and categories, made-up
// supersedes and related ids, error messages that echo the conversation —
// no secret reaches the log, even at debug level.
func TestLogsHoldNoSecrets(t *testing.T) {
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	rng := rand.New(rand.NewPCG(3, 4))
	secret := func() string { return "ghp_" + randomKey(rng, alnum, 34) }
	tests := []struct {
		name string
		// setup returns the classifier, its config, the secrets and a
		// message the log must hold (so the test is not vacuous).
		setup func(t *testing.T) (memcore.LLMProvider, Config, []string, string)
	}{
		{"fields of a reply item", func(t *testing.T) (memcore.LLMProvider, Config, []string, string) {
			s := []string{secret(), secret(), secret(), secret(), secret()}
			r := reply(
				mem{"content": "A", "scope": s[0], "category": "user-facts"},
				mem{"content": "B", "scope": "user", "category": s[1]},
				mem{"content": "C", "scope": "user", "category": "user-facts", "supersedes": s[2],
					"related": []map[string]string{{"id": s[3], "relationship": "refines"}, {"id": "mem_x", "relationship": s[4]}}},
			)
			return newLLM(t, always(r)), Config{}, s, "supersedes names no stored memory"
		}},
		{"classifier error echoing the request", func(t *testing.T) (memcore.LLMProvider, Config, []string, string) {
			s := secret()
			llm := newLLM(t, fake.LLMConfig{ReplyFunc: func(context.Context, memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
				return nil, fmt.Errorf("%w: cannot process %q", memcore.ErrInvalidRequest, "my token is "+s)
			}})
			return llm, Config{}, []string{s}, "classifier call failed"
		}},
		{"unreadable reply", func(t *testing.T) (memcore.LLMProvider, Config, []string, string) {
			s := secret()
			return newLLM(t, always("not JSON; by the way "+s)), Config{}, []string{s}, "unreadable"
		}},
		{"panic", func(t *testing.T) (memcore.LLMProvider, Config, []string, string) {
			s := secret()
			llm := newLLM(t, fake.LLMConfig{ReplyFunc: func(context.Context, memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
				panic("provider bug while sending " + s)
			}})
			return llm, Config{}, []string{s}, "panicked"
		}},
		{"embedder error echoing the text", func(t *testing.T) (memcore.LLMProvider, Config, []string, string) {
			s := secret()
			emb := &echoingEmbedder{secret: s}
			return newLLM(t, always(nothing)), Config{Embedder: emb}, []string{s}, "ranking existing memories failed"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			llm, cfg, secrets, says := tt.setup(t)
			var logs syncBuffer
			store := memcore.NewMemStore()
			seed(t, store, "Uses spaces.", memcore.ScopeRepo, memcore.CategoryProjectConventions, t0, nil)
			cfg.Logger = zerolog.New(&logs).Level(zerolog.DebugLevel)
			p := startPipeline(t, llm, store, cfg)
			p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("Let's keep tabs.")})
			s := passes(t, p, 1)
			out := logs.String()
			if !strings.Contains(out, says) {
				t.Fatalf("the log does not say %q:\n%s", says, out)
			}
			for _, sec := range secrets {
				if strings.Contains(out, sec) {
					t.Errorf("the log holds a secret:\n%s", out)
				}
			}
			if f := s.LastFailure; f.Err != nil {
				for _, sec := range secrets {
					if strings.Contains(f.Err.Error(), sec) {
						t.Errorf("Stats.LastFailure holds a secret: %v", f.Err)
					}
				}
			}
		})
	}
}

// echoingEmbedder fails every call with an error that quotes a secret, as
// a provider quoting its input might.
type echoingEmbedder struct{ secret string }

func (e *echoingEmbedder) Embed(context.Context, []string) ([][]float32, error) {
	return nil, errors.Join(memcore.ErrInvalidRequest, fmt.Errorf("input %q rejected", e.secret))
}

func (e *echoingEmbedder) Model() string   { return "echo" }
func (e *echoingEmbedder) Dimensions() int { return 8 }
