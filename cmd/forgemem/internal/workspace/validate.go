package workspace

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memcore/atomicfile"
	"github.com/forgemem/forgemem/memcore/redact"
)

// ProblemKind names a kind of [Problem].
type ProblemKind string

// The kinds of problem [Workspace.Validate] reports.
const (
	// ProblemUnreadable: a folder or file that cannot be read.
	ProblemUnreadable ProblemKind = "unreadable"
	// ProblemMalformed: a file that is not a memory file (no front matter,
	// bad YAML, a symbolic link or other file that is not regular).
	ProblemMalformed ProblemKind = "malformed"
	// ProblemMergeConflict: a memory file holding an unresolved git merge
	// conflict, which is not read until it is resolved.
	ProblemMergeConflict ProblemKind = "merge-conflict"
	// ProblemInvalid: a memory file whose fields break the schema.
	ProblemInvalid ProblemKind = "invalid"
	// ProblemIDMismatch: a memory file whose id differs from its name.
	ProblemIDMismatch ProblemKind = "id-mismatch"
	// ProblemScopeMismatch: a memory file whose scope differs from its
	// folder.
	ProblemScopeMismatch ProblemKind = "scope-mismatch"
	// ProblemNotAMemory: a .md file whose name is not a memory id, so it is
	// not read as a memory, or a backup git mergetool keeps of a memory's
	// file (<memory id>.md.orig).
	ProblemNotAMemory ProblemKind = "not-a-memory"
	// ProblemTooLarge: a memory file larger than memcore.MaxFileBytes,
	// which is not read.
	ProblemTooLarge ProblemKind = "too-large"
	// ProblemRepaired: a hand-edited memory file the store serves repaired
	// (a missing created_at, an edge with an unknown relationship) until it
	// is rewritten.
	ProblemRepaired ProblemKind = "repaired"
	// ProblemDanglingSupersedes: supersedes names a memory that is not
	// stored.
	ProblemDanglingSupersedes ProblemKind = "dangling-supersedes"
	// ProblemDanglingLink: a related link names a memory that is not
	// stored.
	ProblemDanglingLink ProblemKind = "dangling-link"
	// ProblemCycle: versions that supersede each other in a circle.
	ProblemCycle ProblemKind = "cycle"
	// ProblemFork: a version that more than one memory supersedes.
	ProblemFork ProblemKind = "fork"
	// ProblemCrossScope: a repo memory that supersedes or links to a
	// user-scope one, which teammates do not have, or a user-scope memory
	// that links to a repo one, which the user's other repositories do not
	// have.
	ProblemCrossScope ProblemKind = "cross-scope-link"
	// ProblemSecret: a secret (API key, token, password, e-mail address…)
	// in a file on disk.
	ProblemSecret ProblemKind = "secret"
	// ProblemUnsafeCharacter: a memory file, written or merged by hand,
	// whose text — its content, a reason, the evidence's quote, the
	// session id — holds a character that forgemem refuses to write
	// (memcore.CheckText): a control character other than tab and line
	// breaks, such as a NUL, which makes git take the file for binary, or
	// the ESC of an escape sequence; a bidirectional formatting character
	// (U+202E…) or an invisible one (U+200B, U+FEFF), which make the text
	// read differently than it is. It is a warning, as secret and held
	// are, not an error as invalid is: the memory is still read — listed,
	// searched and recalled, not counted among the files that cannot be
	// read — and the command shows control and bidirectional characters
	// escaped, so nothing is lost or acted on; validate reports it (exit
	// 1, as for every problem) so that someone deletes the character from
	// the file. A byte that is not UTF-8 is the error: the file is not read
	// (invalid).
	ProblemUnsafeCharacter ProblemKind = "unsafe-character"
	// ProblemStale is declared with the anchors (anchors.go), ProblemHeld
	// with the memories recall holds (held.go).
)

