package memcore

import "errors"

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
	// ErrUnknownScope: a scope argument is not one of repo, user.
	ErrUnknownScope = errors.New("unknown scope")
	// ErrScopeOff: the store has no folder for the scope (a FileStore made
	// outside a repository has no repo scope), so nothing can be written to
	// or listed from it.
	ErrScopeOff = errors.New("scope is off")
)

// ErrInvalidConfig is wrapped by the error of a constructor given an option
// out of range, for example
//
//	memcore: invalid config: WithParallelism is 0, want at least 1
//
// The message names every bad option, the value given and the values
// allowed. Options are never clamped silently.
var ErrInvalidConfig = errors.New("invalid config")
