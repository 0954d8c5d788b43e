package memretrieve

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/rs/zerolog"
)

// HypothesisMode chooses what the engine embeds as its search queries.
type HypothesisMode string

// The hypothesis modes.
const (
	// ModeLLM asks the hypothesis model for HypothesisCount short
	// sentences written the way a stored memory would be (HyDE), and
	// searches with each of them. It is the default.
	ModeLLM HypothesisMode = "llm"
	// ModeIdentity searches with the conversation's own text, with no LLM
	// call: up to three queries, each capped — the latest user message,
	// the latest exchange and the whole window. It serves offline use,
	// demos and evaluation (HyDE against direct search); it is chosen
	// explicitly and is never a fallback for a failing hypothesis model.
	ModeIdentity HypothesisMode = "identity"
)

// Valid reports whether m is [ModeLLM] or [ModeIdentity].
func (m HypothesisMode) Valid() bool { return m == ModeLLM || m == ModeIdentity }

// StaleMode says what a turn does with a memory that Config.StaleCheck
// finds outdated.
type StaleMode string

// The stale modes.
const (
	// StaleLabel injects the memory with a note saying why it may be
	// outdated ("may be outdated: internal/db/queries.go no longer
	// exists"). It is the default; an empty StaleMode means it too.
	StaleLabel StaleMode = "label"
	// StaleDrop leaves the memory out of the turn.
	StaleDrop StaleMode = "drop"
	// StaleIgnore does not check: the memory is injected as it is.
	StaleIgnore StaleMode = "ignore"
)

// Valid reports whether m is empty or one of the stale modes.
func (m StaleMode) Valid() bool {
	return m == "" || m == StaleLabel || m == StaleDrop || m == StaleIgnore
}

// StaleChecker says why a memory may be outdated — the code it names moved
// or went away. Package memcore/anchor's *Checker is one.
type StaleChecker interface {
	// Stale returns why m may be outdated, or "" when nothing says so. It
	// is called for each memory a turn is about to inject, with the
	// turn's context, so it must be cheap, and safe for concurrent use.
	Stale(ctx context.Context, m *memcore.MemoryFile) string
}

// HoldChecker says why a memory must wait for a person's review before it
// is injected — text from someone else that reads like an instruction to
// the agent's tools, say — or "" when it may be injected.
type HoldChecker interface {
	// Hold returns why m waits, or "". It is called for each memory a
	// turn is about to inject, so it must be cheap, and safe for
	// concurrent use.
	Hold(m *memcore.MemoryFile) string
}

// StatedChecker tells whether the user stated the text of a repository
// memory whose file says so (memcore.SourceUser). Anyone who commits to a
// repository can write its memory files, so such a memory is labelled a
// repository contributor's unless the host knows the text is the user's
// own: one the host itself wrote from the user's words, say.
type StatedChecker interface {
	// Stated reports whether the user stated m's text. It is called for
	// each repository memory a turn injects whose file says the user
	// stated it, so it must be cheap, and safe for concurrent use.
	Stated(m *memcore.MemoryFile) bool
}

