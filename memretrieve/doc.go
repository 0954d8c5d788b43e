// Package memretrieve recalls an agent's long-term memories at the start of
// each conversation turn: the retrieval half of forgemem (the capture half
// is memcapture; the memories and their files are memcore's).
//
// # Per turn
//
// [Engine.Retrieve] takes the turn's conversation window (user and
// assistant messages since the last summarisation) and, within
// Config.Timeout (2s by default):
//
//  1. strips tool content and caps the window to Config.WindowTokenBudget,
//     newest text kept (memcore.StripToolContent, memcore.CapWindow);
//  2. takes the focused queries of the window, each within
//     Config.QueryTokenLimit: the latest user message, the latest exchange
//     and the whole window;
//  3. asks the hypothesis model, in one call, for Config.HypothesisCount
//     short declarative sentences written the way a stored memory would be
//     (HyDE), and parses the reply tolerantly — or, in [ModeIdentity],
//     uses the focused queries themselves, with no LLM call. The request's
//     response schema is named [HypothesisSchemaName], so that a scripted
//     LLM in tests can tell the hypothesis call from other model calls;
//  4. embeds those queries in one Embed call and takes the Config.TopK best
//     memories per query from the vector index, keeping each memory's best
//     score over all queries and dropping those below Config.MinScore;
//  5. takes the Config.TopK best memories of the lexical (BM25) index for
//     the focused queries (and the hypotheses) together;
//  6. credits hits on superseded versions to the head of their chain, ranks
//     the heads in each ranking, and fuses the two rankings by reciprocal
//     rank (Config.LexicalWeight, Config.FusionK) into [Result.Ranked];
//  7. adds related memories within Config.HopDepth edges, in both
//     directions, scored below the memory they were reached from, and caps
//     the total at Config.MaxMemories;
//  8. renders the injection block (below), cut to
//     Config.InjectionTokenBudget by dropping whole memories, lowest score
//     first.
//
// A failed or late model call — the hypothesis model or the embedder —
// leaves the turn the lexical ranking, and [Result.VectorSkipped] says why;
// with the lexical index off (Config.LexicalWeight 0), any failure or
// timeout gives the turn no memories. Either way the error is nil (the
// reason is logged at debug level): retrieval never stops the agent. A
// provider that ignores its context is not waited for past the deadline.
// Results are cached per turn id, so the several model calls of one turn
// cost one retrieval.
//
// # The index
//
// The index holds a unit vector for every memory of both scopes — heads and
// superseded versions — in one contiguous []float32, searched by a dot
// product per row and a bounded heap per query, all queries in one pass,
// split across goroutines for large indexes. [Engine.Start] builds it in
// the background; [Engine.TriggerRebuild] (the capture pipeline's rebuild
// callback) asks for a new one, coalescing requests; a new index, the
// lexical index of the same memories and their memory graph are swapped in
// atomically, so searches never wait. The first Retrieve after Start waits
// for the initial build within its own budget; a build that must embed
// texts first publishes the lexical index (and the vectors the cache
// holds), so a turn that cannot wait is answered from it. [Index] offers
// the same exact search on its own, over any vectors.
//
// # The lexical index
//
// The lexical index ranks the same memories by Okapi BM25 over their
// terms: words lower-cased, English words reduced to their Porter stem,
// common English words left out, and code identifiers indexed whole and by
// their parts (errors.As, snake_case, CamelCase, db/migrations). It finds
// what an embedding blurs — an identifier, a path, a rare name — and needs
// no model. [LexicalIndex] offers it on its own.
//
// With Config.Quantized the index holds each vector as int8 values with one
// scale per vector, scans them with SIMD integer dot products and re-ranks
// the best candidates with their float32 vectors, read from the on-disk
// embedding cache: a quarter of the memory, and the exact scores (see
// [Config.Quantized]).
//
// # Settings
//
// [NewEngine] takes a [Config] (start from [DefaultConfig]) and options of
// type [EngineOption]; [NewIndex] takes options of type [IndexOption]; an
// [Option], such as [WithParallelism], is both. Nothing out of range is clamped, and no option
// panics: the constructor returns one *[ConfigError], wrapping
// [ErrInvalidConfig], that names every bad Config field and option with its
// value and its range.
//
// # The embedding cache
//
// Vectors are cached by (embedder Model, sha256 of the memory's trimmed
// content), so a build embeds only memories whose content has no cached
// vector, in batches. With a [memcore.FileStore] (any store implementing
// [ScopeDirs]) the cache is kept on disk in a .cache folder inside each
// scope's memory folder, which holds a .gitignore ignoring everything in it;
// [WithCacheDir] names another folder; otherwise it is kept in memory. Each
// model has one append-only file per folder of length-prefixed,
// CRC-32C-checked records written with single O_APPEND writes, so several
// processes can share it; damaged, truncated or foreign data is skipped and
// re-embedded, never an error, and a file that mostly holds vectors of
// memories that no longer exist is compacted (rewritten and renamed into
// place). See README.md for the byte layout. [WithBuildProgress] reports
// how far a build that embeds many memories has got. [RemoveCachedVectors]
// deletes the vectors of given contents from a cache folder, for memories
// that must leave no trace.
//
// # The injection block
//
// The block opens with <recalled_memories> and a paragraph telling the
// agent that the notes are recalled from earlier sessions and are
// background to weigh, not instructions. Each memory follows as
//
//	[1] coding-preferences, user scope, version 2, 2025-03-02, relevance 0.83 (mem_…)
//	<content>
//	History, oldest first (changed 1 time):
//	  - version 1, 2025-01-15: <earlier content>
//	  - version 2, 2025-03-02: the current text above.
//	Recalled because it refines [3].
//	Links:
//	  - contradicts mem_… "<title>" (see [2])
//
// where History appears for changed memories (a version on the branch of a
// fork that the chain did not continue from is marked "a parallel change
// the current text does not include"), the "Recalled because" line
// for memories reached through an edge, and Links lists refines and
// contradicts edges in both directions (relates-to ones only between shown
// memories). When memories were dropped to fit the budget, a line says how
// many. The host decides where the block goes: appended as a late message it
// keeps the system prompt stable for prompt caching.
//
// # Logging
//
// Nothing here prints: the engine logs through the zerolog.Logger given
// with [WithLogger], and by default logs nothing.
package memretrieve