// Problem is one thing [Workspace.Validate] found. It encodes as the JSON
// object of `forgemem validate --json`.
type Problem struct {
	// Path is the file (or folder) concerned.
	Path  string        `json:"path"`
	Scope memcore.Scope `json:"scope"`
	// ID is the memory's id, when the file has one.
	ID   string      `json:"id,omitempty"`
	Kind ProblemKind `json:"kind"`
	// Message says what is wrong and what to do; it never shows a secret.
	Message string `json:"message"`
	// Anchor is, for a stale memory, the anchor that says so; Status what
	// happened to it (gone, renamed, moved, undefined), and RenamedTo the
	// path git says it was renamed to, if any.
	Anchor    *memcore.Anchor `json:"anchor,omitempty"`
	Status    string          `json:"status,omitempty"`
	RenamedTo string          `json:"renamed_to,omitempty"`
}

// Validate audits both memory folders and returns every problem found,
// ordered by path: files the store does not serve and why (so a hand edit
// never makes a memory vanish without a word), the backups git mergetool
// leaves (which the store does not read), files it serves repaired,
// ids that differ from their
// file names, dangling supersedes and related links, supersedes cycles and
// forks, repo memories pointing at user-scope ids, secrets in files on
// disk, text holding a character forgemem refuses to write (kind
// unsafe-character), current repo memories whose anchors say they may be outdated
// (kind stale), and repo memories recall holds until the user approves
// them (kind held). No problem is an empty list.
func (w *Workspace) Validate(ctx context.Context) ([]Problem, error) {
	probs, err := w.store.Problems(ctx)
	if err != nil {
		return nil, fmt.Errorf("scanning the memory folders: %w", err)
	}
	out := []Problem{}
	for _, p := range probs {
		out = append(out, w.fileProblem(p))
		// A file served repaired is scanned for secrets with the others.
		if info, err := os.Lstat(p.Path); err == nil && info.Mode().IsRegular() && !p.Served {
			out = append(out, secretProblems(p.Path, p.Scope, idOfFile(p.Path))...)
		}
	}
	snap, err := w.load(ctx)
	if err != nil {
		return nil, err
	}
	for _, m := range snap.all {
		out = append(out, w.linkProblems(snap, m)...)
		out = append(out, secretProblems(filePath(w.store, m), m.Meta.Scope, m.Meta.ID)...)
		out = append(out, textProblems(filePath(w.store, m), m)...)
	}
	out = append(out, w.backupProblems()...)
	out = append(out, w.cycleProblems(snap)...)
	out = append(out, w.forkProblems(snap)...)
	out = append(out, w.staleProblems(ctx, snap)...)
	out = append(out, w.heldProblems(snap)...)
	slices.SortStableFunc(out, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Message, b.Message))
	})
	return out, nil
}

// unreadable returns the files and folders the store does not read (the
// problems of memcore's Problems that are not served repaired), described
// as Validate describes them.
func (w *Workspace) unreadable(ctx context.Context) ([]Problem, error) {
	probs, err := w.store.Problems(ctx)
	if err != nil {
		return nil, fmt.Errorf("scanning the memory folders: %w", err)
	}
	out := []Problem{}
	for _, p := range probs {
		if !p.Served {
			out = append(out, w.fileProblem(p))
		}
	}
	return out, nil
}

// UnreadableCount counts the files and folders of the memory folders the
// store does not read (a hand edit it cannot parse, a merge conflict, a
// file too large…), which [Workspace.Validate] describes: memories a
// listing, a search or a recall is missing.
// A copy of a memory whose file is there (one git mergetool made, say) is
// not counted: no memory is missing for it.
func (w *Workspace) UnreadableCount(ctx context.Context) (int, error) {
	probs, err := w.unreadable(ctx)
	n := 0
	for _, p := range probs {
		if _, isCopy := notAMemory(p.Path); p.Kind != ProblemNotAMemory || !isCopy {
			n++
		}
	}
	return n, err
}

