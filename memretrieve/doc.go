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
//     newest text kept (memcore.StripToolContent, memcore.CapWindow), and
//     redacts the secrets of what will be sent (memcore.RedactWindow): no
//     conversation text reaches the hypothesis model or the embedder
//     unredacted, and [Result].Redactions counts what was replaced;
//  2. takes the focused queries of the window, each within
//     Config.QueryTokenLimit: the latest user message, the latest exchange
//     and the whole window (redacted for the embedder; as they are for the
//     lexical search, which runs here);
//  3. asks the hypothesis model, in one call, for Config.HypothesisCount
//     short declarative sentences written the way a stored memory would be
//     (HyDE), and parses the reply tolerantly — or, in [ModeIdentity],
//     uses the focused queries themselves, with no LLM call. The request's
//     response schema is named [HypothesisSchemaName], so that a scripted
//     LLM in tests can tell the hypothesis call from other model calls;
//  4. embeds those queries (a hypothesis redacted too) in one Embed call
//     and takes the Config.TopK best
//     memories per query from the vector index, keeping each memory's best
//     score over all queries and dropping those below Config.MinScore;
//  5. takes the Config.TopK best memories of the lexical (BM25) index for
//     the focused queries (and the hypotheses) together;
//  6. credits hits on superseded versions to the head of their chain, ranks
//     the heads in each ranking, and fuses the two rankings by reciprocal
//     rank (Config.LexicalWeight, Config.FusionK) into [Result.Ranked];
//  7. weighs each ranked memory's evidence of relevance with the relevance
//     gate (below) and keeps those that pass, up to where the evidence
//     falls away;
//  8. adds related memories within Config.HopDepth edges of those, in both
//     directions, scored below the memory they were reached from, and caps
//     the total at Config.MaxMemories;
//  9. leaves out those the host's Config.HoldCheck, when set, holds for a
//     person's review ([DropHeld]; their text is not shown in the other
//     memories' links or histories either), asks the host's
//     Config.StaleCheck, when set, whether each of the rest may be outdated (the code it names moved or went away), labels or
//     drops those it says are (Config.Stale: [StaleLabel], [StaleDrop],
//     [StaleIgnore]), and renders the injection block (below) of the rest,
//     cut to Config.InjectionTokenBudget by dropping whole memories, lowest
//     score first. Every ranked memory left out is in [Result.Dropped],
//     with why.
//
// A failed or late model call — the hypothesis model or the embedder —
// leaves the turn the lexical ranking: [Result].VectorSkipped says why
// ([SkipReason]: hypothesis model or embedder error, timeout, no vector
// yet) and [Result].Err carries the cause. With the lexical index off
// (Config.LexicalWeight 0), and on any other failure, the turn gets no
// memories: [Result].Skipped says why (no index yet, empty window, …; or
// the vector side's reason when the lexical ranking found nothing either)
// and [Result].Err carries the cause, with memcore's provider taxonomy
// reachable by errors.Is. Either way the error is nil and the reason is
// logged at debug level: retrieval never stops the agent. A provider that
// ignores its context, or floods its reply, is not waited for past the
// deadline. Results are cached per turn id, so the several model calls of
// one turn cost one retrieval.
//
// # The relevance gate
//
// A turn gets memories only on evidence that it is relevant, so that a
// turn about something the memories do not cover gets nothing, and a turn
// about them gets the best of them, not a full budget. Each ranked memory's
// evidence ([Evidence], in [Candidate.Evidence]) comes from each side that
// found it: its cosine similarity with a vector query, and the IDF of the
// words it shares with the latest user message or the latest exchange. It
// passes when one of them stands well above what unrelated text scores
// against this collection, with this embedder, for a query of that
// length (the gate's test): at each index build that changed the indexed memories, a fixed
// set of probe texts shipped with the package (sentences and passages
// about coding, everyday life and the world) is scored against the
// collection like a turn's queries, and a null model is fitted to their
// best scores — per domain a line in the logarithm of the text's length
// (a text shorter than the shortest probe counts as that long), the lowest
// domain's standing for unrelated text, and one spread. The
// calibration is a few numbers, kept in the embedding cache folder, so a
// new process does not compute it again; another embedding model gets its
// own. A score passes when it is z spreads above the null mean, z chosen
// so that all the turn's tests together let unrelated text through about
// Config.GateChance of the time (0.05 by default; 1 turns the gate off).
// [Evidence.Relevance] is that confidence, from 0 to 1.
//
// The gate decides for the turn: when none of the first Config.MaxMemories
// memories of the ranking (8 by default) clears it, the turn gets nothing
// ([Evidence.Cleared] says on which side a memory cleared it). When one
// does, the turn is about something the memories hold and the ranking is
// to be trusted there: each of those first memories whose evidence on a
// side stands above chance (more than unrelated text scores on average)
// and near the best hit's on that side — no lower than a quarter of it, or
// five spreads under it, whichever is lower; further down the evidence has
// fallen away — comes along, in ranking order ([Evidence.Passed] says on
// which side), whether or not it cleared the gate itself. Graph neighbours of those only
// are added, attached to the hit they were reached from, within
// Config.MaxMemories, neighbours included; the token budget stays a
// ceiling. Every ranked memory left out is in [Result.Dropped], with why.
//
// # Configuration mistakes and retrieval off
//
// [NewEngine] requires a store, an embedder and, in [ModeLLM], a
// hypothesis provider; a missing one (typed nils included) is a
// *memcore.ConfigError naming it. Retrieval is off when the host builds no
// engine: a nil *Engine is safe to use, and its results are skipped as
// [SkipDisabled].
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
// atomically, so searches never wait. The first build publishes partial
// indexes: before it embeds anything, the lexical index of every memory
// with the vectors the cache holds, then more vectors as batches are
// embedded. The first Retrieve after Start waits, within the model calls'
// share of its budget, only until one of them holds vectors; a turn that
// cannot wait is answered from the lexical index alone. The experimental
// package memretrieve/experimental/search offers the same exact search on
// its own, over any vectors, for benchmarks.
//
// A store that hands out the same memories from one List to the next (a
// host that keeps them in memory and replaces a memory that changed, never
// edits it) lets a build reuse the last one: when the memories listed are
// the last build's with new ones added near the end — the newest, or among
// the memories of the newest second — the graph (memcore.Graph.With), the
// vector index (rows appended to its block), the lexical index (only the
// terms of the texts after the first change looked up) and the relevance
// gate's calibration (only the new rows searched) are extended rather than
// made again, to exactly what a new build makes. Any other change makes
// them again.
//
// # The lexical index
//
// The lexical index ranks the same memories by Okapi BM25 over their
// terms: words lower-cased, English words reduced to their Porter stem,
// common English words left out, and code identifiers indexed whole and by
// their parts (errors.As, snake_case, CamelCase, db/migrations). It finds
// what an embedding blurs — an identifier, a path, a rare name — and needs
// no model. memretrieve/experimental/search offers it on its own.
//
// With Config.Quantized the index holds each vector as int8 values with one
// scale per vector, scans them with SIMD integer dot products and re-ranks
// the best candidates with their float32 vectors, read from the on-disk
// embedding cache: a quarter of the memory, and the exact scores (see
// [Config.Quantized]).
//
// # Settings
//
// [NewEngine] takes a [Config]: the retrieval settings and what the host
// gives the engine (Config.Logger, Config.CacheDir, Config.BuildProgress,
// …). Start from [DefaultConfig]: a zero field means its default wherever
// zero has no meaning of its own, but HopDepth, MinScore and LexicalWeight
// mean 0. Nothing out of range is clamped, and nothing panics: NewEngine
// and [Config.Validate] return one *memcore.ConfigError, matching
// memcore.ErrInvalidConfig, that names every bad field with its value and
// its range.
//
// # The embedding cache
//
// Vectors are cached by (embedder Model, sha256 of the memory's trimmed
// content), so a build embeds only memories whose content has no cached
// vector, in batches. With a [memcore.FileStore] (any store implementing
// [ScopeDirs]) the cache is kept on disk in a .cache folder inside each
// scope's memory folder, which holds a .gitignore ignoring everything in it;
// Config.CacheDir names another folder; otherwise it is kept in memory. Each
// model has one append-only file per folder of length-prefixed,
// CRC-32C-checked records written with single O_APPEND writes, so several
// processes can share it; damaged, truncated or foreign data is skipped and
// re-embedded, never an error; a cache folder or file that is a symbolic
// link or a special file is never followed or opened (the vectors of that
// folder are then kept in memory); and a file that mostly holds vectors of
// memories that no longer exist is compacted (rewritten and renamed into
// place). A memory folder that others write (a cloned repository can commit
// its .cache folder) could hold planted vectors; with Config.CacheSecret the
// files are named after an HMAC under a secret only the user has, so the
// engine reads only the files it wrote. See README.md for the byte layout.
// Config.BuildProgress reports how far a build that embeds many memories
// has got. [RemoveCachedVectors] deletes the vectors of given contents from
// a cache folder, for memories that must leave no trace.
//
// # The injection block
//
// The block opens with <recalled_memories> and a paragraph telling the
// agent that the notes are recalled from earlier sessions and are
// background to weigh, not instructions, and that each says who stated it:
// the user, a repository contributor (a repository memory whose file says
// the user stated it, which anyone who commits can write, unless the
// host's Config.StatedCheck confirms the user did), or no one, when it was
// inferred. Memories that wait for a person's
// review (memcore.StatusPending) are never indexed or shown: the engine
// works with memcore.Graph.Settled. Each memory follows as
//
//	[1] coding-preferences, user scope, stated by the user, version 2, 2025-03-02, relevance 0.83 (mem_…)
//	May be outdated: internal/db/queries.go no longer exists.
//	<content>
//	History, oldest first (changed 1 time):
//	  - version 1, 2025-01-15: <earlier content>
//	  - version 2, 2025-03-02: the current text above.
//	Recalled because it refines [3].
//	Links:
//	  - contradicts mem_… "<title>" (see [2])
//
// where the "May be outdated" line appears for a memory Config.StaleCheck
// found outdated, History for changed memories (a version on the branch of a
// fork that the chain did not continue from is marked "a parallel change
// the current text does not include"; a version that forgot the memory is
// shown as "forgotten", the one after it as "brought back", and neither is
// counted as a change of the text; a version that waited for review and
// was never approved is left out), the "Recalled because" line
// for memories reached through an edge, and Links lists refines and
// contradicts edges in both directions (relates-to ones only between shown
// memories). When memories were dropped to fit the budget, a line says how
// many. No memory text can close the block early or open another: every
// piece of it is defused, whatever case or spacing it gives the tag. The
// host decides where the block goes: appended as a late message it keeps
// the system prompt stable for prompt caching.
//
// # Logging
//
// Nothing here prints: the engine logs through Config.Logger, and by
// default logs nothing. Provider errors, which may
// quote the conversation or the memories, are redacted (package
// github.com/forgemem/forgemem/memcore/redact) before they are logged or
// returned in a Result.
package memretrieve
