package memretrieve

import (
	"maps"
	"slices"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memretrieve/internal/index"
)

// Most builds of a long-lived engine follow a new memory or a few: a
// capture, a memory a person remembered. A new memory is the newest, so it
// comes last in the store's order, or among the last memories when they
// were written within the same second (the order then follows their ids):
// the build's items are the last build's, in the same order up to some
// item near the end, and then the rest of them with the new ones among
// them. Every index can then be extended rather than made again, for the
// same result: the graph (memcore.Graph.With, from a graph of the memories
// before the newest second), the vector index (rows appended to its block,
// which a snapshot being searched reads only up to its own rows; or a new
// block holding a copy of the rows before the change), the lexical index
// (only the terms of the texts after the change looked up, by
// index.NewLexFrom), the calibration (its vector side searched over the
// new rows only: a best score is the best of the old ones and the new
// ones). A build that removed anything, or changed it far back, makes them
// all again.

// extension is what a build can reuse of the last one's indexes.
type extension struct {
	prev *snapshot
	// items[:from] and rows[:fromRow] are the last build's first ones;
	// appended is true when they are all of the last build's.
	from, fromRow int
	appended      bool
	// newItems and newRows are the items (by index into items) and the
	// rows (by index into rows) the last build did not have.
	newItems, newRows []int
}

// lastBuild is what the latest publication was made of, for extensionOf.
type lastBuild struct {
	gen   uint64
	items []item
	rows  []int
}

// extensionOf returns what the build of items (rows having vectors) can
// reuse of the current snapshot, or nil when it must make its indexes
// again: no snapshot yet, a partial build, a quantised index (its rows
// point into the cache files), a configuration the snapshot does not
// match, or items and rows that are not the last build's with others
// added, after the first half of them at least. Callers hold buildMu.
func (e *Engine) extensionOf(items []item, rows []int) *extension {
	prev, last := e.snap.Load(), e.last
	if prev == nil || e.partial != nil || e.cache.quantized || last == nil || prev.gen != last.gen ||
		prev.idx.Dim != e.cache.dim || (prev.lex == nil) != (e.cfg.LexicalWeight == 0) {
		return nil
	}
	from, newItems, ok := itemsAdded(last.items, items)
	if !ok {
		return nil
	}
	fromRow, newRows, ok := rowsAdded(last, items, rows, from)
	if !ok {
		return nil
	}
	return &extension{prev: prev, from: from, fromRow: fromRow, newItems: newItems, newRows: newRows,
		appended: from == len(last.items) && fromRow == len(last.rows)}
}

// itemsAdded returns how many items start both old and now alike, and the
// indexes of the items of now that old lacks; ok is false when old has an
// item now lacks, or when less than half of old starts now.
func itemsAdded(old, now []item) (from int, added []int, ok bool) {
	for from < len(old) && from < len(now) && now[from].m == old[from].m && now[from].key == old[from].key {
		from++
	}
	if 2*from < len(old) {
		return 0, nil, false
	}
	added, ok = addedTo(old[from:], now[from:], func(it item) *memcore.MemoryFile { return it.m })
	for i := range added {
		added[i] += from
	}
	return from, added, ok
}

// rowsAdded returns how many rows start both last.rows and rows alike —
// those of the items before from — and the indexes of the rows whose
// memories last's rows lack; ok is false when a memory of last's rows is
// not a row now, or an item before from got or lost its vector.
func rowsAdded(last *lastBuild, items []item, rows []int, from int) (fromRow int, added []int, ok bool) {
	for fromRow < len(last.rows) && last.rows[fromRow] < from && fromRow < len(rows) && rows[fromRow] == last.rows[fromRow] {
		fromRow++
	}
	if fromRow < len(last.rows) && last.rows[fromRow] < from || fromRow < len(rows) && rows[fromRow] < from {
		return 0, nil, false
	}
	oldRows := mapSlice(last.rows[fromRow:], func(r int) *memcore.MemoryFile { return last.items[r].m })
	nowRows := mapSlice(rows[fromRow:], func(r int) *memcore.MemoryFile { return items[r].m })
	added, ok = addedTo(oldRows, nowRows, func(m *memcore.MemoryFile) *memcore.MemoryFile { return m })
	for i := range added {
		added[i] += fromRow
	}
	return fromRow, added, ok
}

// addedTo returns the indexes of the elements of now that are not in old
// (by the memory each is of, counted: a memory twice in now and once in
// old is new once), and false when an element of old is not in now.
func addedTo[T any](old, now []T, memoryOf func(T) *memcore.MemoryFile) ([]int, bool) {
	count := make(map[*memcore.MemoryFile]int, len(old))
	for _, o := range old {
		count[memoryOf(o)]++
	}
	var out []int
	for i, n := range now {
		m := memoryOf(n)
		if count[m] > 0 {
			count[m]--
			continue
		}
		out = append(out, i)
	}
	for _, c := range count {
		if c > 0 {
			return nil, false
		}
	}
	return out, true
}

// mapSlice returns f of each element of s.
func mapSlice[S, T any](s []S, f func(S) T) []T {
	out := make([]T, len(s))
	for i, v := range s {
		out[i] = f(v)
	}
	return out
}