// mergetoolCopy matches the name of a file git mergetool writes beside the
// file whose merge conflict it resolves, while the tool runs (its sides
// and the conflicted file: <name>_LOCAL_<pid>.md, …), and mergetoolBackup
// the backup of the conflicted file it keeps once the tool has resolved it
// (mergetool.keepBackup, on by default).
var (
	mergetoolCopy   = regexp.MustCompile(`^(.+)_(BACKUP|BASE|LOCAL|REMOTE)_[0-9]+\.md$`)
	mergetoolBackup = regexp.MustCompile(`^(.+)\.md\.orig$`)
)

// notAMemory says what a file of a memory folder that is not named
// <memory id>.md is, when it can tell: a copy git mergetool made of a
// memory, its backup, a copy of a memory whose file is there, or a memory
// renamed by hand. isCopy is true when the memory it copies has its own
// file, so that no memory is missing for it. It returns "" for another
// file.
func notAMemory(path string) (msg string, isCopy bool) {
	dir, name := filepath.Split(path)
	exists := func(id string) bool {
		info, err := os.Lstat(filepath.Join(dir, id+".md"))
		return err == nil && info.Mode().IsRegular()
	}
	if m := mergetoolCopy.FindStringSubmatch(name); m != nil && memcore.ValidateID(m[1]) == nil {
		side := map[string]string{"BACKUP": "with the conflict", "BASE": "as the two branches' common ancestor had it",
			"LOCAL": "as your branch had it", "REMOTE": "as the branch merged had it"}[m[2]]
		return fmt.Sprintf("a copy of %s, %s, that git mergetool made while resolving a merge conflict in it, not a memory: "+
			"the tool deletes it when it ends, so delete it if the tool did not finish", m[1], side), exists(m[1])
	}
	if m := mergetoolBackup.FindStringSubmatch(name); m != nil && memcore.ValidateID(m[1]) == nil {
		return fmt.Sprintf("the backup of %s.md that git mergetool keeps, as the file was before its merge conflict was resolved, not a memory: "+
			"delete it (git config mergetool.keepBackup false stops them)", m[1]), exists(m[1])
	}
	if !strings.HasSuffix(name, ".md") {
		return "", false
	}
	m := parseFile(path)
	switch {
	case m == nil:
		return "", false
	case exists(m.Meta.ID):
		return fmt.Sprintf("a copy of %s, whose file is %s.md: only that file is read as the memory, so carry over what this one changes, if anything, and delete it", m.Meta.ID, m.Meta.ID), true
	}
	return fmt.Sprintf("the file holds %s, but only a file named %s.md is read as that memory: rename it to %s.md", m.Meta.ID, m.Meta.ID, m.Meta.ID), false
}

