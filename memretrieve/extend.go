package memretrieve

import (
	"maps"
	"slices"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memretrieve/internal/index"
)

// Most builds of a long-lived engine follow one new memory: a capture, a
// memory a person remembered. The new memory comes last in the store's
// order (the newest), so the build's items are the last build's, in the
// same order, and then some: every index can then be extended rather than
// made again, for the same result — the vector index by appending rows to
// its block (a snapshot being searched reads only its own rows), the
// lexical index by numbering only the new texts' terms (index.NewLexFrom),
// the calibration's vector side by searching only the new rows. A build
// that removed, replaced or reordered anything makes them all again.

// extension is what a build can reuse of the last one's indexes.
type extension struct {
	prev *snapshot
	// from is the first new item, and fromRow the first new row.
	from, fromRow int
}

// extensionOf returns what the build of items (rows having vectors) can
// reuse of the current snapshot, or nil when it must make its indexes
// again: no snapshot yet, a partial build, a quantised index (its rows
// point into the cache files), or items and rows that do not start with
// the last build's. Callers hold buildMu.
func (e *Engine) extensionOf(items []item, rows []int) *extension {
	prev := e.snap.Load()
	last := e.last
	if prev == nil || e.partial != nil || e.cache.quantized || last == nil || prev.gen != last.gen ||
		len(last.items) > len(items) || len(last.rows) > len(rows) || prev.idx.Dim != e.cache.dim ||
		(prev.lex == nil) != (e.cfg.LexicalWeight == 0) {
		return nil
	}
	for i, it := range last.items {
		if items[i].m != it.m || items[i].key != it.key {
			return nil
		}
	}
	if !slices.Equal(last.rows, rows[:len(last.rows)]) {
		return nil
	}
	return &extension{prev: prev, from: len(last.items), fromRow: len(last.rows)}
}

// lastBuild is what the latest publication was made of, for extensionOf.
type lastBuild struct {
	gen   uint64
	items []item
	rows  []int
}

// extendFlat returns the vector index of the items at rows: x's rows, and
// those of the items at rows[from:] appended to its block. The cache shares
// the new rows, as with a new index.
func (e *Engine) extendFlat(x *index.Flat, items []item, rows []int, from int) *index.Flat {
	c := e.cache
	dim := c.dim
	n := len(rows) - from
	vecs := slices.Grow(x.Vecs, n*dim)
	ids := slices.Grow(x.IDs, n)
	if len(x.Vecs) > 0 && &vecs[0] != &x.Vecs[0] {
		// A new block: the cache shares it, not the old one.
		for j, i := range rows[:from] {
			c.vecs[items[i].key] = vecs[j*dim : (j+1)*dim : (j+1)*dim]
		}
	}
	for _, i := range rows[from:] {
		it := items[i]
		start := len(vecs)
		vecs = append(vecs, c.vecs[it.key]...)
		c.vecs[it.key] = vecs[start : start+dim : start+dim]
		ids = append(ids, it.m.Meta.ID)
	}
	return &index.Flat{Dim: dim, IDs: ids, Vecs: vecs}
}

// extendRows returns rows (a memory id to its row of lex) with the rows of
// lex from from on added; rows itself is not changed.
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
	idx := e.extendFlat(prev.idx, items, rows, ext.fromRow)
	var lex *index.Lex
	var lexRows map[string]int
	if e.cfg.LexicalWeight != 0 {
		lex = e.extendLexical(prev.lex, items, ext.from)
		lexRows = extendRows(prev.lexRows, lex, ext.from)
	}
	e.gen++
	e.fingerprint = fp
	e.snap.Store(&snapshot{gen: e.gen, graph: g, idx: idx, lex: lex, lexRows: lexRows,
		cal: e.calibration(idx, lex, items, rows, ext)})
	e.last = &lastBuild{gen: e.gen, items: items, rows: rows}
}

// graphs are the graphs of the latest build: of every memory the store
// listed, and of those in force (see memcore.Graph.Settled).
type graphs struct {
	mems         []*memcore.MemoryFile
	full         *memcore.Graph
	settled      []*memcore.MemoryFile
	settledGraph *memcore.Graph
}

// settledGraph returns the graph of the memories of mems in force — those
// of chains that are not retired (forgotten), without the versions that
// wait for review — made from the latest build's graphs when mems starts
// with the memories it listed (the same values, in order): the graph of
// every memory by adding the new ones, and the graph of those in force the
// same way when they start with the latest build's. Callers hold buildMu.
func (e *Engine) settledGraph(mems []*memcore.MemoryFile) *memcore.Graph {
	last := e.graphs
	var full *memcore.Graph
	if last != nil && len(last.mems) <= len(mems) && slices.Equal(last.mems, mems[:len(last.mems)]) {
		full = last.full.With(mems[len(last.mems):]...)
	} else {
		full = memcore.NewGraph(mems)
		last = nil
	}
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
	e.graphs = &graphs{mems: mems, full: full, settled: settled, settledGraph: g}
	return g
}