// Config holds everything an [Engine] is configured with: the retrieval
// settings, and what the host gives it (a logger, a cache folder, a
// progress callback). Each field's comment names the settings key it is
// read from, if any, its default and its range.
//
// Start from [DefaultConfig] and change what you need. A zero field means
// its default wherever zero has no meaning of its own (TopK 0 is TopK 10,
// Timeout 0 is 2s, Parallelism 0 is GOMAXPROCS, …), but HopDepth, MinScore
// and LexicalWeight mean what they say at 0 — no graph expansion, a
// minimum score of 0, the lexical index off — so a Config built from
// nothing gets those. [NewEngine] rejects every out-of-range field instead
// of clamping it.
type Config struct {
	// HypothesisModel names the model of the hypothesis provider
	// (memory.retrieval_model); empty means the provider's default.
	HypothesisModel string
	// Mode is ModeLLM (the default; "" means it) or ModeIdentity.
	Mode HypothesisMode
	// HypothesisCount is how many hypotheses the model is asked for
	// (memory.retrieval_hypothesis_count): default 5, range 1–10.
	HypothesisCount int
	// TopK is how many memories each query takes from the vector index
	// before the union (memory.retrieval_top_k): default 10, range 1–100.
	TopK int
	// HopDepth is how many related-edge hops graph expansion follows from
	// each search hit (memory.retrieval_hop_depth): default 1, range 0–3;
	// 0 turns expansion off.
	HopDepth int
	// MaxMemories caps the memories of a turn's injection, graph
	// neighbours included, highest score first
	// (memory.injection_max_memories): default 8, range 1–1000.
	MaxMemories int
	// MinScore drops search hits whose cosine similarity is below it
	// (memory.retrieval_min_score): default 0, range -1–1; -1 keeps
	// everything.
	MinScore float64
	// InjectionTokenBudget bounds the injection block, in
	// memcore.EstimateTokens tokens (memory.injection_token_budget):
	// default 2000, at least 1.
	InjectionTokenBudget int
	// WindowTokenBudget bounds the conversation window sent to the
	// hypothesis model (or embedded, in ModeIdentity), newest text kept:
	// default 4000, range 1–1,000,000.
	WindowTokenBudget int
	// Timeout bounds a whole Retrieve call (memory.retrieval_timeout):
	// default 2s, more than 0. With the lexical index on, the model calls
	// stop a tenth of it (at most 200ms) early and the turn is answered
	// from the lexical index; otherwise on expiry the turn gets no
	// memories.
	Timeout time.Duration
	// Quantized makes the index quantised (memory.retrieval_quantized):
	// default false. The index then holds each vector as int8 values with
	// one scale per vector — a quarter of the memory of the float32
	// vectors — scans them with SIMD integer dot products, and re-ranks the
	// best candidates (4 per result, at least 40) with their float32
	// vectors, so scores stay exact cosine similarities and the results are
	// the exact search's whenever the best memories are among the
	// candidates (membench measures how often: quantized_recall_at_10). The
	// candidates' float32 vectors are read from the on-disk embedding
	// cache, so they are not kept in memory — except where there is no
	// cache on disk (a store without folders such as memcore.MemStore, and
	// no CacheDir), where they stay in memory beside the int8 copy.
	Quantized bool
	// QueryTokenLimit bounds each text the turn sends to the embedder as a
	// query, in memcore.EstimateTokens tokens (four characters each), newest
	// text kept (memory.retrieval_query_token_limit): default 512, range
	// 1–1,000,000. Set it to the embedding model's input limit when that is
	// lower — with a margin, since a model's own tokens are often shorter
	// than four characters in code — and higher to let the window query
	// see more of a long conversation. Memories are embedded whole.
	QueryTokenLimit int
	// LexicalWeight is the weight of the lexical (BM25) ranking against the
	// vector ranking's 1 when the two are fused
	// (memory.retrieval_lexical_weight): default 1, range 0–10; 0 turns
	// the lexical index off, and scores are then cosine similarities.
	LexicalWeight float64
	// FusionK is the constant k of reciprocal-rank fusion: a memory ranked
	// r-th by a ranking gains weight/(k + r) (memory.retrieval_fusion_k).
	// A larger k flattens the difference between the first ranks and the
	// later ones. Default 60, range 1–1000.
	FusionK int
	// GateChance sets the strictness of the relevance gate, which lets a
	// memory into the injection only on evidence that it is relevant to
	// the turn (see the package documentation): it is about the share of
	// turns about something the memories do not cover that still get a
	// memory, the chance the gate takes. Lower is stricter: fewer unrelated
	// memories, and fewer relevant ones. Default 0.05, range 0.0001–1; 1
	// turns the gate off (every ranked memory may be injected, within
	// MaxMemories and the budget). memory.retrieval_gate_chance sets it
	// in the command.
	GateChance float64

	// Logger receives the engine's log: warnings for failed index builds
	// and unusable cache files, and at debug level the reason a turn got
	// no memories or went on without its vector ranking. Provider errors,
	// which may quote the conversation or the memories, are redacted
	// before they are logged. The zero Logger logs nothing (the default).
	Logger zerolog.Logger
	// CacheDir, when set, keeps the embedding cache in that folder (created
	// if needed, with a .gitignore that ignores everything in it) for
	// memories of every scope. Empty (the default): the cache lives in the
	// .cache folder of each scope's memory folder when the store has
	// folders (a memcore.FileStore does, see [ScopeDirs]), and in memory
	// only otherwise.
	CacheDir string
	// CacheSecret, when set, names the embedding cache's files (the
	// vectors and the gate's calibration) after an HMAC-SHA256 of the model
	// under it, so the engine reads only files written under the same
	// secret. Anyone who writes a memory folder can otherwise put files
	// there — a cloned repository can commit its .cache folder — holding
	// vectors or a calibration made so that its memories enter every turn.
	// Give a secret only the user has, of at least 16 bytes (the forgemem
	// command derives one from a key in the user's memory folder); the
	// engine keeps a copy. Nil or empty (the default): the names depend on
	// the model alone. Changing it leaves the earlier files unread: the
	// memories are embedded again.
	CacheSecret []byte
	// EmbedBatch is how many memory texts an index build sends in one
	// Embed call: default 256, range 1–100,000.
	EmbedBatch int
	// TurnCacheSize is how many turns' results are kept for reuse, least
	// recently used dropped first: default 64, range -1–100,000; -1 turns
	// the per-turn cache off.
	TurnCacheSize int
	// Parallelism is how many goroutines a search over a large index uses:
	// default runtime.GOMAXPROCS(0), range 1–4096.
	Parallelism int
	// BuildProgress, when set, is told how far an index build that embeds
	// memories has got, so that a command can show a progress bar while a
	// first run or a new embedding model embeds many memories: it is called
	// with (0, total) before the first Embed call and with (done, total)
	// after each batch, done reaching total when every batch succeeded; a
	// build that embeds nothing (a warm cache) does not call it. If the
	// embedder's vectors turn out to have changed dimension, the cache is
	// emptied and the count starts over with the new total. It is called
	// on the goroutine of the build, never concurrently with itself, and
	// must return quickly. Nil (the default) reports nothing.
	BuildProgress func(done, total int)
	// RetryDelay is how long the engine waits before rebuilding again
	// after a build that could not embed every memory (the embedder
	// failed): default 30s, more than 0. Each further incomplete build
	// doubles the wait, up to 16 times RetryDelay.
	RetryDelay time.Duration

	// StaleCheck, when set, is asked about each memory a turn is about to
	// inject (after graph expansion and the MaxMemories cap, before the
	// injection budget); nil checks nothing. The host fills it — with
	// memcore/anchor's *Checker for a repository — so the engine needs no
	// file system or git of its own.
	StaleCheck StaleChecker
	// HoldCheck, when set, is asked about each memory a turn is about to
	// inject (when StaleCheck is); a memory it holds is left out
	// (DropHeld), however relevant. Nil holds nothing. The forgemem command
	// holds a repository's memory that reads like an instruction until the
	// user approves it, since a file a repository commits can claim any
	// source and status.
	HoldCheck HoldChecker
	// StatedCheck, when set, is asked about each repository memory a turn
	// injects whose file says the user stated it: one it confirms is
	// labelled "stated by the user", any other "stated by a repository
	// contributor". Nil confirms none. The forgemem command confirms the
	// texts it wrote into the repository from the user's own words.
	StatedCheck StatedChecker
	// Stale is what a turn does with a memory StaleCheck finds outdated
	// (memory.stale): StaleLabel (the default; "" means it too) injects it
	// with a note, StaleDrop leaves it out, StaleIgnore does not check.
	Stale StaleMode
}

