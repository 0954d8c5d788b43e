package workspace

import (
	"context"

	"github.com/forgemem/forgemem/memcore"
)

// A repository memory whose file says the user stated it may be anyone's:
// whoever commits to the repository can write that. So recall labels it
// "stated by a repository contributor" (memretrieve.Config.StatedCheck),
// unless the user's own forgemem wrote its text into the repository from
// the user's words — captured with source user, remembered by hand, or
// approved in review — which it records in StatedFile, in the spool folder
// of the user's memory folder, which no repository can write: the SHA-256
// of each text, one per line in hexadecimal. A text written before the
// record existed, or on another machine, reads as a contributor's.

// StatedFile is the name of the user's record of the texts forgemem wrote
// into a repository from the user's own words, in the spool folder of the
// user's memory folder (~/.forge/memory/.spool/).
const StatedFile = "stated-texts"

// statedTexts returns the user's record of the texts forgemem wrote into
// a repository from the user's own words, made on first use.
func (w *Workspace) statedTexts() *textRecord {
	w.statedOnce.Do(func() { w.stated = w.userRecord(StatedFile, "the text") })
	return w.stated
}

// recordStated records m's text when m, just written, is a repository
// memory that the user stated and that is not forgotten — in force, or
// waiting for the user's review (which then shows it as the user's own
// words; it is recalled only once approved). A record that cannot be
// written leaves the memory labelled a contributor's, with a warning in
// the log.
func (w *Workspace) recordStated(m *memcore.MemoryFile) {
	meta := m.Meta
	if meta.Scope != memcore.ScopeRepo || meta.Source != memcore.SourceUser || meta.Retired {
		return
	}
	if err := w.statedTexts().add(m.Content); err != nil {
		w.opts.Logger.Warn().Err(err).Str("id", meta.ID).
			Msg("forgemem: recall will label this repository memory a contributor's, not yours")
	}
}

// statingStore is a memory store that records, after each write, the text
// of a repository memory that the user stated (recordStated):
// the store of the workspace's memcore.Writer and of its capture pipelines.
type statingStore struct {
	memcore.MemoryStore
	w *Workspace
}

func (s statingStore) Write(ctx context.Context, m *memcore.MemoryFile) error {
	if err := s.MemoryStore.Write(ctx, m); err != nil {
		return err
	}
	s.w.recordStated(m)
	return nil
}

// Stated reports whether the user stated m: m's file says so, and m is in
// the user's own folder or its text is one forgemem wrote into the
// repository from the user's words. A repository memory whose file says
// so otherwise is a contributor's (see StatedFile).
func (w *Workspace) Stated(m Memory) bool {
	if memcore.Source(m.Source) != memcore.SourceUser {
		return false
	}
	return m.Scope == memcore.ScopeUser || w.statedTexts().has(m.Content)
}

// repoStated is the memretrieve.StatedChecker of the workspace's engines.
type repoStated struct{ w *Workspace }

// Stated implements memretrieve.StatedChecker: m's text is in the user's
// record of the texts forgemem wrote into a repository from the user's
// words.
func (s repoStated) Stated(m *memcore.MemoryFile) bool { return s.w.statedTexts().has(m.Content) }
