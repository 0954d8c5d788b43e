package workspace

import (
	"errors"
	"fmt"

	"github.com/forgemem/forgemem/memcore"
)

// A repository can commit memory files that claim anything in their front
// matter: in force, stated by the user. The quarantine screens what
// forgemem writes, so a committed file skips it. So a repository memory in
// force that reads like an instruction to the agent's tools (memcore's
// instruction rule, the one no review mode turns off) is held at recall —
// never injected, its text never shown in another memory's links or
// history, nor to capture's classifier — until the user approves its text
// in review. So is one whose text holds a character memcore.CheckText
// refuses — tag characters spelling an instruction a person cannot see, a
// zero-width space, a bidirectional override — which forgemem never
// writes: recall would show it as its code point, but a person has not
// judged what it hides. Approvals are the user's: the SHA-256 of each approved text,
// one per line in hexadecimal, in ApprovedFile in the spool folder of the
// user's memory folder, which no repository can write.

// ApprovedFile is the name of the user's record of approved texts, in the
// spool folder of the user's memory folder (~/.forge/memory/.spool/).
const ApprovedFile = "approved-texts"

// approved returns the user's record of approved texts, made on first use
// (its folder, the spool folder of the user's memory folder, is made with
// the capture key).
func (w *Workspace) approved() *textRecord {
	w.approvalsOnce.Do(func() { w.approvals = w.userRecord(ApprovedFile, "the approval") })
	return w.approvals
}

// heldBy returns why recall holds m — a repository memory in force in its
// file whose text reads like an instruction, or holds a character a person
// does not see, and that the user has not approved — or "".
func (w *Workspace) heldBy(m *memcore.MemoryFile) string {
	if m == nil {
		return ""
	}
	return w.heldFor(m, m.Content)
}

// heldFor is heldBy judged on shown, the part of m's text a listing shows:
// a text in which the instruction rule finds nothing shows nothing held.
func (w *Workspace) heldFor(m *memcore.MemoryFile, shown string) string {
	if m.Meta.Scope != memcore.ScopeRepo || m.Meta.Status == memcore.StatusPending || m.Meta.Retired {
		return ""
	}
	reason := instruction(shown)
	if reason == "" {
		reason = hiddenCharacters(shown)
	}
	if reason == "" || w.approved().has(m.Content) {
		return ""
	}
	return reason
}

// instruction returns what memcore's instruction rule finds in text
// (memcore.Screen under review off, which applies that rule alone), or "".
func instruction(text string) string {
	return memcore.Screen(&memcore.MemoryFile{Content: text}, memcore.ReviewOff)
}

// RuleHiddenText names, as the quarantine's rules are named in a held
// memory's reason, the hold of a repository memory whose text holds a
// character memcore.CheckText refuses: "hidden-text: it holds an
// invisible tag character U+E0052 at character 15, which a person reading
// it does not see".
const RuleHiddenText = "hidden-text"

// hiddenCharacters returns the reason, under RuleHiddenText, naming the
// first character of text memcore.CheckText refuses, or "".
func hiddenCharacters(text string) string {
	var ce *memcore.CharError
	if !errors.As(memcore.CheckText(text), &ce) {
		return ""
	}
	return fmt.Sprintf("%s: it holds %v, which a person reading it does not see", RuleHiddenText, ce)
}

// Held returns why recall holds m (see ReviewItem.Held), judged on shown,
// the part of its text a listing shows, or "": a listing an agent reads
// (MCP's memory_list) shows no held text. Only shown is screened, so a
// listing of many memories costs little.
func (w *Workspace) Held(m Memory, shown string) string {
	mf := &memcore.MemoryFile{Content: m.Content}
	mf.Meta.Scope, mf.Meta.Retired = m.Scope, m.Forgotten
	if m.Status == string(memcore.StatusPending) {
		mf.Meta.Status = memcore.StatusPending
	}
	return w.heldFor(mf, shown)
}

// ProblemHeld: a repository memory in force in its file whose text reads
// like an instruction to the agent's tools, and whose text the user has
// not approved: recall holds it (see [ReviewItem.Held]).
const ProblemHeld ProblemKind = "held"

// heldProblems reports each memory of snap that recall holds.
func (w *Workspace) heldProblems(snap *snapshot) []Problem {
	var out []Problem
	for _, h := range snap.g.Heads() {
		if held := w.heldBy(h); held != "" {
			short := shortRef(h.Meta.ID)
			what := "reads like an instruction to the agent's tools"
			if ruleOf(held) == RuleHiddenText {
				what = "holds characters a person does not see and a model reads"
			}
			out = append(out, Problem{Path: filePath(w.store, h), Scope: h.Meta.Scope, ID: h.Meta.ID, Kind: ProblemHeld,
				Message: fmt.Sprintf("%s (%s); its file says it is in force, but recall holds it until you approve it with forgemem review --approve %s, or forget it with forgemem review --reject %s",
					what, held, short, short)})
		}
	}
	return out
}

// repoHold is the memretrieve.HoldChecker of the workspace's engines, and
// the memcapture.HoldChecker of its capture pipelines.
type repoHold struct{ w *Workspace }

// Hold implements memretrieve.HoldChecker and memcapture.HoldChecker.
func (h repoHold) Hold(m *memcore.MemoryFile) string { return h.w.heldBy(m) }

// recordApproval records the approval of m's text when recall would hold
// it otherwise.
func (w *Workspace) recordApproval(m *memcore.MemoryFile) error {
	if m.Meta.Scope != memcore.ScopeRepo || instruction(m.Content) == "" && hiddenCharacters(m.Content) == "" {
		return nil
	}
	return w.approved().add(m.Content)
}