// extendFlat returns the vector index of the items at rows, made from x,
// the index of the last build: its block with the new rows appended, when
// the rows were only appended; else a new block, with a copy of x's rows
// before the change. The cache shares the block's rows, as with a new
// index.
func (e *Engine) extendFlat(x *index.Flat, items []item, rows []int, ext *extension) *index.Flat {
	c := e.cache
	dim := c.dim
	var vecs []float32
	var ids []string
	if ext.appended {
		vecs = slices.Grow(x.Vecs, (len(rows)-ext.fromRow)*dim)
		ids = slices.Grow(x.IDs, len(rows)-ext.fromRow)
	} else {
		vecs = append(make([]float32, 0, len(rows)*dim), x.Vecs[:ext.fromRow*dim]...)
		ids = append(make([]string, 0, len(rows)), x.IDs[:ext.fromRow]...)
	}
	if len(x.Vecs) > 0 && ext.fromRow > 0 && &vecs[0] != &x.Vecs[0] {
		// A new block: the cache shares it, not the old one.
		for j, i := range rows[:ext.fromRow] {
			c.vecs[items[i].key] = vecs[j*dim : (j+1)*dim : (j+1)*dim]
		}
	}
	for _, i := range rows[ext.fromRow:] {
		it := items[i]
		start := len(vecs)
		vecs = append(vecs, c.vecs[it.key]...)
		c.vecs[it.key] = vecs[start : start+dim : start+dim]
		ids = append(ids, it.m.Meta.ID)
	}
	return &index.Flat{Dim: dim, IDs: ids, Vecs: vecs}
}

// extendRows returns rows (a memory id to its row of the last lexical
// index) with the rows of lex from from on set; rows itself is not
// changed.
func extendRows(rows map[string]int, lex *index.Lex, from int) map[string]int {
	if lex == nil {
		return nil
	}
	out := maps.Clone(rows)
	for i := from; i < lex.Len(); i++ {
		out[lex.IDs[i]] = i
	}
	return out
}

// publishExtended publishes, as publish does, a snapshot of g, items and
// rows, fingerprinted fp, whose indexes extend those of ext.prev. Nothing
// left the cache: every key of the last build is an item again.
func (e *Engine) publishExtended(g *memcore.Graph, items []item, rows []int, fp [32]byte, ext *extension) {
	prev := ext.prev
	idx := e.extendFlat(prev.idx, items, rows, ext)
	var lex *index.Lex
	var lexRows map[string]int
	if e.cfg.LexicalWeight != 0 {
		lex = e.extendLexical(prev.lex, items, ext)
		lexRows = extendRows(prev.lexRows, lex, ext.from)
	}
	e.gen++
	e.fingerprint = fp
	e.snap.Store(&snapshot{gen: e.gen, graph: g, idx: idx, lex: lex, lexRows: lexRows,
		cal: e.calibration(idx, lex, items, rows, ext)})
	e.last = &lastBuild{gen: e.gen, items: items, rows: rows}
	e.extended.Add(1)
}

// graphs are the graphs of the latest build: of every memory the store
// listed, of those in force (see memcore.Graph.Settled), and of the
// memories listed before the newest second (base, the first baseLen of
// mems), which a later build adds to.
type graphs struct {
	mems         []*memcore.MemoryFile
	full         *memcore.Graph
	settled      []*memcore.MemoryFile
	settledGraph *memcore.Graph
	base         *memcore.Graph
	baseLen      int
}

// settledGraph returns the graph of the memories of mems in force — those
// of chains that are not retired (forgotten), without the versions that
// wait for review — made from the latest build's graphs when mems are the
// memories it listed with others added after those of the seconds before
// its newest (see fullGraph): the graph of every memory by adding the new
// ones, and, when some are not in force, the graph of those in force the
// same way when they start with the latest build's. Callers hold buildMu.
func (e *Engine) settledGraph(mems []*memcore.MemoryFile) *memcore.Graph {
	last := e.graphs
	full, base, baseLen := e.fullGraph(mems)
	settled := full.Settled()
	var g *memcore.Graph
	switch {
	case len(settled) == full.Len():
		g = full // every memory is in force
	case last != nil && len(last.settled) <= len(settled) && slices.Equal(last.settled, settled[:len(last.settled)]):
		g = last.settledGraph.With(settled[len(last.settled):]...)
	default:
		g = memcore.NewGraph(settled)
	}
	e.graphs = &graphs{mems: mems, full: full, settled: settled, settledGraph: g, base: base, baseLen: baseLen}
	return g
}

// fullGraph returns the graph of mems, and the graph of its memories of
// the seconds before its newest (the first baseLen), for the next build.
// It adds to the latest build's graph when mems starts with the memories
// that build listed, and to its base when they are among the memories
// after the base's (written within the newest second, their order follows
// their ids); else it indexes every memory.
func (e *Engine) fullGraph(mems []*memcore.MemoryFile) (full, base *memcore.Graph, baseLen int) {
	last := e.graphs
	baseLen = newestSecond(mems)
	switch {
	case last == nil:
	case len(last.mems) <= len(mems) && slices.Equal(last.mems, mems[:len(last.mems)]):
		full = last.full.With(mems[len(last.mems):]...)
	case last.baseLen <= len(mems) && slices.Equal(last.mems[:last.baseLen], mems[:last.baseLen]):
		full = last.base.With(mems[last.baseLen:]...)
	}
	switch {
	case full == nil:
		full = memcore.NewGraph(mems)
		base = memcore.NewGraph(mems[:baseLen])
	case baseLen == last.baseLen:
		base = last.base
	case baseLen > last.baseLen:
		base = last.base.With(mems[last.baseLen:baseLen]...)
	default:
		base = memcore.NewGraph(mems[:baseLen])
	}
	return full, base, baseLen
}

// newestSecond returns how many of mems (in the store's order, oldest
// first by created_at) come before those created within the same second
// as the last one.
func newestSecond(mems []*memcore.MemoryFile) int {
	n := len(mems)
	if n == 0 {
		return 0
	}
	newest := mems[n-1].Meta.CreatedAt.Truncate(1e9)
	for n > 0 && !mems[n-1].Meta.CreatedAt.Truncate(1e9).Before(newest) {
		n--
	}
	return n
}
