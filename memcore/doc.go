// Package memcore is the storage core of forgemem, long-term memory for AI
// coding agents: the memory data model and file format, the stores, version
// chains and the memory graph, and the contracts that LLM and embedding
// providers implement.
//
// # Memories and files
//
// A memory is a [MemoryFile]: front-matter metadata ([MemoryMeta]) and a
// markdown body. Each is stored as one human-readable file named by its id
// (mem_<uuid>.md) in its scope's folder — .forge/memory/ in the repository
// for [ScopeRepo], ~/.forge/memory/ for [ScopeUser]. [Parse] and [Serialize]
// convert between bytes and memories; Parse accepts files edited by hand.
//
// Files are append-only. A change is a new memory whose Supersedes names its
// predecessor (see [NewVersion]); the newest of a chain is its head. Only a
// person deletes files.
//
// # Stores
//
// [MemoryStore] is the interface the capture and retrieval packages use.
// [FileStore] keeps memories in folders with atomic, never-overwriting
// writes; its options ([WithLogger], [WithParallelism]) are checked, and
// one out of range is an error wrapping [ErrInvalidConfig], never clamped.
// [MemStore] keeps them in memory. A version gets at most one successor: a
// write that supersedes a version already superseded fails with a
// [*ConflictError] ([ErrConflict]) naming the chain's head, and FileStore
// makes that check exclusive across processes with a lock file in each
// folder. Both pass the conformance suite in
// github.com/forgemem/forgemem/conformance/storetest.
//
// # Graph
//
// [Graph] answers chain and neighbour questions over a list of memories —
// the head of a chain, the line to it, its history with the branches of
// forks, related memories within N hops — and terminates on hand-made
// cycles, forks and dangling links, resolving a fork to one head the same
// way for every reader.
// [VersionChain] and [LatestVersion] do the same through a store.
//
// # Providers
//
// [LLMProvider] and [Embedder] are the contracts of model providers, with
// the error taxonomy ([ErrRateLimited], [ErrUnavailable], …), [IsTransient]
// and [Retry]. [StripToolContent] and [CapWindow] build the conversation
// windows that capture and retrieval send to models.
//
// # Sub-packages
//
// Package github.com/forgemem/forgemem/memcore/redact replaces secrets in
// text before it is stored; every write path uses it. Package
// github.com/forgemem/forgemem/memcore/atomicfile writes files that readers
// never see half-written; FileStore uses it. Package
// github.com/forgemem/forgemem/memcore/anchor records the paths and symbols
// a memory names ([Anchor]) and checks them against the working tree, so
// that a memory whose code moved or went away is found and labelled stale.
//
// # Logging
//
// Nothing in this package prints. Stores log through the zerolog.Logger
// given with [WithLogger]; by default they log nothing.
package memcore
