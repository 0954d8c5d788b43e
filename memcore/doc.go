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
// writes; [MemStore] keeps them in memory. A version gets at most one successor: a
// write that supersedes a version already superseded fails with a
// [*ConflictError] ([ErrConflict]) naming the chain's head, and FileStore
// makes that check exclusive across processes with a lock file in each
// folder. A FileStore treats its folders as untrusted input: it reads no
// memory file larger than [MaxFileBytes], follows no symbolic link, and
// refuses a memory folder that is one ([ErrUnsafeFolder]). Both pass the conformance suite in
// github.com/forgemem/forgemem/conformance/storetest.
//
// # Writing
//
// [Writer] is how every write path of forgemem writes a memory: a version
// that loses a race to another writer is built on the winner's version
// (its edges and category merged) and written after it, a bounded number
// of times ([ErrTooManyConflicts]), and not written when it then repeats
// it. [Graph.Duplicate] is the duplicate check every write path makes
// first.
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
// and [Retry]. [StripToolContent], [CapWindow] and [RedactWindow] build
// the conversation windows that capture and retrieval send to models:
// without tool content, within a token budget, and with the secrets
// redacted.
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
// # Configuration
//
// Every configurable type of forgemem's library modules is configured the
// same way, and this package holds what they share. A constructor takes one
// struct value as its last parameter — [NewFileStore] takes a
// [FileStoreConfig] — and wiring with a default (a zerolog.Logger, a clock,
// an embedder, a callback) is a field of it. [DefaultFileStoreConfig]
// returns the defaults, and [FileStoreConfig.Validate] reports every field
// out of range at once, as a *[ConfigError] listing each [FieldError];
// nothing is ever clamped. Every configuration error of every module
// matches [ErrInvalidConfig] with errors.Is.
//
// A zero field means its default wherever zero has no meaning of its own,
// so FileStoreConfig{} is DefaultFileStoreConfig(). Where "none" or "off"
// is a setting, a negative value says it, never zero. A package one of
// whose fields has a zero that means something other than its default says
// "start from DefaultConfig()" in its documentation and in its Validate
// hint.
//
// # Logging
//
// Nothing in this package prints. Stores log through
// [FileStoreConfig].Logger; its zero value logs nothing.
package memcore
