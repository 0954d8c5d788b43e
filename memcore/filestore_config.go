package memcore

import (
	"runtime"

	"github.com/rs/zerolog"
)

// FileStoreConfig holds the settings of a [FileStore], given to
// [NewFileStore]. A zero field means its default, so FileStoreConfig{} is
// [DefaultFileStoreConfig].
type FileStoreConfig struct {
	// Logger receives a line for every skipped file, repair and other
	// event worth one. Its zero value logs nothing (the default).
	Logger zerolog.Logger
	// Parallelism is how many files the store parses at once when it
	// lists: at least 0; 0 means runtime.GOMAXPROCS(0), the default.
	Parallelism int
	// DeferCreate, when set, makes NewFileStore create no folder: a
	// folder that does not exist is listed as empty and read as holding
	// no memory, and the first Write into it creates it (mode 0750), as a
	// Write makes again a folder deleted by hand. For a program that
	// reads memories and must leave no folder behind where none was (a
	// mistyped path). Default false: NewFileStore creates both folders.
	DeferCreate bool
}

// DefaultFileStoreConfig returns the defaults of a [FileStore]: no logging,
// as many files parsed at once as runtime.GOMAXPROCS(0), and the folders
// created by NewFileStore.
func DefaultFileStoreConfig() FileStoreConfig {
	return FileStoreConfig{Parallelism: runtime.GOMAXPROCS(0)}
}

// Validate reports every field of c out of range at once, in a
// *[ConfigError] (which matches [ErrInvalidConfig]), or returns nil.
func (c FileStoreConfig) Validate() error {
	var bad FieldErrors
	bad.Check(c.Parallelism >= 0, "Parallelism", c.Parallelism, "at least 1 (0 means runtime.GOMAXPROCS(0))")
	return bad.Err("memcore", "")
}

// withDefaults returns c with every zero field replaced by its default.
func (c FileStoreConfig) withDefaults() FileStoreConfig {
	if c.Parallelism == 0 {
		c.Parallelism = runtime.GOMAXPROCS(0)
	}
	return c
}
