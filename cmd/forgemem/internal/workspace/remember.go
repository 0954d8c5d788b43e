package workspace

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/termtext"
	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memcore/redact"
	"github.com/forgemem/forgemem/memretrieve"
)

// MaxContentRunes is the most text [Workspace.Remember] takes, in
// characters (Unicode code points, as JSON Schema's maxLength counts them,
// so that MCP's memory_remember states the same limit in its input
// schema): 65,536. A memory is one self-contained statement, recalled into
// an agent's context within a token budget, not a document. Capture keeps
// its classifier's memories far shorter (memcapture.DefaultMaxContentBytes,
// 4 KiB): a person or an agent asking to remember may paste a longer
// convention, a model deciding by itself should not. At most 4 bytes a
// character, 256 KiB, both sit well below the size of a memory file
// memcore reads (memcore.MaxFileBytes, 1 MiB).
const MaxContentRunes = 64 << 10

// MaxReasonRunes is the longest reason [Workspace.Forget] and
// [Workspace.Reject] take, in characters (Unicode code points, as JSON
// Schema's maxLength counts them, so that MCP's memory_forget states the
// same limit in its input schema): 1,000, counted in the reason as given,
// before its secrets are redacted (a placeholder may be longer than the
// secret it replaces). A reason says in a sentence or two why a memory is
// forgotten; it is kept in the front matter of the retired version, which
// every later read of the folder parses.
const MaxReasonRunes = 1000

// RememberInput is a memory a person adds by hand.
type RememberInput struct {
	// Text is the memory's content. Secrets in it are redacted, and its
	// line breaks written "\n"; a control character other than tab and
	// line breaks, a bidirectional formatting or invisible character, or a
	// byte that is not UTF-8, is refused (memcore.CheckText).
	Text string
	// Scope and Category are required for a new memory. A new version
	// takes its chain's by default; it may change the category, not the
	// scope.
	Scope    memcore.Scope
	Category memcore.Category
	// Supersedes names (by id, or a unique prefix of at least
	// MinPrefixDigits digits) the memory this text changes; the new
	// version supersedes the head of its chain, and revives the chain if
	// it was forgotten.
	Supersedes string
	// RelatesTo, Refines and Contradicts name memories to link to, as
	// Supersedes does; a link names the current version of its target's
	// chain.
	RelatesTo, Refines, Contradicts []string
	// SessionID is recorded in the file; empty leaves it out.
	SessionID string
	// Source is who states the memory: memcore.SourceUser for a person
	// (the default, when empty), memcore.SourceAgent for an agent through
	// a tool. The memory is screened for review as every memory is
	// (memory.review); an agent's waits for review unless review is off,
	// and an agent may not change a memory that waits.
	Source memcore.Source
	// Anchors are the paths and symbols of the repository the memory is
	// about, as a person gives them: recorded whether or not the working
	// tree has them now (RememberResult.MissingAnchors lists those it has
	// not). Proposed are an agent's: recorded only when the tree has them.
	// The anchors the text names are recorded either way. Only a repo
	// memory has anchors.
	Anchors, Proposed []memcore.Anchor
}

// RememberResult says what [Workspace.Remember] wrote.
type RememberResult struct {
	Memory Memory `json:"memory"`
	// Redactions counts the secrets replaced by [REDACTED].
	Redactions int `json:"redactions"`
	// Superseded is the id of the version the new one supersedes, "" for a
	// first version.
	Superseded string `json:"superseded,omitempty"`
	// NotHead is the id given to supersede when it was not the head of its
	// chain: the head (Superseded) was superseded instead.
	NotHead string `json:"not_head,omitempty"`
	// Revived is true when the chain was forgotten and is current again.
	Revived bool `json:"revived,omitempty"`
	// Raced is the id of a version another session wrote while this one
	// was being written: the new version supersedes it instead, with that
	// session's links (memcore.Writer, as capture writes).
	Raced string `json:"raced,omitempty"`
	// MissingAnchors are the anchors given that the working tree does not
	// have now: recorded all the same, and reported stale.
	MissingAnchors []memcore.Anchor `json:"missing_anchors,omitempty"`
	// DroppedAnchors are the proposed anchors the tree does not have: not
	// recorded.
	DroppedAnchors []memcore.Anchor `json:"dropped_anchors,omitempty"`
	// LinkedToHead are the ids given to link to that are earlier versions
	// of their chains: each link names the chain's current version
	// instead.
	LinkedToHead []string `json:"linked_to_head,omitempty"`
	// Held says why the memory waits for a person's review (forgemem
	// review), "" when it is in force: the quarantine rule that held it.
	Held string `json:"held,omitempty"`
	// OverBudget is set when the memory, shown alone, is larger than the
	// injection token budget in force (memory.injection_token_budget):
	// retrieval leaves it out of every injection, even as the best match.
	OverBudget *OverBudget `json:"over_budget,omitempty"`
}

