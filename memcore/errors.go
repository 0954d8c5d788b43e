package memcore

import (
	"errors"
	"fmt"
)

// Storage errors. Functions wrap them with context; match with errors.Is.
var (
	// ErrNotFound: no memory has the requested id.
	ErrNotFound = errors.New("memory not found")
	// ErrAlreadyExists: a memory with that id is already stored; files are
	// never overwritten, and the stored one is left as it was.
	ErrAlreadyExists = errors.New("memory already exists")
	// ErrInvalidID: the id is not "mem_" followed by a lower-case UUID
	// (8-4-4-4-12 hexadecimal digits). Nothing is touched on the file system
	// for such an id, so it can never escape a memory folder.
	ErrInvalidID = errors.New("invalid memory id")
	// ErrInvalidMemory: a memory breaks the schema (see MemoryFile.Validate).
	ErrInvalidMemory = errors.New("invalid memory")
	// ErrMalformed: bytes are not a memory file: no front matter, an
	// unclosed one, or YAML that does not decode into the schema's types.
	ErrMalformed = errors.New("malformed memory file")
	// ErrMergeConflict: a memory file, or a memory's content, holds an
	// unresolved git merge conflict (<<<<<<<, ======= and >>>>>>> lines),
	// as a merge of two branches that changed the same memory leaves it.
	// A file that does is malformed (the error wraps ErrMalformed too): it
	// is not read, since both sides would be recalled as one memory. A
	// memory whose content does is invalid (it wraps ErrInvalidMemory).
	ErrMergeConflict = errors.New("unresolved merge conflict")
	// ErrUnknownScope: a scope argument is not one of repo, user.
	ErrUnknownScope = errors.New("unknown scope")
	// ErrScopeOff: the store has no folder for the scope (a FileStore made
	// outside a repository has no repo scope), so nothing can be written to
	// or listed from it.
	ErrScopeOff = errors.New("scope is off")
	// ErrConflict: a memory supersedes a version that already has a
	// successor, so writing it would fork the chain. Stores refuse such a
	// write with a [*ConflictError], which wraps ErrConflict and names the
	// chain's current head to supersede instead.
	ErrConflict = errors.New("conflict")
	// ErrTooLarge: a memory file is larger than [MaxFileBytes], so a
	// [FileStore] does not read it, or a memory would make one (a
	// [*TooLargeError] says how large).
	ErrTooLarge = errors.New("memory file too large")
	// ErrUnsafeFolder: a memory folder is a symbolic link (or not a folder),
	// which a [FileStore] never follows: a repository can commit a link that
	// points anywhere, and memories would be written where it points.
	ErrUnsafeFolder = errors.New("unsafe memory folder")
)

// TooLargeError is the error of a memory file larger than [MaxFileBytes]:
// a file a [FileStore] skips without reading it whole (see
// [FileStore.Problems]), or a memory [FileStore.Write] refuses. It wraps
// [ErrTooLarge]; reach it with errors.As.
type TooLargeError struct {
	// Size is the file's size in bytes (for a file that grew while it was
	// read, at least Limit + 1).
	Size int64
	// Limit is the largest size read: [MaxFileBytes].
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%v: %d bytes, over the limit of %d bytes", ErrTooLarge, e.Size, e.Limit)
}

// Unwrap returns [ErrTooLarge], so that errors.Is(err, ErrTooLarge) holds.
func (e *TooLargeError) Unwrap() error { return ErrTooLarge }

// ConflictError is the error of a [MemoryStore.Write] refused because the
// version the memory supersedes already has a successor: another session
// changed the memory first. It wraps [ErrConflict]; reach it with
// errors.As:
//
//	var ce *memcore.ConflictError
//	if errors.As(err, &ce) {
//		next := memcore.NewVersion(ce.Head, sessionID, trigger) // build on the winner's change
//		…
//	}
//
// The memories are copies, the caller's to change.
type ConflictError struct {
	// ID is the id of the memory that was not written.
	ID string
	// Predecessor is the id the memory's Supersedes names.
	Predecessor string
	// Successor is the stored version that already supersedes Predecessor
	// (the best one, see [Graph], should a hand edit have made several).
	Successor *MemoryFile
	// Head is the head of the chain now (see [Graph.Head]): the version to
	// supersede instead. It is Successor unless the chain grew further.
	Head *MemoryFile
}

func (e *ConflictError) Error() string {
	id := func(m *MemoryFile) string {
		if m == nil {
			return "an unknown version"
		}
		return m.Meta.ID
	}
	return fmt.Sprintf("%v: %s is already superseded by %s; the head of its chain is %s",
		ErrConflict, e.Predecessor, id(e.Successor), id(e.Head))
}

// Unwrap returns [ErrConflict], so that errors.Is(err, ErrConflict) holds.
func (e *ConflictError) Unwrap() error { return ErrConflict }

// ErrInvalidConfig is matched, with errors.Is, by every configuration error
// of forgemem's modules: a constructor given a Config field or an argument
// out of range, a bad settings file. Such errors are a *[ConfigError] (or,
// in the settings module, carry one file-and-line error per bad key), for
// example
//
//	memcore: invalid config: Parallelism is -1, want at least 1 (0 means runtime.GOMAXPROCS(0))
//
// A package that names an ErrInvalidConfig of its own holds this same
// value.
//
// The message names every bad field, the value given and the values
// allowed. Values are never clamped silently.
var ErrInvalidConfig = errors.New("invalid config")
