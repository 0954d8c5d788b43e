package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/workspace"
	"github.com/forgemem/forgemem/memcore"
)

// Size bounds of the results: the text of a list, a search or a show is
// at most about maxResultBytes, and its structured content holds the same
// memories. What is left out is counted, with a note saying how to get it.
const (
	maxResultBytes      = 64 << 10
	maxHitContentBytes  = 4 << 10
	maxShowContentBytes = 32 << 10
	// maxQuoteRunes caps a query quoted back in a result.
	maxQuoteRunes = 200
)

// The structured results of the tools. Claude Code hands a model the
// structured content of a result rather than its text, so each holds
// what the text says, notes included.
type (
	// memoryOut is a memory as the tools return it.
	memoryOut struct {
		ID        string           `json:"id"`
		Scope     memcore.Scope    `json:"scope"`
		Category  memcore.Category `json:"category"`
		Version   int              `json:"version"`
		CreatedAt time.Time        `json:"created_at"`
		Content   string           `json:"content"`
		// ContentCut is true when Content is the beginning of a longer
		// content.
		ContentCut bool   `json:"content_cut,omitempty"`
		Path       string `json:"path"`
		// Stale says why the memory may be outdated (the code it names
		// moved or went away), where the tool checked it.
		Stale string `json:"stale,omitempty"`
	}
	recallOut struct {
		// Injection is the block of recalled notes, "" when nothing is
		// relevant.
		Injection string `json:"injection"`
		// IDs are the recalled memories, most relevant first.
		IDs []string `json:"ids"`
		// Omitted counts the relevant memories left out to fit the budget.
		Omitted int `json:"omitted"`
		// Held counts the memories left out because they wait for the
		// user's review: the repository committed them, and they read like
		// instructions to the agent's tools.
		Held int `json:"held,omitempty"`
		// Warning says why some memories may be missing (a provider call
		// failed, and what was found is by words, or among the memories
		// that could be indexed), "" when the search ran in full.
		Warning string `json:"warning,omitempty"`
		Note    string `json:"note,omitempty"`
	}
	hitOut struct {
		Memory memoryOut `json:"memory"`
		// Relevance is the relevance gate's confidence, 0–1, that the
		// memory is relevant to the query; Strong says it passed the gate
		// (memory_recall would return it).
		Relevance float64 `json:"relevance"`
		Strong    bool    `json:"strong"`
		// Score is the memory's rank-fusion score, which orders the hits.
		Score float64 `json:"score"`
		// Matched is the id of the earlier version the query matched, if
		// it was not the current one.
		Matched string `json:"matched,omitempty"`
	}
	searchOut struct {
		Query string   `json:"query"`
		Hits  []hitOut `json:"hits"`
		// LeftOut counts the hits left out to keep the result small.
		LeftOut int `json:"left_out,omitempty"`
		// Held counts the memories left out because they wait for the
		// user's review (see recallOut.Held).
		Held int `json:"held,omitempty"`
		// Waiting counts the memories not searched because they wait for
		// the user's review (an agent's, under the default review).
		Waiting int    `json:"waiting_for_review,omitempty"`
		Warning string `json:"warning,omitempty"`
		Note    string `json:"note,omitempty"`
	}
	rememberOut struct {
		Memory     memoryOut `json:"memory"`
		Redactions int       `json:"redactions"`
		Superseded string    `json:"superseded,omitempty"`
		NotHead    string    `json:"not_head,omitempty"`
		Revived    bool      `json:"revived,omitempty"`
		Raced      string    `json:"raced,omitempty"`
		// DroppedAnchors counts the valid anchors given that the
		// repository does not have: not recorded.
		DroppedAnchors int `json:"dropped_anchors,omitempty"`
		// InvalidAnchors counts the anchors given that are not valid (a
		// path that is absolute or climbs out with .., neither a path nor
		// a symbol): not recorded.
		InvalidAnchors int `json:"invalid_anchors,omitempty"`
		// Held says why the memory waits for the user's review (the
		// quarantine rule that held it); "" when it is in force.
		Held string `json:"held,omitempty"`
		// Commit and Note: see commitNote.
		Commit []string `json:"commit,omitempty"`
		Note   string   `json:"note,omitempty"`
	}
	// versionOut is one version of a chain, on one line.
	versionOut struct {
		ID        string    `json:"id"`
		Version   int       `json:"version"`
		CreatedAt time.Time `json:"created_at"`
		// Retired is true for a version that forgets the memory.
		Retired bool `json:"retired,omitempty"`
		// Parallel is true for a change made alongside another of the
		// same version (a merge of two branches that each changed the
		// memory) that is not in force.
		Parallel bool   `json:"parallel,omitempty"`
		Line     string `json:"line"`
	}
	linkOut struct {
		Relationship memcore.Relationship `json:"relationship"`
		ID           string               `json:"id"`
		// Line is the first line of the memory at the other end, "" when
		// no memory has ID.
		Line string `json:"line"`
	}
	showOut struct {
		Memory memoryOut `json:"memory"`
		// Status is "current", "waits for review", "forgotten", "earlier
		// version" or "parallel change".
		Status string `json:"status"`
		// Current is the id of the chain's current version.
		Current string `json:"current"`
		// Chain is the chain's versions, oldest first.
		Chain    []versionOut `json:"chain"`
		LinksOut []linkOut    `json:"links_out"`
		LinksIn  []linkOut    `json:"links_in"`
		// LeftOut counts the versions and links left out to keep the
		// result small: VersionsLeftOut of the oldest versions, and
		// LinksLeftOut links. forgemem show gives them all.
		LeftOut         int    `json:"left_out,omitempty"`
		VersionsLeftOut int    `json:"versions_left_out,omitempty"`
		LinksLeftOut    int    `json:"links_left_out,omitempty"`
		Note            string `json:"note,omitempty"`
	}
	forgetOut struct {
		// Memory is the retired version written, or, when the memory was
		// already forgotten, its retired current version.
		Memory memoryOut `json:"memory"`
		// Retired is the id of the version the retired one supersedes.
		Retired string `json:"retired,omitempty"`
		Already bool   `json:"already,omitempty"`
		// Commit and Note: see commitNote.
		Commit []string `json:"commit,omitempty"`
		Note   string   `json:"note,omitempty"`
	}
	listItem struct {
		ID       string           `json:"id"`
		Scope    memcore.Scope    `json:"scope"`
		Category memcore.Category `json:"category"`
		Version  int              `json:"version"`
		Title    string           `json:"title"`
	}
	listOut struct {
		Memories []listItem `json:"memories"`
		// Total counts the memories the filters keep; Offset is the first
		// one's place among them.
		Total  int `json:"total"`
		Offset int `json:"offset"`
		// LeftOut counts the memories after this page; NextOffset is the
		// offset of the next page, when there is one.
		LeftOut         int `json:"left_out"`
		NextOffset      int `json:"next_offset,omitempty"`
		HiddenForgotten int `json:"hidden_forgotten"`
		// Waiting counts the memories not listed because they wait for
		// the user's review (an agent's, under the default review).
		Waiting int    `json:"waiting_for_review,omitempty"`
		Note    string `json:"note,omitempty"`
	}
)