// OverBudget compares a memory's size in an injection with the injection
// token budget in force.
type OverBudget struct {
	// Tokens is the estimated size of the injection block showing the
	// memory alone (memretrieve.AloneTokens).
	Tokens int `json:"tokens"`
	// Budget is memory.injection_token_budget.
	Budget int `json:"budget"`
}

// testHookBeforeWrite, when set by a test, is called just before a
// memory is written, to let another writer change the chain first.
var testHookBeforeWrite func()

// hookedStore is the store the workspace's memcore.Writer writes to: the
// store, calling testHookBeforeWrite before each write.
type hookedStore struct{ memcore.MemoryStore }

func (s hookedStore) Write(ctx context.Context, m *memcore.MemoryFile) error {
	if testHookBeforeWrite != nil {
		testHookBeforeWrite()
	}
	return s.MemoryStore.Write(ctx, m)
}

// Remember writes a memory a person (or, with Source agent, an agent)
// gives (trigger manual), redacted as captured ones are, with its source,
// and screened for review as every memory is (RememberResult.Held): a new memory, or with Supersedes a new version of an
// existing one. Text over MaxContentRunes is refused, and so is text that
// holds a control character other than tab and line breaks, a
// bidirectional formatting or invisible character (U+202E, U+200B…), or a
// byte that is not UTF-8, naming the character and where it is. Links are checked
// before anything is written: their targets must exist, may not be in the
// memory's own chain, and may not cross scopes — a repo memory may not link
// to a user-scope one (teammates do not have it), nor a user-scope memory
// to a repo one (the user's other repositories do not have it); each names
// its target chain's current version.
// Text equal, ignoring case and white space, to the current text of a
// memory of the same scope (memcore's Graph.Duplicate) is [ErrDuplicate];
// an unusable argument is [ErrInvalidInput]. The memory is written through
// memcore.Writer, as capture writes: when another session supersedes the
// same version meanwhile (memcore.ErrConflict), the new version
// supersedes that session's instead, keeping its links
// (RememberResult.Raced), or is not written when that session's says the
// same ([ErrDuplicate]). A memory too large for the injection token
// budget in force is written, and reported (RememberResult.OverBudget).
func (w *Workspace) Remember(ctx context.Context, in RememberInput) (*RememberResult, error) {
	if err := checkScope(in.Scope); err != nil {
		return nil, err
	}
	if err := checkCategory(in.Category); err != nil {
		return nil, err
	}
	clean, n, err := rememberText(in.Text)
	if err != nil {
		return nil, err
	}
	snap, err := w.load(ctx)
	if err != nil {
		return nil, err
	}
	res := &RememberResult{Redactions: n}
	var m *memcore.MemoryFile
	if in.Supersedes != "" {
		m, err = w.nextVersion(ctx, snap, in, res)
	} else {
		m, err = w.firstVersion(in)
	}
	if err != nil {
		return nil, err
	}
	m.Content = clean
	m.Meta.Source = cmp.Or(in.Source, memcore.SourceUser)
	if err := w.anchorMemory(ctx, m, in, res); err != nil {
		return nil, err
	}
	if err := w.link(ctx, snap, m, in, res); err != nil {
		return nil, err
	}
	if dup := snap.g.Duplicate(m); dup != nil {
		return nil, duplicateError(dup)
	}
	if err := w.writeVersion(ctx, m, res); err != nil {
		return nil, err
	}
	after, err := w.load(ctx)
	if err != nil {
		return nil, err
	}
	res.Memory = view(w.store, after.g, m)
	// 0 is the default budget, as memretrieve takes it.
	b := cmp.Or(w.settings.RetrieveConfig().InjectionTokenBudget, memretrieve.DefaultConfig().InjectionTokenBudget)
	if t := memretrieve.AloneTokens(m); t > b {
		res.OverBudget = &OverBudget{Tokens: t, Budget: b}
	}
	return res, nil
}

