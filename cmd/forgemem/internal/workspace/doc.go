// Package workspace holds what a person can do with their agent's
// memories — list, show, search, recall, capture, remember, forget, purge,
// validate, count, export and graph them — as operations returning typed
// results, for the forgemem command and the MCP server alike. Nothing here
// prints: the caller renders the results.
//
// [Open] takes loaded settings (package settings) and opens the memory
// folders as a [memcore.FileStore]; the model providers (fake, openai or
// gemini, see [NewModels]) and the retrieval engine are made on first use,
// so that managing memories never needs an API key. Every operation that
// takes a memory id also takes a unique prefix of one ([Workspace.Resolve]).
//
// The retrieval engines live as long as the workspace and rebuild their
// index only when the memory folders changed. A long-lived process (the
// MCP server, the recall server) sets [Options.LiveDir]: the engines then
// list the folders from memory, kept exact by the system's file events
// (package live), and [Workspace.Changed] says when a file changed, so
// that [Workspace.PrepareRecall] can bring the index up to date before the
// next recall asks.
//
// Writes follow the file format's rules: a change is a new version that
// supersedes the chain's head, forgetting is a retired version
// ([Workspace.Forget]) that keeps the history, and only [Workspace.Purge]
// deletes files — every version of a chain, with its cached vectors. Text a
// person gives [Workspace.Remember] is redacted (package
// github.com/forgemem/forgemem/memcore/redact) before it is written.
//
// A repo memory's anchors — the paths and symbols of the repository it
// names (package github.com/forgemem/forgemem/memcore/anchor) — are
// recorded when Remember or a capture pass writes it, and checked against
// the working tree where the command uses memories: recall labels or drops
// an outdated one (memory.stale), search and show say why it may be
// outdated, [ListOptions].Stale lists them, Validate reports them (kind
// stale), and [Workspace.FixStale] proposes new versions for those that
// name renamed paths.
//
// Errors wrap the sentinels of this package ([ErrDisabled],
// [ErrRetrievalOff], [ErrNeedsModel], [ErrProviderSetup], [ErrAmbiguous],
// [ErrInvalidInput], [ErrProvider]) or of memcore and settings
// (memcore.ErrNotFound, settings.ErrNoRepository), and say what to do.
package workspace
