// Package settings loads forgemem's settings into one typed value, the
// same way for the forgemem command and for a Go agent that embeds
// forgemem, and finds the memory folders.
//
// # Sources
//
// [Load] reads, later sources winning:
//
//  1. the defaults;
//  2. the user's ~/.forge/config.yaml;
//  3. the repository's .forge/config.yaml;
//  4. the file named by --config or FORGEMEM_CONFIG;
//  5. the environment: FORGEMEM_<KEY> (FORGEMEM_CADENCE_TURNS,
//     FORGEMEM_PROVIDER, …), OPENAI_API_KEY, GEMINI_API_KEY and
//     OPENAI_BASE_URL;
//  6. the flags the user set (--cadence-turns, --provider, …).
//
// A settings file keeps forgemem's keys under memory: and may hold the
// host agent's own settings beside them:
//
//	memory:
//	  provider: openai
//	  embedding_model: text-embedding-3-small
//	  retrieval_model: gpt-4o-mini
//	  cadence_turns: 3
//
// [Keys] lists every key with its variable, flag, default, range and
// trust rule; [Reference] renders them as a markdown table. API keys come
// from the environment only. Everything Load reads is checked: an unknown
// key (with a "did you mean"), a value of the wrong type or out of range, a
// malformed or unreadable file, an API key written in a file, an unknown
// FORGEMEM_ variable or a bad flag value is an *[Error] naming the file and
// line, variable or flag, and Load reports every problem at once as
// [Errors] (its message lists the first 20). Values are never clamped, and
// a value that looks like a secret is never repeated in a message.
//
// Top-level keys other than memory: belong to the host agent and are left
// alone, except two mistakes: a forgemem key written outside memory:
// (retrieval_top_k:, also as retrieval-top-k or FORGEMEM_RETRIEVAL_TOP_K;
// not enabled, provider and base_url, which host agents use too) and a name
// one edit away from memory (memroy:, Memory:), both errors naming what was
// meant.
//
// # Trust
//
// A repository's .forge/config.yaml is someone else's input: a clone can
// commit any settings. Until the user trusts the file, it may only narrow
// what happens; the values that decide where data and API keys go, choose
// models or turn something on are ignored, each with a [Warning] in
// [Settings.Warnings] for the host to show. Each key declares its rule
// ([Trust], [Key].Untrusted): [TrustNotNeeded] for local tuning,
// [TrustToWiden] where some values narrow (memory.enabled: false, a
// lower budget) and others widen, [TrustRequired] for memory.provider,
// memory.base_url and the models. [TrustStore] records the trusted files in
// ~/.forge/trusted.json — each one's path and SHA-256 digest, as direnv
// allow does — so a file that changes needs trusting again. The user's own
// file, the --config file, the environment and the flags are the user's
// choices and always apply.
//
// Every settings file is read as a regular file only, never waiting on a
// FIFO or a device, and at most [MaxFileSize] (1 MiB) bytes. A repository's
// file that is a symbolic link is refused; the user's own may be one (dotfile
// managers make them), but what it leads to is held to the same rules.
//
// Load takes everything from [Options] — the working directory, the home
// folder, the environment and the flags — and never reads the process's
// environment itself; [OSOptions] fills Options in from the process.
//
// # The memory folders
//
// The repository is the nearest ancestor of the working directory holding
// .git (a directory, or a file as in a git worktree): its memories are in
// <repo>/.forge/memory/ and its settings in <repo>/.forge/config.yaml. The
// user's are in ~/.forge/memory/ and ~/.forge/config.yaml. --repo-dir and
// --user-dir (FORGEMEM_REPO_DIR, FORGEMEM_USER_DIR) name other memory
// folders; ~ is expanded in every path given. Outside a repository the
// repository scope is off (Paths.RepoDir is empty); a command that needs
// it returns [Paths.RequireRepo]'s error, which wraps [ErrNoRepository].
//
// # Using the settings
//
// [Settings.RetrieveConfig] is the memretrieve.Config for the retrieval
// engine, [Settings.CaptureConfig] the memcapture.Config for the capture
// pipeline and its observers, and the fields and [Settings.APIKey] are what
// a provider factory needs.
// Settings.Enabled false (memory.enabled: false, for example in one
// repository's file) means the host wires neither capture nor retrieval;
// [Settings.RetrievalOff] says why retrieval is off when it is.
// [Settings.Source] and [Settings.Values] say where each value came from.
//
// # Errors
//
// [ErrInvalidConfig] is memcore.ErrInvalidConfig: every [Error] of [Load]
// matches it, as does every configuration error of forgemem's library
// modules (a *memcore.ConfigError from a Config's Validate), so one
// errors.Is check catches both.
//
// This package imports memcapture and memretrieve for their types, and no
// provider module: loading settings pulls no model SDK into a build.
package settings