// The defaults of the fields whose zero value means their default.
const (
	defaultHypothesisCount      = 5
	defaultTopK                 = 10
	defaultMaxMemories          = 8
	defaultInjectionTokenBudget = 2000
	defaultWindowTokenBudget    = 4000
	defaultTimeout              = 2 * time.Second
	defaultQueryTokenLimit      = 512
	defaultFusionK              = 60
	defaultGateChance           = 0.05
	defaultEmbedBatch           = 256
	defaultTurnCacheSize        = 64
	defaultRetryDelay           = 30 * time.Second
)

// minCacheSecret is the shortest Config.CacheSecret, in bytes.
const minCacheSecret = 16

// DefaultConfig returns the default settings: ModeLLM, 5 hypotheses, the
// top 10 memories per query, 1 hop of graph expansion, at most 8 memories
// injected, a minimum score of 0, an injection budget of 2000 tokens, a
// window of 4000 tokens, a timeout of 2s, queries of at most 512 tokens,
// the lexical ranking fused with the vector ranking at equal weight with
// k = 60, the relevance gate on with a chance of 0.05, and outdated memories
// labelled (when the host sets a StaleCheck). HypothesisModel is empty: the
// provider's default model. The
// engine logs nothing, keeps its cache beside the memories, embeds 256
// texts per call, keeps 64 turns' results, searches with GOMAXPROCS
// goroutines and retries an incomplete build after 30s.
func DefaultConfig() Config {
	return Config{
		Mode:                 ModeLLM,
		HypothesisCount:      defaultHypothesisCount,
		TopK:                 defaultTopK,
		HopDepth:             1,
		MaxMemories:          defaultMaxMemories,
		MinScore:             0,
		InjectionTokenBudget: defaultInjectionTokenBudget,
		WindowTokenBudget:    defaultWindowTokenBudget,
		Timeout:              defaultTimeout,
		QueryTokenLimit:      defaultQueryTokenLimit,
		LexicalWeight:        1,
		FusionK:              defaultFusionK,
		GateChance:           defaultGateChance,
		EmbedBatch:           defaultEmbedBatch,
		TurnCacheSize:        defaultTurnCacheSize,
		Parallelism:          runtime.GOMAXPROCS(0),
		RetryDelay:           defaultRetryDelay,
		Stale:                StaleLabel,
	}
}

