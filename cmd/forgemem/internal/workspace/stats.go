package workspace

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memretrieve"
)

// Stats counts what the memory folders hold, as [Workspace.Stats] returns
// it.
type Stats struct {
	// Scopes has one entry per scope that is on.
	Scopes []ScopeStats `json:"scopes"`
	// Chains counts the memories in force (one per chain: not forgotten,
	// and with a version that does not wait for review); Forgotten the
	// retired chains; Versions every memory file served.
	Chains    int `json:"chains"`
	Forgotten int `json:"forgotten"`
	Versions  int `json:"versions"`
	// Waiting counts the memories that wait for a person's review
	// (forgemem review), one per chain; WaitingByRule counts them by the
	// quarantine rule that held them ([Unrecorded] when the file gives no
	// reason), most frequent first. Held counts those of them that recall
	// holds although their files say they are in force: repository
	// memories that read like instructions, not yet approved (see
	// [ReviewItem.Held]). They are counted in Chains too.
	Waiting       int     `json:"waiting_for_review"`
	WaitingByRule []Count `json:"waiting_by_rule"`
	Held          int     `json:"held_for_review"`
	// Categories counts the chains that are not forgotten by category, in
	// the order of memcore.Categories.
	Categories []Count `json:"categories"`
	// Triggers counts the memory files by what wrote them: cadence and
	// compaction (capture), manual (a person), and [Unrecorded] when the
	// file does not say.
	Triggers []Count `json:"triggers"`
	// Problems counts the files (and folders) the store does not read,
	// which `forgemem validate` lists with the reason; Unreadable counts
	// them by that reason's kind (too-large, malformed, …), most frequent
	// first. Files the store serves repaired are read, so not counted.
	Problems   int     `json:"unreadable_files"`
	Unreadable []Count `json:"unreadable_by_kind"`
	// Oldest and Newest are the creation times of the oldest and newest
	// memory files; nil when there is none.
	Oldest *time.Time `json:"oldest,omitempty"`
	Newest *time.Time `json:"newest,omitempty"`
	// PendingCaptures counts the captures agent hooks queued that wait
	// for their pass (see [Workspace.Pending]); PendingReason says why
	// they wait, and CaptureWorker is the process id of the worker running
	// them (0: none runs).
	PendingCaptures int    `json:"pending_captures"`
	PendingReason   string `json:"pending_reason,omitempty"`
	CaptureWorker   int    `json:"capture_worker,omitempty"`
	// DroppedCaptures counts the captures a full queue dropped (at least
	// that many when DroppedSaturated is true), and LastDropped is when
	// the last one was.
	DroppedCaptures  int        `json:"dropped_captures"`
	DroppedSaturated bool       `json:"dropped_saturated,omitempty"`
	LastDropped      *time.Time `json:"last_dropped,omitempty"`
	// SetAsideCaptures counts the queued entries a worker could not read
	// and set aside as <name>.bad in the queue's folder, which no worker
	// runs (see PendingCaptures.SetAside).
	SetAsideCaptures int `json:"set_aside_captures"`
	// CaptureOff says why agent hooks queue no captures here (no model
	// for capture, see [Workspace.CaptureOff]); "" when they do.
	CaptureOff string `json:"capture_off,omitempty"`
}

// ScopeStats counts one scope's folder.
type ScopeStats struct {
	Scope     memcore.Scope `json:"scope"`
	Dir       string        `json:"dir"`
	Chains    int           `json:"chains"`
	Forgotten int           `json:"forgotten"`
	Versions  int           `json:"versions"`
	// CacheBytes is the size of the scope's embedding cache files.
	CacheBytes int64 `json:"cache_bytes"`
}

// Unrecorded names, in [Stats], the memories whose files do not record
// what is counted: no trigger, or waiting for review with no reason.
const Unrecorded = "unrecorded"

// Count is a number of things of one name.
type Count struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