// memoryOf is m with its content cut to maxContent bytes, and each
// character memcore.CheckText refuses that a hand edit or a cloned
// repository left in it written as its code point (memcore.VisibleText:
// "<U+E0041>"), as recall's injection shows it: an agent reads nothing a
// person reading the memory cannot see.
func memoryOf(m workspace.Memory, maxContent int) memoryOut {
	content := clipBytes(m.Content, maxContent)
	return memoryOut{ID: m.ID, Scope: m.Scope, Category: m.Category, Version: m.Version, CreatedAt: m.CreatedAt,
		Content: memcore.VisibleText(content), ContentCut: len(content) < len(m.Content), Path: m.Path, Stale: memcore.VisibleText(m.Stale)}
}

// partialNote is the note of a recall or search a provider failure left
// partial (workspace.ErrPartial), or "" for any other err.
func partialNote(err error) string {
	if !errors.Is(err, workspace.ErrPartial) {
		return ""
	}
	return fmt.Sprintf("Some memories may be missing: %v. What is here was found by words, or among the memories that could be indexed.", err)
}

func (h *handlers) recall(ctx context.Context, in recallArgs) (string, recallOut, error) {
	q := strings.TrimSpace(string(in.Query))
	if q == "" {
		return "", recallOut{}, fmt.Errorf("%w: the query is empty; pass the task or question in the user's words", errArguments)
	}
	res, err := h.ws.Recall(ctx, []memcore.Message{{Role: memcore.RoleUser, Content: q}})
	note := partialNote(err)
	if err != nil && note == "" {
		return "", recallOut{}, err
	}
	out := recallOut{Injection: res.Injection, IDs: []string{}, Omitted: res.Omitted, Held: res.HeldDropped}
	if note != "" {
		out.Warning = err.Error()
	}
	for _, r := range res.Memories {
		out.IDs = append(out.IDs, r.Memory.Meta.ID)
	}
	text := res.Injection
	if res.Injection == "" {
		out.Note = "Nothing remembered is relevant to this query."
		text = out.Note
	}
	note = strings.TrimSpace(note + " " + heldLeftOut(out.Held))
	if note != "" {
		out.Note = strings.TrimSpace(out.Note + " " + note)
		text += "\n\n(" + note + ")"
	}
	return text, out, nil
}