// configHint ends the message of a *memcore.ConfigError about a Config.
const configHint = "start from memretrieve.DefaultConfig() and change what you need: " +
	"a zero field means its default, but HopDepth, MinScore and LexicalWeight mean 0"

// Validate reports every field of c that is out of range as a
// *memcore.ConfigError (which matches memcore.ErrInvalidConfig), or nil. A
// zero field whose zero means its default is in range.
func (c Config) Validate() error { return c.check().Err("memretrieve", configHint) }

// check lists the fields of c that are out of range.
func (c Config) check() memcore.FieldErrors {
	var bad memcore.FieldErrors
	bad.Check(c.Mode == "" || c.Mode.Valid(), "Mode", c.Mode, `"llm" or "identity"`)
	bad.Check(orIn(c.HypothesisCount, 1, 10), "HypothesisCount", c.HypothesisCount, "1–10")
	bad.Check(orIn(c.TopK, 1, 100), "TopK", c.TopK, "1–100")
	bad.Check(c.HopDepth >= 0 && c.HopDepth <= 3, "HopDepth", c.HopDepth, "0–3")
	bad.Check(orIn(c.MaxMemories, 1, 1000), "MaxMemories", c.MaxMemories, "1–1000")
	bad.Check(!math.IsNaN(c.MinScore) && c.MinScore >= -1 && c.MinScore <= 1, "MinScore", c.MinScore, "-1–1")
	bad.Check(c.InjectionTokenBudget >= 0, "InjectionTokenBudget", c.InjectionTokenBudget, "at least 1")
	bad.Check(orIn(c.WindowTokenBudget, 1, 1_000_000), "WindowTokenBudget", c.WindowTokenBudget, "1–1000000")
	bad.Check(c.Timeout >= 0, "Timeout", c.Timeout, "more than 0")
	bad.Check(orIn(c.QueryTokenLimit, 1, 1_000_000), "QueryTokenLimit", c.QueryTokenLimit, "1–1000000")
	bad.Check(!math.IsNaN(c.LexicalWeight) && c.LexicalWeight >= 0 && c.LexicalWeight <= 10, "LexicalWeight", c.LexicalWeight, "0–10")
	bad.Check(orIn(c.FusionK, 1, 1000), "FusionK", c.FusionK, "1–1000")
	bad.Check(c.GateChance == 0 || c.GateChance >= 0.0001 && c.GateChance <= 1, "GateChance", c.GateChance, "0.0001–1 (1: the gate off)")
	bad.Check(len(c.CacheSecret) == 0 || len(c.CacheSecret) >= minCacheSecret, "CacheSecret",
		memcore.Description(fmt.Sprintf("a secret of %d bytes", len(c.CacheSecret))), fmt.Sprintf("none or at least %d bytes", minCacheSecret))
	bad.Check(orIn(c.EmbedBatch, 1, 100_000), "EmbedBatch", c.EmbedBatch, "1–100000")
	bad.Check(c.TurnCacheSize >= -1 && c.TurnCacheSize <= 100_000, "TurnCacheSize", c.TurnCacheSize, "-1–100000 (-1: no per-turn cache)")
	bad.Check(orIn(c.Parallelism, 1, 4096), "Parallelism", c.Parallelism, "1–4096")
	bad.Check(c.RetryDelay >= 0, "RetryDelay", c.RetryDelay, "more than 0")
	bad.Check(c.Stale.Valid(), "Stale", c.Stale, `"label", "drop" or "ignore"`)
	return bad
}

// orIn reports whether v is 0 (its default) or within lo–hi.
func orIn(v, lo, hi int) bool { return v == 0 || v >= lo && v <= hi }

// withDefaults returns c with each zero field that means its default set
// to that default.
func (c Config) withDefaults() Config {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	if c.Mode == "" {
		c.Mode = ModeLLM
	}
	def(&c.HypothesisCount, defaultHypothesisCount)
	def(&c.TopK, defaultTopK)
	def(&c.MaxMemories, defaultMaxMemories)
	def(&c.InjectionTokenBudget, defaultInjectionTokenBudget)
	def(&c.WindowTokenBudget, defaultWindowTokenBudget)
	def(&c.QueryTokenLimit, defaultQueryTokenLimit)
	def(&c.FusionK, defaultFusionK)
	def(&c.EmbedBatch, defaultEmbedBatch)
	def(&c.TurnCacheSize, defaultTurnCacheSize)
	def(&c.Parallelism, runtime.GOMAXPROCS(0))
	if c.GateChance == 0 {
		c.GateChance = defaultGateChance
	}
	if c.Timeout == 0 {
		c.Timeout = defaultTimeout
	}
	if c.RetryDelay == 0 {
		c.RetryDelay = defaultRetryDelay
	}
	if c.Stale == "" {
		c.Stale = StaleLabel
	}
	return c
}