// Stats counts the memories of both scopes.
func (w *Workspace) Stats(ctx context.Context) (*Stats, error) {
	snap, err := w.load(ctx)
	if err != nil {
		return nil, err
	}
	probs, err := w.unreadable(ctx)
	if err != nil {
		return nil, err
	}
	st := &Stats{Scopes: []ScopeStats{}, Versions: len(snap.all), Problems: len(probs), Unreadable: countKinds(probs)}
	if err := w.captureStats(st); err != nil {
		return nil, err
	}
	byScope := map[memcore.Scope]*ScopeStats{}
	for _, s := range memcore.Scopes() {
		if dir := w.store.Dir(s); dir != "" {
			st.Scopes = append(st.Scopes, ScopeStats{Scope: s, Dir: dir, CacheBytes: cacheBytes(filepath.Join(dir, memretrieve.CacheDirName))})
		}
	}
	for i := range st.Scopes {
		byScope[st.Scopes[i].Scope] = &st.Scopes[i]
	}
	cats := map[memcore.Category]int{}
	triggers := map[memcore.Trigger]int{}
	settled := memcore.NewGraph(snap.g.Settled())
	for _, m := range snap.all {
		triggers[m.Meta.Trigger]++
		st.count(byScope[m.Meta.Scope], snap.g, settled, m, cats)
	}
	st.WaitingByRule = w.countWaiting(st, snap.g)
	for _, c := range memcore.Categories() {
		st.Categories = append(st.Categories, Count{Name: string(c), Count: cats[c]})
	}
	for _, t := range []memcore.Trigger{memcore.TriggerCadence, memcore.TriggerCompaction, memcore.TriggerManual, ""} {
		if n := triggers[t]; n > 0 || t != "" {
			st.Triggers = append(st.Triggers, Count{Name: cmp.Or(string(t), Unrecorded), Count: n})
		}
	}
	return st, nil
}

// countWaiting counts in st the memories of g that wait for review, those
// recall holds among them, and returns them by rule.
func (w *Workspace) countWaiting(st *Stats, g *memcore.Graph) []Count {
	rules := map[string]int{}
	for _, h := range g.Heads() {
		reason := h.Meta.StatusReason
		if held := w.heldBy(h); held != "" {
			reason = held
			st.Held++
		} else if h.Meta.Status != memcore.StatusPending {
			continue
		}
		st.Waiting++
		rules[cmp.Or(ruleOf(reason), Unrecorded)]++
	}
	out := []Count{}
	for r, n := range rules {
		out = append(out, Count{Name: r, Count: n})
	}
	slices.SortFunc(out, func(a, b Count) int { return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Name, b.Name)) })
	return out
}

// count adds m, a member of g, to st and to sc, its scope's counts, and
// the category of a chain in force (its head in settled, the graph of the
// memories in force) to cats.
func (st *Stats) count(sc *ScopeStats, g, settled *memcore.Graph, m *memcore.MemoryFile, cats map[memcore.Category]int) {
	sc.Versions++
	if st.Oldest == nil || m.Meta.CreatedAt.Before(*st.Oldest) {
		t := m.Meta.CreatedAt
		st.Oldest = &t
	}
	if st.Newest == nil || m.Meta.CreatedAt.After(*st.Newest) {
		t := m.Meta.CreatedAt
		st.Newest = &t
	}
	switch {
	case !g.IsSuperseded(m.Meta.ID) && m.Meta.Retired:
		sc.Forgotten++
		st.Forgotten++
	case settledHead(settled, m):
		sc.Chains++
		st.Chains++
		cats[m.Meta.Category]++
	}
}

// captureStats fills in what the capture queue holds and dropped, and why
// agent hooks queue nothing when they do not.
func (w *Workspace) captureStats(st *Stats) error {
	pending, err := w.Pending()
	if err != nil {
		return fmt.Errorf("reading the capture queue: %w", err)
	}
	st.PendingCaptures, st.PendingReason, st.CaptureWorker = pending.Count, pending.Reason, pending.WorkerPID
	st.DroppedCaptures, st.DroppedSaturated = pending.Dropped.Count, pending.Dropped.Saturated
	st.SetAsideCaptures = pending.SetAside
	if !pending.Dropped.Last.IsZero() {
		last := pending.Dropped.Last
		st.LastDropped = &last
	}
	if err := w.CaptureOff(); err != nil {
		st.CaptureOff = err.Error()
	}
	return nil
}

// cacheBytes is the size of the embedding cache files in dir.
func cacheBytes(dir string) int64 {
	names, _ := filepath.Glob(filepath.Join(dir, "vectors-*.fmv"))
	var n int64
	for _, name := range names {
		if info, err := os.Lstat(name); err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
	}
	return n
}

// countKinds counts probs by kind, most frequent first, then by name.
func countKinds(probs []Problem) []Count {
	n := map[ProblemKind]int{}
	for _, p := range probs {
		n[p.Kind]++
	}
	out := []Count{}
	for k, c := range n {
		out = append(out, Count{Name: string(k), Count: c})
	}
	slices.SortFunc(out, func(a, b Count) int { return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Name, b.Name)) })
	return out
}

// settledHead reports whether m is the head of its chain among the
// memories in force (settled).
func settledHead(settled *memcore.Graph, m *memcore.MemoryFile) bool {
	h, ok := settled.Head(m.Meta.ID)
	return ok && h.Meta.ID == m.Meta.ID
}