// fileProblem describes a file or folder the store does not serve.
func (w *Workspace) fileProblem(p memcore.Problem) Problem {
	out := Problem{Path: p.Path, Scope: p.Scope, ID: idOfFile(p.Path), Message: strings.TrimPrefix(p.Err.Error(), p.Path+": ")}
	var tooLarge *memcore.TooLargeError
	switch {
	case errors.As(p.Err, &tooLarge):
		out.Kind = ProblemTooLarge
		out.Message = fmt.Sprintf("the file is %s (%d bytes), over the %s limit of a memory file (%d bytes), so it is not read; a memory is a short statement: shorten the file, or move it out of the memory folder",
			sizeText(tooLarge.Size), tooLarge.Size, sizeText(tooLarge.Limit), tooLarge.Limit)
	case errors.Is(p.Err, memcore.ErrUnsafeFolder):
		out.Kind = ProblemUnreadable
	case p.Served:
		out.Kind = ProblemRepaired
		out.Message = strings.TrimPrefix(out.Message, memcore.ErrInvalidMemory.Error()+": ") +
			"; the memory is used as repaired: fix the file to make it so on disk"
	case errors.Is(p.Err, memcore.ErrInvalidID):
		out.Kind = ProblemNotAMemory
		out.Message = "the file name is not <memory id>.md, so it is not read as a memory; rename or move it"
		if msg, _ := notAMemory(p.Path); msg != "" {
			out.Message = msg
		}
	case errors.Is(p.Err, memcore.ErrMergeConflict):
		out.Kind = ProblemMergeConflict
		out.Message = strings.TrimPrefix(out.Message, memcore.ErrMalformed.Error()+": ") +
			"; until then the memory is not read: not listed, searched or recalled"
	case errors.Is(p.Err, memcore.ErrMalformed):
		out.Kind = ProblemMalformed
		advice := "; fix the file (see the file format in forgemem's README) or remove it"
		if info, err := os.Lstat(p.Path); err == nil && !info.Mode().IsRegular() {
			advice = "; replace it with a regular memory file, or remove it"
		}
		out.Message = strings.TrimPrefix(out.Message, memcore.ErrMalformed.Error()+": ") + advice
	case errors.Is(p.Err, memcore.ErrInvalidMemory):
		out.Kind = ProblemInvalid
		out.Message = strings.TrimPrefix(out.Message, memcore.ErrInvalidMemory.Error()+": ") + "; fix the file"
		if m := parseFile(p.Path); m != nil {
			name := strings.TrimSuffix(filepath.Base(p.Path), ".md")
			switch {
			case m.Meta.ID != name:
				out.Kind = ProblemIDMismatch
				out.ID = m.Meta.ID
				out.Message = fmt.Sprintf("the file's id is %s but its name is %s.md; rename the file to %s.md or correct its id", m.Meta.ID, name, m.Meta.ID)
			case m.Meta.Scope != p.Scope:
				out.Kind = ProblemScopeMismatch
				out.Message = fmt.Sprintf("the file says scope %s but is in the %s folder; move it to the %s folder or correct its scope", m.Meta.Scope, p.Scope, m.Meta.Scope)
			}
		}
	default:
		out.Kind = ProblemUnreadable
		out.Message += "; check the permissions"
	}
	return out
}

// backupProblems reports the backups git mergetool leaves in the memory
// folders (<memory id>.md.orig): the store reads only .md files, so
// nothing else says that they are there, to be committed with the
// memories by a git add.
func (w *Workspace) backupProblems() []Problem {
	var out []Problem
	for _, scope := range memcore.Scopes() {
		dir := w.store.Dir(scope)
		if dir == "" {
			continue
		}
		entries, err := os.ReadDir(dir) // one that cannot be read is reported as such
		if err != nil {
			continue
		}
		for _, e := range entries {
			path := filepath.Join(dir, e.Name())
			if !mergetoolBackup.MatchString(e.Name()) {
				continue
			}
			if msg, _ := notAMemory(path); msg != "" {
				out = append(out, Problem{Path: path, Scope: scope, Kind: ProblemNotAMemory, Message: msg})
			}
		}
	}
	return out
}

// parseFile returns the valid memory in the regular file at path, or nil.
func parseFile(path string) *memcore.MemoryFile {
	data, err := readMemoryFile(path)
	if err != nil {
		return nil
	}
	m, err := memcore.Parse(data)
	if err != nil || m.Validate() != nil {
		return nil
	}
	return m
}

// idOfFile is the memory id a file is named by, or "".
func idOfFile(path string) string {
	id := strings.TrimSuffix(filepath.Base(path), ".md")
	if memcore.ValidateID(id) != nil {
		return ""
	}
	return id
}