// nextVersion is the memory Remember writes for in, which supersedes a
// memory: the next version of its chain's head.
func (w *Workspace) nextVersion(ctx context.Context, snap *snapshot, in RememberInput, res *RememberResult) (*memcore.MemoryFile, error) {
	pred, err := w.resolveToChange(ctx, snap, in.Supersedes, "supersede")
	if err != nil {
		return nil, err
	}
	head, _ := snap.g.Head(pred.Meta.ID)
	if in.Source == memcore.SourceAgent && head.Meta.Status == memcore.StatusPending {
		return nil, fmt.Errorf("%w: %s waits for a person's review (forgemem review); an agent cannot change it", ErrWaitsForReview, head.Meta.ID)
	}
	if in.Scope != "" && in.Scope != head.Meta.Scope {
		return nil, invalidf("a new version keeps its chain's scope (%s); to move the memory, remember it anew with --scope %s and forget %s",
			head.Meta.Scope, in.Scope, head.Meta.ID)
	}
	if err := w.requireScope(head.Meta.Scope); err != nil {
		return nil, err
	}
	m := w.newVersion(head, in.SessionID)
	if in.Category != "" {
		m.Meta.Category = in.Category
	}
	res.Superseded = head.Meta.ID
	if head.Meta.ID != pred.Meta.ID {
		res.NotHead = pred.Meta.ID
	}
	res.Revived = head.Meta.Retired
	return m, nil
}

// firstVersion is the memory Remember writes for in, a new memory.
func (w *Workspace) firstVersion(in RememberInput) (*memcore.MemoryFile, error) {
	if in.Scope == "" || in.Category == "" {
		return nil, invalidf("a new memory needs a scope (repo or user) and a category (%s)", categoryList())
	}
	if err := w.requireScope(in.Scope); err != nil {
		return nil, err
	}
	now := w.now()
	return &memcore.MemoryFile{Meta: memcore.MemoryMeta{
		ID: memcore.NewMemoryID(), CreatedAt: now, UpdatedAt: now, Version: 1,
		Scope: in.Scope, Category: in.Category, SessionID: in.SessionID, Trigger: memcore.TriggerManual,
	}}, nil
}

// writeVersion writes m through the workspace's memcore.Writer, and
// records in res the versions other sessions wrote first that m was built
// on. Their version saying the same is [ErrDuplicate].
func (w *Workspace) writeVersion(ctx context.Context, m *memcore.MemoryFile, res *RememberResult) error {
	wr, err := w.writer.Write(ctx, m)
	res.Held = wr.Held
	if n := len(wr.Raced); n > 0 {
		head := wr.Raced[n-1]
		res.Raced, res.Superseded, res.Revived = head.Meta.ID, head.Meta.ID, head.Meta.Retired
	}
	switch {
	case err != nil:
		return fmt.Errorf("writing the memory: %w", err)
	case wr.Duplicate != nil:
		return fmt.Errorf("%w: another session just wrote the same as %s (%s); nothing was written",
			ErrDuplicate, wr.Duplicate.Meta.ID, termtext.Clip(wr.Duplicate.Title(), 60))
	}
	return nil
}

// duplicateError says that dup, a current memory, already says what was
// to be remembered: ErrDuplicate, naming it, and saying how to approve it
// when it waits for review.
func duplicateError(dup *memcore.MemoryFile) error {
	if dup.Meta.Status == memcore.StatusPending {
		return fmt.Errorf("%w: %s already says this (%s) and waits for review; nothing was written (approve it with forgemem review --approve %s)",
			ErrDuplicate, dup.Meta.ID, termtext.Clip(dup.Title(), 60), dup.Meta.ID)
	}
	return fmt.Errorf("%w: %s already says this (%s); nothing was written", ErrDuplicate, dup.Meta.ID, termtext.Clip(dup.Title(), 60))
}

// reasonText is the reason of a forget or a rejection as it is written:
// checked as checkChars checks it, its line breaks made \n, trimmed. Over
// MaxReasonRunes characters is an error wrapping ErrInvalidInput.
func reasonText(reason string) (string, error) {
	if err := checkChars("the reason", reason); err != nil {
		return "", err
	}
	reason = strings.TrimSpace(lineBreaks(reason))
	if n := utf8.RuneCountInString(reason); n > MaxReasonRunes {
		return "", invalidf("the reason is %d characters long, over the limit of %d characters; say why in a sentence", n, MaxReasonRunes)
	}
	return reason, nil
}

// rememberText is text as Remember writes it: checked as checkChars
// checks it, its line breaks made \n, trimmed and redacted, with the
// number of secrets redacted; blank text or text over MaxContentRunes is
// an error wrapping ErrInvalidInput.
func rememberText(text string) (string, int, error) {
	if err := checkChars("the text to remember", text); err != nil {
		return "", 0, err
	}
	text = strings.TrimSpace(lineBreaks(text))
	if n := utf8.RuneCountInString(text); n > MaxContentRunes {
		return "", 0, invalidf("the text to remember is %d characters long, over the limit of %d characters: a memory is one short statement recalled into an agent's context; remember the few statements worth keeping, each on its own, and leave the rest in a file of the repository",
			n, MaxContentRunes)
	}
	clean, n := redact.Text(text)
	if clean == "" {
		return "", 0, invalidf("the text to remember is empty")
	}
	return clean, n, nil
}

