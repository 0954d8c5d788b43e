package workspace

import (
	"errors"
	"fmt"
	"strings"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/termtext"
)

// The errors of the operations, wrapped with what to do; match them with
// errors.Is.
var (
	// ErrDisabled: memory.enabled is false where the command runs, so
	// capture and retrieval are off there. Management operations still work.
	ErrDisabled = errors.New("memory is turned off here")
	// ErrRetrievalOff: the settings leave retrieval off (no embedding
	// model, or no hypothesis model in llm mode); the message says which
	// key to set.
	ErrRetrievalOff = errors.New("retrieval is off")
	// ErrNeedsModel: the operation needs a real language model, and the
	// configured provider is the offline fake, which has none.
	ErrNeedsModel = errors.New("a real model is needed")
	// ErrProviderSetup: the provider cannot be made from the settings: an
	// API key or a model is missing, or a value is refused. The message
	// names the variable or key to set.
	ErrProviderSetup = errors.New("the model provider is not set up")
	// ErrProvider: the model provider failed while the operation ran (down,
	// rate limited, refusing the key, replying nonsense).
	ErrProvider = errors.New("the model provider failed")
	// ErrPartial: a recall or search that a provider failure left
	// partial, but not empty: the vector ranking failed and the lexical
	// index found memories, or some memories could not be embedded into
	// the index and the others were searched. The result is returned with
	// the error, which also wraps ErrProvider and the cause.
	ErrPartial = errors.New("partial results")
	// ErrAmbiguous: an id prefix matches several memories; see
	// [AmbiguousError] for them.
	ErrAmbiguous = errors.New("ambiguous memory id")
	// ErrInvalidInput: an argument is unusable: blank text, an unknown
	// scope or category, a link that would break the file format's rules.
	ErrInvalidInput = errors.New("invalid input")
	// ErrBadConversation: a conversation given as JSON Lines cannot be
	// read; the message names the line.
	ErrBadConversation = errors.New("unreadable conversation")
	// ErrClaudeCodeTranscript: a conversation given as JSON Lines is a
	// Claude Code transcript (package claudecode reads those), not one
	// {"role", "content"} object per line.
	ErrClaudeCodeTranscript = errors.New("a Claude Code transcript")
	// ErrDuplicate: the text to remember is already the current text of a
	// memory; nothing is written.
	ErrDuplicate = errors.New("already remembered")
	// ErrNotWaiting: the memory to approve or reject does not wait for
	// review: it never did, or it was reviewed (or changed) since it was
	// listed. It comes with [ErrInvalidInput].
	ErrNotWaiting = errors.New("the memory does not wait for review")
	// ErrWaitsForReview: the memory waits for a person's review (forgemem
	// review): it cannot be forgotten, nor changed by an agent, until it
	// is approved or rejected.
	ErrWaitsForReview = errors.New("the memory waits for review")
)

// AmbiguousError is the error of an id prefix that matches several
// memories. It wraps [ErrAmbiguous].
type AmbiguousError struct {
	// Prefix is the id prefix as given.
	Prefix string
	// Candidates are the memories it matches, oldest first.
	Candidates []Memory
}

func (e *AmbiguousError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v: %s matches %d memories; give more of the id:", ErrAmbiguous, e.Prefix, len(e.Candidates))
	for _, c := range e.Candidates {
		fmt.Fprintf(&b, "\n  %s  %s", c.ID, termtext.Clip(c.Title, 60))
	}
	return b.String()
}

// Unwrap returns [ErrAmbiguous].
func (e *AmbiguousError) Unwrap() error { return ErrAmbiguous }

// invalidf returns an error wrapping ErrInvalidInput.
func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidInput}, args...)...)
}