// linkProblems reports m's supersedes and related links that dangle or
// cross scopes.
func (w *Workspace) linkProblems(snap *snapshot, m *memcore.MemoryFile) []Problem {
	var out []Problem
	add := func(kind ProblemKind, format string, args ...any) {
		out = append(out, Problem{Path: filePath(w.store, m), Scope: m.Meta.Scope, ID: m.Meta.ID, Kind: kind, Message: fmt.Sprintf(format, args...)})
	}
	scopeOf := func(target string) memcore.Scope {
		if t, ok := snap.g.Memory(target); ok {
			return t.Meta.Scope
		}
		return ""
	}
	if p := m.Meta.Supersedes; p != nil {
		if _, ok := snap.g.Memory(*p); !ok {
			add(ProblemDanglingSupersedes, "supersedes %s, which is not stored: its history is lost; remove the supersedes line if the memory is now a first version", *p)
		} else if m.Meta.Scope == memcore.ScopeRepo && scopeOf(*p) == memcore.ScopeUser {
			// A user-scope version of a repository's memory is a move
			// capture may make ("in every project"); the reverse is not.
			add(ProblemCrossScope, "supersedes %s, a user-scope memory that teammates do not have; a repo memory's chain must stay in the repo scope", *p)
		}
	}
	for _, r := range m.Meta.Related {
		if _, ok := snap.g.Memory(r.ID); !ok {
			add(ProblemDanglingLink, "%s %s, which is not stored; remove the link", r.Relationship, r.ID)
		} else if s := scopeOf(r.ID); s != m.Meta.Scope {
			add(ProblemCrossScope, "%s %s, %s; remove the link", r.Relationship, r.ID, otherScope(m.Meta.Scope))
		}
	}
	return out
}

// otherScope says what a memory of scope from links to across scopes.
func otherScope(from memcore.Scope) string {
	if from == memcore.ScopeRepo {
		return "a user-scope memory that teammates do not have"
	}
	return "a memory of this repository that your other repositories do not have"
}

// cycleProblems reports each supersedes cycle once, at its member with the
// smallest id.
func (w *Workspace) cycleProblems(snap *snapshot) []Problem {
	const (
		unseen = iota
		onPath
		done
	)
	state := map[string]int{}
	var out []Problem
	for _, m := range snap.all {
		var path []*memcore.MemoryFile
		cur := m
		for cur != nil && state[cur.Meta.ID] == unseen {
			state[cur.Meta.ID] = onPath
			path = append(path, cur)
			var next *memcore.MemoryFile
			if p := cur.Meta.Supersedes; p != nil {
				next, _ = snap.g.Memory(*p)
			}
			cur = next
		}
		if cur != nil && state[cur.Meta.ID] == onPath {
			start := slices.Index(path, cur)
			cycle := path[start:]
			first := slices.MinFunc(cycle, func(a, b *memcore.MemoryFile) int { return cmp.Compare(a.Meta.ID, b.Meta.ID) })
			i := slices.Index(cycle, first)
			ordered := append(slices.Clone(cycle[i:]), cycle[:i]...)
			ids := make([]string, 0, len(ordered)+1)
			for _, c := range ordered {
				ids = append(ids, c.Meta.ID)
			}
			ids = append(ids, first.Meta.ID)
			out = append(out, Problem{Path: filePath(w.store, first), Scope: first.Meta.Scope, ID: first.Meta.ID, Kind: ProblemCycle,
				Message: fmt.Sprintf("versions supersede each other in a circle, %s, so the chain has no first version; remove the supersedes line of its oldest version", strings.Join(ids, " → "))})
		}
		for _, p := range path {
			state[p.Meta.ID] = done
		}
	}
	return out
}