// checkChars refuses text, which what names ("the reason"), that holds
// what a memory file must not (memcore.CheckText): a byte that is not
// UTF-8, a control character (C0, DEL or C1) other than tab, line feed and
// carriage return, or a bidirectional formatting or invisible character
// (U+202E, U+200B…). A NUL makes git and other tools take the file for
// binary, an escape sequence would drive the terminal of whoever reads the
// file, and the others make the text read differently than it is. The
// error wraps ErrInvalidInput and names the character and where it is,
// counted in characters from 1 in the text as given.
func checkChars(what, text string) error {
	var ce *memcore.CharError
	if !errors.As(memcore.CheckText(text), &ce) {
		return nil
	}
	if ce.Kind() == memcore.CharNotUTF8 {
		return invalidf("%s holds %v; give the text in UTF-8", what, ce)
	}
	return invalidf("%s holds %v; remove it", what, ce)
}

// lineBreaks is text with its line breaks as a memory file has them,
// "\n": a "\r\n" and a lone "\r" become "\n".
func lineBreaks(text string) string {
	if !strings.Contains(text, "\r") {
		return text
	}
	return strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
}

// newVersion returns the next version of head, written by hand now: the
// content kept (the caller may change it), not retired.
func (w *Workspace) newVersion(head *memcore.MemoryFile, sessionID string) *memcore.MemoryFile {
	m := memcore.NewVersion(head, sessionID, memcore.TriggerManual)
	m.Meta.CreatedAt = w.now()
	m.Meta.UpdatedAt = m.Meta.CreatedAt
	m.Content = head.Content
	return m
}

// link adds the links of in to m, checking each target. A link always
// names the current version of its target's chain: a superseded version
// given is re-pointed to its chain's head (and reported in
// res.LinkedToHead), and so is an edge m carries from the version it
// supersedes, so that no edge written names a superseded version.
func (w *Workspace) link(ctx context.Context, snap *snapshot, m *memcore.MemoryFile, in RememberInput, res *RememberResult) error {
	chain := repointCarried(snap, m)
	for _, l := range []struct {
		rel  memcore.Relationship
		refs []string
	}{
		{memcore.RelationshipRelatesTo, in.RelatesTo},
		{memcore.RelationshipRefines, in.Refines},
		{memcore.RelationshipContradicts, in.Contradicts},
	} {
		for _, ref := range l.refs {
			t, err := w.resolveToChange(ctx, snap, ref, "link to")
			if err != nil {
				return err
			}
			head, _ := snap.g.Head(t.Meta.ID)
			switch {
			case chain[head.Meta.ID]:
				return invalidf("%s is a version of the memory itself; a memory cannot be linked to its own chain", t.Meta.ID)
			case m.Meta.Scope == memcore.ScopeRepo && head.Meta.Scope == memcore.ScopeUser:
				return invalidf("%s is a user-scope memory: a repo memory cannot link to it, as teammates do not have it", t.Meta.ID)
			case m.Meta.Scope == memcore.ScopeUser && head.Meta.Scope == memcore.ScopeRepo:
				return invalidf("%s is this repository's memory: a user-scope memory cannot link to it, as your other repositories do not have it", t.Meta.ID)
			}
			if head.Meta.ID != t.Meta.ID && !slices.Contains(res.LinkedToHead, t.Meta.ID) {
				res.LinkedToHead = append(res.LinkedToHead, t.Meta.ID)
			}
			addEdge(m, memcore.RelatedMemory{ID: head.Meta.ID, Relationship: l.rel})
		}
	}
	return nil
}

// repointCarried re-points each edge m carries from the version it
// supersedes to the current version of its target's chain, and returns
// the ids of m's own chain (before m).
func repointCarried(snap *snapshot, m *memcore.MemoryFile) map[string]bool {
	chain := map[string]bool{}
	if m.Meta.Supersedes != nil {
		for _, c := range snap.g.Chain(*m.Meta.Supersedes) {
			chain[c.Meta.ID] = true
		}
	}
	carried := m.Meta.Related
	m.Meta.Related = nil
	for _, e := range carried {
		if h, ok := snap.g.Head(e.ID); ok && !chain[h.Meta.ID] {
			e.ID = h.Meta.ID
		}
		addEdge(m, e)
	}
	return chain
}

// addEdge adds e to m's related edges unless it is there already.
func addEdge(m *memcore.MemoryFile, e memcore.RelatedMemory) {
	if !slices.Contains(m.Meta.Related, e) {
		m.Meta.Related = append(m.Meta.Related, e)
	}
}