func (h *handlers) search(ctx context.Context, in searchArgs) (string, searchOut, error) {
	if strings.TrimSpace(string(in.Query)) == "" {
		return "", searchOut{}, fmt.Errorf("%w: the search text is empty; pass a topic, a question or words a memory would contain", errArguments)
	}
	res, err := h.ws.Search(ctx, string(in.Query), int(in.Limit))
	note := partialNote(err)
	if err != nil && note == "" {
		return "", searchOut{}, err
	}
	warning := ""
	if note != "" {
		warning = err.Error()
	}
	query := clip(res.Query, maxQuoteRunes)
	hits := make([]hitEntry, len(res.Hits))
	for i, hit := range res.Hits {
		hits[i] = newHitEntry(i, hit)
	}
	render := func(n int) (string, searchOut) {
		out := searchOut{Query: query, Hits: []hitOut{}, Warning: warning, Held: res.Held, Waiting: res.Pending}
		var b strings.Builder
		if len(hits) == 0 {
			out.Note = fmt.Sprintf("No memory matches %q; try other words, or memory_list.", out.Query)
			b.WriteString(out.Note)
		} else {
			out.Note = writeHits(&b, &out, hits[:n], len(hits)-n)
		}
		if extra := joinNotes(note, heldLeftOut(out.Held), waitingLeftOut(out.Waiting, "searched")); extra != "" {
			out.Note = joinNotes(out.Note, extra)
			b.WriteString("\n\n(" + extra + ")")
		}
		return b.String(), out
	}
	text, out := fit(fitting(hits), render)
	return text, out, nil
}

// waitingLeftOut says that n memories wait for the user's review and are
// not listed or searched (what), "" when n is 0. It never gives their text.
func waitingLeftOut(n int, what string) string {
	switch {
	case n == 1:
		return "1 memory waits for the user's review in forgemem review and is not " + what + "."
	case n > 1:
		return fmt.Sprintf("%d memories wait for the user's review in forgemem review and are not %s.", n, what)
	}
	return ""
}

// joinNotes joins the notes that are not "" with spaces.
func joinNotes(notes ...string) string {
	return strings.Join(slices.DeleteFunc(notes, func(s string) bool { return s == "" }), " ")
}

// errNoID refuses an empty id, as the other bad arguments are refused:
// saying what the tool takes.
var errNoID = fmt.Errorf("%w: no memory id given; pass a memory's id (mem_…) or a unique prefix of it, from memory_search or memory_list", errArguments)

// heldLeftOut says that n memories were left out because they wait for the
// user's review, "" when n is 0.
func heldLeftOut(n int) string {
	switch {
	case n == 1:
		return "1 memory the repository committed was left out: it reads like an instruction to the agent's tools and waits for the user's review in forgemem review."
	case n > 1:
		return fmt.Sprintf("%d memories the repository committed were left out: they read like instructions to the agent's tools and wait for the user's review in forgemem review.", n)
	}
	return ""
}

// hitEntry is a hit as a search result gives it: its text and its
// structured content.
type hitEntry struct {
	text string
	out  hitOut
}