// forkProblems reports each version that several memories supersede: a
// merge of branches that each changed the memory, say. It names the change
// readers follow — the successor on the line to the chain's head, which
// need not be the best successor when a branch went on to later versions —
// and says how to put the changes in a line, which settles the fork.
func (w *Workspace) forkProblems(snap *snapshot) []Problem {
	var out []Problem
	for _, f := range snap.g.Forks() {
		head, _ := snap.g.Head(f.Successors[0].Meta.ID)
		line := snap.g.Chain(head.Meta.ID)
		onLine := func(m *memcore.MemoryFile) bool { return slices.Contains(line, m) }
		var succ []string
		var in *memcore.MemoryFile
		for _, s := range f.Successors {
			succ = append(succ, fmt.Sprintf("%s (version %d)", s.Meta.ID, s.Meta.Version))
			if in == nil && onLine(s) {
				in = s
			}
		}
		msg := fmt.Sprintf("%s was changed in parallel by %s, as a merge of two branches that each changed it leaves it", f.ID, strings.Join(succ, " and "))
		if in == nil { // a cycle heads the chain; cycleProblems reports it
			msg += "; make one of them supersede the other"
		} else {
			msg += fmt.Sprintf(": %s is in force", shortRef(in.Meta.ID))
			if in != head {
				msg += fmt.Sprintf(" (up to its version %d, %s)", head.Meta.Version, shortRef(head.Meta.ID))
			}
			if copyOf := sameChange(snap, f, in); copyOf != nil {
				msg += fmt.Sprintf("; both made the same change (as two teammates who approved or changed it alike on their own branches leave it), so recall shows it once. To settle it, delete %s, the copy not in force (git rm %s)",
					shortRef(copyOf.Meta.ID), filePath(w.store, copyOf))
			} else {
				msg += ", the other change is not (recall shows it as a parallel change). " + settleAdvice(snap, f, in, head)
			}
		}
		p := Problem{ID: f.ID, Kind: ProblemFork, Message: msg}
		at := f.Memory
		if at == nil {
			at = f.Successors[0]
		}
		p.Path, p.Scope = filePath(w.store, at), at.Meta.Scope
		out = append(out, p)
	}
	return out
}

// settleAdvice says how to settle fork f, whose successor in leads to the
// chain's head: put the changes in a line by editing one file's supersedes
// and version, which no command does (a version's file is never
// rewritten).
func settleAdvice(snap *snapshot, f memcore.Fork, in, head *memcore.MemoryFile) string {
	if len(f.Successors) != 2 {
		return "To settle it, put the changes in a line by editing their files: each one's supersedes: names the one before it and its version: is one more, the one to keep in force last"
	}
	other := f.Successors[0]
	if other == in {
		other = f.Successors[1]
	}
	tip := branchTip(snap, other)
	return fmt.Sprintf("To settle it, edit one file to put the two in a line: supersedes: %s and version: %d in %s's file keep %s in force; "+
		"supersedes: %s and version: %d in %s's file make %s current instead. Then forgemem remember <text> --supersedes %s writes a text that combines both",
		tip.Meta.ID, tip.Meta.Version+1, shortRef(in.Meta.ID), shortRef(head.Meta.ID),
		head.Meta.ID, head.Meta.Version+1, shortRef(other.Meta.ID), shortRef(tip.Meta.ID), shortRef(head.Meta.ID))
}

// sameChange returns the other successor of fork f, whose successor in
// leads to the chain's head, when it made in's very change (the same
// text, forgotten or not) and nothing supersedes it: a copy, which
// deleting settles the fork. It returns nil otherwise.
func sameChange(snap *snapshot, f memcore.Fork, in *memcore.MemoryFile) *memcore.MemoryFile {
	if len(f.Successors) != 2 {
		return nil
	}
	other := f.Successors[0]
	if other == in {
		other = f.Successors[1]
	}
	if branchTip(snap, other) != other || other.Content != in.Content || other.Meta.Retired != in.Meta.Retired {
		return nil
	}
	return other
}

