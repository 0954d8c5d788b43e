// Package memcapture is forgemem's capture pipeline: it watches an AI coding
// agent's conversation and, in the background, writes what is worth
// remembering across sessions — preferences, project conventions, decisions
// with their rationale, corrections — as memory files through a
// [memcore.MemoryStore].
//
// # Wiring
//
// The agent makes a [Pipeline] (the classifier model, the store, and the
// retrieval engine's rebuild callback), starts it, and hands an [Observer]
// to its loop:
//
//	p, err := memcapture.NewPipeline(llm, store, memcapture.Config{
//		ClassifierModel: "gpt-4o-mini",
//		Cadence:         cadenceTurns,
//		Rebuild:         engine.TriggerRebuild,
//	})
//	...
//	if err := p.Start(ctx); err != nil { ... }
//	defer p.Close(shutdownCtx)
//	obs, err := memcapture.NewObserver(p)
//	...
//	agent.OnTurnComplete = obs.OnTurnComplete // after every turn
//	compaction.Subscribe(obs.OnCompaction)    // when a goal arc is summarised
//
// Windows are []memcore.Message, so the host passes the messages it already
// has. A host without an Observer calls [Pipeline.Enqueue] with a
// [TriggerEvent] whose Kind is [memcore.TriggerCadence] (a turn) or
// [memcore.TriggerCompaction]; the memories a pass writes record that kind
// as their trigger.
//
// # Configuration
//
// [Config] holds every setting of a pipeline and its observers: the
// classifier's model, the cadence, the rebuild callback, the embedder, the
// logger, the clock, the budgets and limits. A zero field means its
// default, so Config{} is [DefaultConfig]; where "none" is a setting, a
// negative value says it (ExistingTokens). [NewPipeline], like
// [Config.Validate], reports every field out of range at once in a
// *memcore.ConfigError, matching memcore.ErrInvalidConfig (and
// [ErrInvalidConfig], the same value); nothing is clamped.
//
// # The agent is never slowed
//
// [Observer.OnTurnComplete] and [Observer.OnCompaction] copy the message
// slice and hand it over under a short lock; they never wait for the
// classifier. A newer turn trigger replaces a waiting one (each carries the
// whole window, so nothing is lost); compaction triggers queue separately
// and are processed first. One goroutine does the work, so at most one
// classifier call is in flight.
//
// # A capture pass
//
//  1. Tool messages and tool blocks are stripped
//     ([memcore.StripToolContent]) and the window is capped to a token
//     budget in steps: past the budget, whole oldest messages are dropped
//     half a budget at a time, so that the window's beginning — and the
//     prompt's, for a provider's prompt cache — stays the same from one
//     pass to the next (see [Config].WindowTokens). Its secrets are then
//     replaced by "[REDACTED]" ([memcore.RedactWindow]): no conversation
//     text reaches the classifier or the embedder unredacted, and since
//     redaction is deterministic the window's beginning stays the same.
//  2. A window identical to the last classified one is skipped.
//  3. The existing memories' chain heads are listed for the classifier as
//     "- [id] (scope/category) first line" (redacted, for a memory written
//     by hand; so is a memory's text embedded to rank it), as many as fit
//     a token budget,
//     most similar to the window first when an embedder is configured,
//     newest first otherwise. The list is pinned: chosen once for the
//     window's beginning in a session and sent unchanged by the passes
//     that follow, until the window steps forward; the heads written since
//     it was chosen are listed apart, newest first, within the same budget
//     (past it, the list is chosen anew).
//  4. The classifier gets its instructions (the system prompt, never
//     changed), then one message: the pinned list, the window oldest first,
//     and the memories written since the list was pinned — what stays the
//     same from one pass to the next first, so that consecutive prompts
//     share the longest prefix. It is asked for the JSON object
//     {"memories": [...]} through a response schema named
//     [ClassifierSchemaName]. Its reply is read tolerantly (code fences,
//     wrapping objects, surrounding prose) and asked for once more if
//     unreadable. Transient errors are retried within the pass deadline;
//     permanent ones skip the pass.
//  5. Every item is validated (enums, links, version chains, size,
//     duplicates), secrets in its content are replaced by "[REDACTED]"
//     (package github.com/forgemem/forgemem/memcore/redact), and the
//     memories are written; the rebuild callback is then called once. A
//     write refused because another session superseded the same memory
//     first (memcore.ErrConflict) is built on the chain's new head, with
//     that session's edges, and written after it, or dropped as a
//     duplicate of it: the pipeline writes through memcore.Writer, as
//     every write path of forgemem does.
//
// # Trust
//
// The classifier gives each memory its evidence: the numbered messages it
// comes from and a quote. The pipeline checks the quote against the
// redacted window and records who stated the memory (memcore.Source: user
// for the user's own words, assistant, or mixed for pasted text and
// evidence not found), the quote and the time of its message. Written
// through memcore.Writer under [Config].Review, a memory that reads like an
// instruction to the agent's tools, quotes tool output or is not the
// user's waits for a person's review (status pending); memories that wait
// are never offered to the classifier as settled facts, nor are those the
// host holds ([Config].HoldCheck).
//
// Everything that goes wrong is logged through [Config].Logger (silent by
// default), counted in [Stats], and the latest
// failure kept in [Stats].LastFailure with its cause; nothing is passed back
// to the agent, and nothing here can crash it. A provider that ignores its
// context is abandoned at the pass deadline ([ErrStalled]).
package memcapture