func newHitEntry(i int, hit workspace.Hit) hitEntry {
	m := memoryOf(hit.Memory, maxHitContentBytes)
	strength := "weak"
	if hit.Strong {
		strength = "strong"
	}
	text := fmt.Sprintf("\n%d. %s (relevance %.2f, %s; %s/%s, version %d)", i+1, m.ID, hit.Relevance, strength, m.Scope, m.Category, m.Version)
	if hit.Matched != "" {
		text += " — matched its earlier version " + hit.Matched
	}
	if m.Stale != "" {
		text += "\nMay be outdated: " + m.Stale + "."
	}
	text += "\n" + indent(m.Content)
	if m.ContentCut {
		text += fmt.Sprintf(" … (cut: %d bytes in all)", len(hit.Memory.Content))
	}
	return hitEntry{text: text + "\n", out: hitOut{Memory: m, Relevance: hit.Relevance, Strong: hit.Strong, Score: hit.Score, Matched: hit.Matched}}
}

func (e hitEntry) sizes() (int, any) { return len(e.text), e.out }

// writeHits writes hits, best first, and returns the note on the leftOut
// hits after them and on the contents cut.
func writeHits(b *strings.Builder, out *searchOut, hits []hitEntry, leftOut int) string {
	fmt.Fprintf(b, "%s matching %q, best first:\n", count(len(hits), "memory", "memories"), out.Query)
	cut := false
	for _, h := range hits {
		b.WriteString(h.text)
		out.Hits = append(out.Hits, h.out)
		cut = cut || h.out.Memory.ContentCut
	}
	out.LeftOut = leftOut
	var notes []string
	if out.LeftOut > 0 {
		notes = append(notes, fmt.Sprintf("%s left out to keep this result under 64 KiB: ask for a smaller limit or search for narrower words.",
			count(out.LeftOut, "more match", "more matches")))
	}
	if cut {
		notes = append(notes, "A long content is cut; memory_show gives a memory in full.")
	}
	note := strings.Join(notes, " ")
	if note != "" {
		b.WriteString("\n" + note)
	}
	return note
}

// sized is an entry of a list or a search: the bytes of its text and its
// structured content.
type sized interface {
	sizes() (textBytes int, structured any)
}

// fitting counts the first entries whose texts, and whose structured
// contents as JSON, each add up to at most maxResultBytes: an upper bound
// of those a result holds with its header and notes. It is at least 1
// when there are entries, so that a result always shows one.
func fitting[E sized](entries []E) int {
	text, data := 0, 0
	for i, e := range entries {
		n, st := e.sizes()
		j, err := json.Marshal(st)
		if err != nil {
			panic(fmt.Sprintf("mcpserver: marshalling a result: %v", err))
		}
		text, data = text+n, data+len(j)+1
		if i > 0 && (text > maxResultBytes || data > maxResultBytes) {
			return i
		}
	}
	return len(entries)
}

// fit returns render(n) for the largest n from 1 to most whose text and
// structured content — JSON, as the SDK sends it — are each at most
// maxResultBytes; render(most) when most is 0, and render(1) when none
// fits (one entry is always shown). The sizes grow with n.
func fit[Out any](most int, render func(n int) (string, Out)) (string, Out) {
	return fitAtLeast(1, most, render)
}

// fitAtLeast is fit showing at least least entries (0 or 1) when none
// fits: render(least).
func fitAtLeast[Out any](least, most int, render func(n int) (string, Out)) (string, Out) {
	fits := func(n int) (string, Out, bool) {
		text, out := render(n)
		data, err := json.Marshal(out)
		if err != nil {
			panic(fmt.Sprintf("mcpserver: marshalling a result: %v", err))
		}
		return text, out, len(text) <= maxResultBytes && len(data) <= maxResultBytes
	}
	text, out, ok := fits(most)
	if ok || most <= least {
		return text, out
	}
	// render(lo) fits or lo is least; render(hi) does not.
	lo, hi := least, most
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if _, _, ok := fits(mid); ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return render(lo)
}