// branchTip returns the newest version of the branch that starts at m:
// m, or the best version superseding it, and so on (each version once).
func branchTip(snap *snapshot, m *memcore.MemoryFile) *memcore.MemoryFile {
	succ := map[string][]*memcore.MemoryFile{}
	for _, s := range snap.all {
		if p := s.Meta.Supersedes; p != nil {
			succ[*p] = append(succ[*p], s)
		}
	}
	seen := map[string]bool{m.Meta.ID: true}
	for {
		var next *memcore.MemoryFile
		for _, s := range succ[m.Meta.ID] {
			if !seen[s.Meta.ID] && (next == nil || s.Meta.Version > next.Meta.Version) {
				next = s
			}
		}
		if next == nil {
			return m
		}
		seen[next.Meta.ID] = true
		m = next
	}
}

// secretProblems reports the secrets redact.Find sees in the file at
// path, one per secret, by line; never the secret itself.
func secretProblems(path string, scope memcore.Scope, id string) []Problem {
	data, err := readMemoryFile(path)
	if err != nil {
		return nil
	}
	var out []Problem
	for _, m := range redact.Find(string(data)) {
		line := 1 + bytes.Count(data[:m.Start], []byte("\n"))
		fix := "edit the file to remove it"
		if id != "" {
			fix = "forgemem purge " + id + " deletes the memory with its history, or edit the file"
		}
		out = append(out, Problem{Path: path, Scope: scope, ID: id, Kind: ProblemSecret,
			Message: fmt.Sprintf("line %d holds a secret (%s, not shown): rotate it if it is real; %s", line, m.Rule, fix)})
	}
	return out
}

// textProblems reports each field of m, whose file is at path, that holds
// a character memcore.CheckText refuses: the field, the character and
// where it is, and to delete it from the file.
func textProblems(path string, m *memcore.MemoryFile) []Problem {
	var out []Problem
	for _, tp := range m.TextProblems() {
		c := tp.Char
		where := fmt.Sprintf("%s holds %v", tp.Field, c)
		if tp.Field == "content" {
			where += fmt.Sprintf(" (line %d of the content)", c.Line)
		}
		why := "which a terminal printing the file, or an editor, may act on"
		switch {
		case c.Rune == 0:
			why = "which makes git and other tools take the file for binary"
		case c.Kind() == memcore.CharBidi:
			why = "which shows the text around it in another order than it is written"
		case c.Kind() == memcore.CharInvisible:
			why = "which shows as nothing, so the text is not what it reads"
		case c.Kind() == memcore.CharTag:
			why = "which shows as nothing but a model reads as a letter: it hides text from a person that a model still reads"
		}
		fix := "delete it from the file"
		if c.Kind() == memcore.CharTag {
			fix = "delete it, and the tag characters around it, from the file"
		}
		if tp.Field != "content" {
			esc := fmt.Sprintf(`\u%04X`, c.Rune)
			if c.Rune > 0xffff {
				esc = fmt.Sprintf(`\U%08X`, c.Rune)
			}
			fix += " (in a double-quoted value it may be written as an escape, such as " + esc + ")"
		}
		out = append(out, Problem{Path: path, Scope: m.Meta.Scope, ID: m.Meta.ID, Kind: ProblemUnsafeCharacter,
			Message: fmt.Sprintf("%s, %s; the memory is still read: %s", where, why, fix)})
	}
	return out
}

// readMemoryFile reads the file at path as memcore's FileStore reads
// memory files: only a regular file, never through a symbolic link or
// waiting on a FIFO, and never more than memcore.MaxFileBytes — a larger
// file is a *memcore.TooLargeError, unread.
func readMemoryFile(path string) ([]byte, error) {
	f, err := atomicfile.Open(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, memcore.MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > memcore.MaxFileBytes {
		return nil, &memcore.TooLargeError{Size: int64(len(data)), Limit: memcore.MaxFileBytes}
	}
	return data, nil
}

// sizeText writes a size in bytes for people: "1.5 GiB", "1 MiB", "512 B".
func sizeText(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v, u := float64(n), 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	if u == 0 || v == float64(int64(v)) {
		return fmt.Sprintf("%d %s", int64(v), units[u])
	}
	return fmt.Sprintf("%.1f %s", v, units[u])
}
