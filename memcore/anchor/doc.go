// Package anchor keeps memories true to the code they are about. A memory
// that says "migrations live in db/migrations" or "call GetOrder through
// the repository layer" names paths and identifiers of the repository;
// when the folder moves or the function is deleted, the memory is stale,
// and an agent that acts on it acts on outdated facts. This package
// records those names as the memory's anchors ([memcore.Anchor]) when it
// is written, and checks them against the working tree before the memory
// is used.
//
// # Recording
//
// [Checker.Anchors] returns the anchors of a memory about to be written:
// those a person gave (honoured as given), those a model proposed (kept
// only when the tree has them), and those extracted, deterministically,
// from the text — path-like tokens naming a file or folder of the tree,
// and identifier-like tokens (`code spans`, CamelCase, snake_case, dotted
// names) defined by the files the text names or by exactly one Go package
// of the tree — but for a path the repository's other clones do not have
// (one git ignores, a folder that holds no file). Each anchor with a path
// records the git blob id of the file's content ([BlobID], computed as git
// does, without git) and the commit checked out. [Store] wraps a
// memcore.MemoryStore so that every memory written through it — by a
// capture pipeline, say — gets its anchors so.
//
// # Checking
//
// [Checker.Check] says, anchor by anchor, whether the path is still there
// and the symbol still defined (Go declarations parsed with go/parser; a
// word of the text for other files; the file's folder — its package —
// when the symbol left the file), and, when a path is gone, whether git
// says it was renamed: a file of the index holding the recorded blob (a
// rename that kept the content), or the renames git detects between the
// recorded commit and the index (git diff-index --cached -M). Without git,
// or outside a git work tree, renames are not followed: a renamed path
// reads as gone. [Checker.Stale] is the reason a memory may be outdated,
// in words, or "" — what a retrieval engine's stale check needs.
//
// What a check learns of a file is cached by its size and modification
// time, and what git says by the repository's HEAD and index, so checking
// the anchors of the memories about to be injected costs about a stat per
// path (membench measures it per turn at 10,000 memories). A search of a
// symbol's folder is reused while the folder's listing, the anchored file
// and the file the symbol was found in are unchanged: a symbol that
// appears in another file of the folder by an edit in place alone is seen
// at the next change of the folder or by a new Checker — an outdated label
// can linger that long, a missing one cannot. A path reached through a
// symbolic link counts as present, but nothing is ever read through one.
//
// # Someone else's input
//
// A repository and its memory files are someone else's input. Files are
// opened only as regular files — never through a symbolic link, never
// waiting on a FIFO or a device — and read up to a size cap; walks of the
// tree are bounded and skip hidden folders. Git runs read-only with a
// timeout, without the system's or the user's configuration, without a
// pager, optional locks, a file system monitor or hooks, and reads only
// the index, the objects and, to tell what it ignores, the ignore files
// (.gitignore, info/exclude), never a file's content in the work tree, so
// no filter the repository's configuration names runs.
//
// The package uses only the standard library and memcore.
package anchor
