package anchor

import (
	"cmp"
	"time"

	"github.com/forgemem/forgemem/memcore"
)

// Defaults of [Config]: what a zero field means.
const (
	// DefaultGitTimeout bounds one git command ([Config].GitTimeout).
	DefaultGitTimeout = 2 * time.Second
	// DefaultMaxFileBytes is the largest file read ([Config].MaxFileBytes).
	DefaultMaxFileBytes = 1 << 20
	// DefaultMaxFiles bounds a walk of the tree ([Config].MaxFiles).
	DefaultMaxFiles = 20_000
	// DefaultMaxAnchors bounds the anchors of one memory
	// ([Config].MaxAnchors).
	DefaultMaxAnchors = 16
	// DefaultTreeTTL is how long an answer about the whole tree is reused
	// ([Config].TreeTTL).
	DefaultTreeTTL = 10 * time.Second
)

// Config holds the settings of a [Checker]. Root is required; a zero field
// of the others means its default, and a field out of range makes [New]
// fail, naming every such field. [DefaultConfig] fills every field in.
type Config struct {
	// Root is the repository's top folder: anchors' paths are relative to
	// it. It is the folder above the repository's .forge folder.
	Root string
	// GitProgram is the git program run to follow renames and to record
	// the commit a memory was written at; empty means "git" found on
	// PATH. A missing program is not an error: renames are then not
	// followed (a renamed path reads as gone) and no commit is recorded.
	GitProgram string
	// NoGit never runs git, as if it were missing.
	NoGit bool
	// GitTimeout bounds each git command: more than 0; 0 means
	// [DefaultGitTimeout].
	GitTimeout time.Duration
	// MaxFileBytes is the largest file read to find a symbol or compute a
	// blob id; a larger file counts as present but its symbols are not
	// checked. 1 KiB–64 MiB; 0 means [DefaultMaxFileBytes].
	MaxFileBytes int64
	// MaxFiles bounds the files one walk of the tree looks at (to find an
	// identifier the text does not place, or a file named without its
	// folder). 1–1,000,000; 0 means [DefaultMaxFiles].
	MaxFiles int
	// MaxAnchors bounds the anchors recorded for one memory. 1–256; 0
	// means [DefaultMaxAnchors].
	MaxAnchors int
	// TreeTTL is how long an answer that needs a walk of the whole tree —
	// whether an anchor without a path is still defined somewhere — is
	// reused before the tree is walked again. 0 means [DefaultTreeTTL]; a
	// negative value walks the tree at every such check.
	TreeTTL time.Duration
	// Clock tells the time for TreeTTL; nil means time.Now.
	Clock func() time.Time
}

// DefaultConfig returns the default settings for the repository at root.
func DefaultConfig(root string) Config {
	return Config{
		Root:         root,
		GitTimeout:   DefaultGitTimeout,
		MaxFileBytes: DefaultMaxFileBytes,
		MaxFiles:     DefaultMaxFiles,
		MaxAnchors:   DefaultMaxAnchors,
		TreeTTL:      DefaultTreeTTL,
		Clock:        time.Now,
	}
}

// Validate reports every field of c out of range at once, as a
// *memcore.ConfigError (which matches memcore.ErrInvalidConfig), or nil.
func (c Config) Validate() error {
	var bad memcore.FieldErrors
	bad.Check(c.Root != "", "Root", c.Root, "the repository's top folder")
	bad.Check(c.GitTimeout >= 0, "GitTimeout", c.GitTimeout, "more than 0 (0 means 2s)")
	bad.Check(c.MaxFileBytes == 0 || c.MaxFileBytes >= 1<<10 && c.MaxFileBytes <= 64<<20, "MaxFileBytes", c.MaxFileBytes, "1024–67108864 (0 means 1048576)")
	bad.Check(c.MaxFiles >= 0 && c.MaxFiles <= 1_000_000, "MaxFiles", c.MaxFiles, "1–1000000 (0 means 20000)")
	bad.Check(c.MaxAnchors >= 0 && c.MaxAnchors <= 256, "MaxAnchors", c.MaxAnchors, "1–256 (0 means 16)")
	return bad.Err("anchor", "start from anchor.DefaultConfig(root) and change only what you need")
}

// resolved returns c with every zero field replaced by its default.
func (c Config) resolved() Config {
	c.GitTimeout = cmp.Or(c.GitTimeout, DefaultGitTimeout)
	c.MaxFileBytes = cmp.Or(c.MaxFileBytes, DefaultMaxFileBytes)
	c.MaxFiles = cmp.Or(c.MaxFiles, DefaultMaxFiles)
	c.MaxAnchors = cmp.Or(c.MaxAnchors, DefaultMaxAnchors)
	c.TreeTTL = cmp.Or(c.TreeTTL, DefaultTreeTTL)
	if c.Clock == nil {
		c.Clock = time.Now
	}
	return c
}