func (h *handlers) remember(ctx context.Context, in rememberArgs) (string, rememberOut, error) {
	var proposed []memcore.Anchor
	for _, a := range in.Anchors {
		proposed = append(proposed, memcore.Anchor{Path: a.Path, Symbol: a.Symbol})
	}
	res, err := h.ws.Remember(ctx, workspace.RememberInput{
		Text: string(in.Content), Scope: in.Scope, Category: in.Category,
		Supersedes: string(in.Supersedes), SessionID: h.session, Proposed: proposed, Source: memcore.SourceAgent,
	})
	if err != nil {
		return "", rememberOut{}, err
	}
	m := res.Memory
	out := rememberOut{Memory: memoryOf(m, maxShowContentBytes), Redactions: res.Redactions, Superseded: res.Superseded,
		NotHead: res.NotHead, Revived: res.Revived, Raced: res.Raced, Held: res.Held}
	for _, a := range res.DroppedAnchors {
		if a.Validate() != nil {
			out.InvalidAnchors++
		} else {
			out.DroppedAnchors++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Remembered as %s (%s, version %d).", m.ID, kind(m), m.Version)
	switch {
	case res.Raced != "":
		fmt.Fprintf(&b, " Another session had just changed the memory; this version supersedes its version %s.", res.Raced)
	case res.NotHead != "":
		fmt.Fprintf(&b, " %s was not the current version; this supersedes the current one, %s.", res.NotHead, res.Superseded)
	case res.Superseded != "":
		fmt.Fprintf(&b, " It supersedes %s, which stays in its history.", res.Superseded)
	}
	if res.Revived {
		b.WriteString(" The memory had been forgotten; it is current again.")
	}
	if res.Redactions > 0 {
		fmt.Fprintf(&b, " %s replaced by [REDACTED].", count(res.Redactions, "secret was", "secrets were"))
	}
	if out.InvalidAnchors > 0 {
		fmt.Fprintf(&b, " %s not valid (a path relative to the repository root, without .., or a symbol), so not recorded.",
			count(out.InvalidAnchors, "anchor is", "anchors are"))
	}
	if out.DroppedAnchors > 0 {
		fmt.Fprintf(&b, " %s not in the repository, so not recorded.", count(out.DroppedAnchors, "anchor is", "anchors are"))
	}
	if res.Held != "" {
		b.WriteString(" It waits for the user's review and is not recalled or searched until the user approves it. " + workspace.WhyHeld(res.Held))
	}
	if ob := res.OverBudget; ob != nil {
		fmt.Fprintf(&b, " It is never recalled into a prompt with the injection token budget in force: it takes about %d tokens, over memory.injection_token_budget (%d); "+
			"supersede it with a shorter text and remember the rest as separate memories, or ask the user to raise memory.injection_token_budget.", ob.Tokens, ob.Budget)
	}
	if out.Commit, out.Note = h.commitNote(ctx, m); out.Note != "" {
		b.WriteString(" " + out.Note)
	}
	return b.String(), out, nil
}

// commitNote returns the files to commit for the repository's other
// clones to have m, which a tool just wrote — its file and those of the
// earlier versions of its chain that git does not have yet (see
// Options.ToCommit) — and the note that says so, as the command says it;
// nil and "" when there are none.
func (h *handlers) commitNote(ctx context.Context, m workspace.Memory) (paths []string, note string) {
	if h.toCommit == nil {
		return nil, ""
	}
	if paths = h.toCommit(ctx, m); len(paths) == 0 {
		return nil, ""
	}
	if len(paths) == 1 {
		return paths, "Commit " + paths[0] + " for the repository's other clones to have it."
	}
	return paths, "Commit " + strings.Join(paths[:len(paths)-1], ", ") + " and " + paths[len(paths)-1] + " for the repository's other clones to have them."
}

func (h *handlers) forget(ctx context.Context, in forgetArgs) (string, forgetOut, error) {
	if strings.TrimSpace(string(in.ID)) == "" {
		return "", forgetOut{}, errNoID
	}
	res, err := h.ws.Forget(ctx, string(in.ID), string(in.Reason))
	if err != nil {
		return "", forgetOut{}, err
	}
	out := forgetOut{Memory: memoryOf(res.Memory, maxShowContentBytes), Retired: res.Retired, Already: res.Already}
	if res.Already {
		return fmt.Sprintf("%s was already forgotten (its current version is %s); nothing changed.", in.ID, res.Memory.ID), out, nil
	}
	text := fmt.Sprintf("Forgot %s: it is no longer recalled, searched or listed. Its history is kept; the retired version is %s, and memory_remember with supersedes brings it back.",
		res.Retired, res.Memory.ID)
	if out.Commit, out.Note = h.commitNote(ctx, res.Memory); out.Note != "" {
		text += " " + out.Note
	}
	return text, out, nil
}

func (h *handlers) list(ctx context.Context, in listArgs) (string, listOut, error) {
	res, err := h.ws.List(ctx, workspace.ListOptions{Scope: in.Scope, Category: in.Category})
	if err != nil {
		return "", listOut{}, err
	}
	total, offset := len(res.Memories), int(in.Offset)
	var page []listEntry
	if offset < total {
		for _, m := range res.Memories[offset:] {
			page = append(page, newListEntry(m, h.ws.Held))
		}
	}
	render := func(n int) (string, listOut) {
		out := listOut{Memories: []listItem{}, Total: total, Offset: offset, HiddenForgotten: res.Hidden, Waiting: res.HiddenPending}
		var b strings.Builder
		switch {
		case out.Total == 0:
			b.WriteString("No memories" + filters(in) + ".\n")
		case out.Offset >= out.Total:
			out.Note = fmt.Sprintf("Offset %d is past the end: there are %d memories%s.", out.Offset, out.Total, filters(in))
			b.WriteString(out.Note + "\n")
		default:
			writeList(&b, &out, page[:n], in)
		}
		if res.Hidden > 0 {
			fmt.Fprintf(&b, "(%s left out.)\n", count(res.Hidden, "forgotten memory", "forgotten memories"))
		}
		if w := waitingLeftOut(out.Waiting, "listed"); w != "" {
			out.Note = joinNotes(out.Note, w)
			b.WriteString("(" + w + ")\n")
		}
		return b.String(), out
	}
	text, out := fit(fitting(page), render)
	return text, out, nil
}

// listEntry is a memory as memory_list gives it: its line and its
// structured content.
type listEntry struct {
	line string
	item listItem
}

// newListEntry is m's entry. A memory held on the title shown says so
// instead of its title (held returns the reason: see
// workspace.Workspace.Held).
func newListEntry(m workspace.Memory, held func(workspace.Memory, string) string) listEntry {
	title := clip(m.Title, 200)
	item := listItem{ID: m.ID, Scope: m.Scope, Category: m.Category, Version: m.Version, Title: memcore.VisibleText(title)}
	if held(m, title) != "" {
		item.Title = heldTitle
	}
	return listEntry{line: fmt.Sprintf("- %s (%s/%s, version %d): %s\n", item.ID, item.Scope, item.Category, item.Version, item.Title), item: item}
}

func (e listEntry) sizes() (int, any) { return len(e.line), e.item }

// writeList writes the page of memories from out.Offset, one line each,
// with a note saying how to get the next page.
func writeList(b *strings.Builder, out *listOut, page []listEntry, in listArgs) {
	for _, e := range page {
		out.Memories = append(out.Memories, e.item)
	}
	shown := len(out.Memories)
	out.LeftOut = out.Total - out.Offset - shown
	if out.Offset == 0 && out.LeftOut == 0 {
		fmt.Fprintf(b, "%s%s, oldest first:\n", count(out.Total, "memory", "memories"), filters(in))
	} else {
		fmt.Fprintf(b, "Memories %d to %d of %d%s, oldest first:\n", out.Offset+1, out.Offset+shown, out.Total, filters(in))
	}
	for _, e := range page {
		b.WriteString(e.line)
	}
	if out.LeftOut > 0 {
		out.NextOffset = out.Offset + shown
		out.Note = fmt.Sprintf("%d more not shown, to keep this result under 64 KiB: call memory_list with offset %d for the next ones, or narrow the list with scope or category.",
			out.LeftOut, out.NextOffset)
		b.WriteString(out.Note + "\n")
	}
}

// heldTitle stands for the title of a memory recall holds: a repository's
// memory that reads like an instruction, which only the user can approve.
const heldTitle = "(held for the user's review in forgemem review: a repository's memory that reads like an instruction)"

// filters describes memory_list's filters: " in scope repo, category …".
func filters(in listArgs) string {
	var parts []string
	if in.Scope != "" {
		parts = append(parts, "scope "+string(in.Scope))
	}
	if in.Category != "" {
		parts = append(parts, "category "+string(in.Category))
	}
	if len(parts) == 0 {
		return ""
	}
	return " in " + strings.Join(parts, ", ")
}
