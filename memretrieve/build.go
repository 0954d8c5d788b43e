package memretrieve

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"strings"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memcore/redact"
	"github.com/forgemem/forgemem/memretrieve/internal/index"
)

// buildCallLimit bounds one Embed call of an index build.
const buildCallLimit = 2 * time.Minute

// item is one memory of a build with the text embedded for it.
type item struct {
	m   *memcore.MemoryFile
	key contentKey
}

// pending is a text the cache has no vector for.
type pending struct {
	key   contentKey
	text  string
	scope memcore.Scope
}

// build lists every memory, embeds those whose content has no cached
// vector, and publishes a new snapshot when anything changed. Until a build
// has run to its end, builds publish partial snapshots as they go (see
// publishSoFar), so turns are answered while the embedder works (or
// fails). Builds are serialised. The error reports a failed list (nothing
// published) or memories that could not be embedded (published without
// them).
func (e *Engine) build(ctx context.Context) (err error) {
	e.buildMu.Lock()
	defer e.buildMu.Unlock()
	defer e.recordBuild(ctx, &err)
	start := time.Now()
	mems, err := e.store.List(ctx)
	if err != nil {
		return fmt.Errorf("memretrieve: build: list memories: %w", err)
	}
	// Retired (forgotten) chains are neither indexed nor reached by links,
	// and nor are versions that wait for review: a chain whose change
	// waits is what it was before the change.
	g := e.settledGraph(mems)
	all := g.Memories()
	e.prepareCache()
	// A search could not read some vectors back from the cache files (a
	// quantised index after another process compacted one): read them
	// again, and publish even if nothing else changed.
	reread := e.rereadCache.Swap(false)
	if reread {
		e.cache.refresh()
	}
	items, digests := e.derive(all)
	e.startPartial(g, digests, items)
	embedded, embedErr := e.embedAll(ctx, items)
	e.partial = nil
	if err := ctx.Err(); err != nil {
		return err
	}
	// Recorded before the index is published: a turn the publication wakes
	// sees why the index lacks the memories that could not be embedded.
	embedErr = redact.Error(embedErr)
	e.lastBuild.Store(&buildOutcome{err: embedErr})
	e.complete = true
	fp, rows := e.fingerprintOf(digests, items)
	if len(items) > 0 {
		// A calibration of no memories measured nothing worth keeping: a
		// build of none writes nothing to the cache folder.
		defer e.keepCalibration()
	}
	if e.snap.Load() != nil && fp == e.fingerprint && !reread {
		e.log.Debug().Dur("elapsed", time.Since(start)).Msg("memretrieve: index unchanged")
		return embedErr
	}
	e.publish(g, items, rows, fp)
	e.log.Debug().Int("memories", len(all)).Int("indexed", len(rows)).Int("embedded", embedded).
		Uint64("generation", e.gen).Dur("elapsed", time.Since(start)).Msg("memretrieve: index built")
	return embedErr
}

// prepareCache makes e.cache the cache of the embedder's current model,
// read from its files when it is new, and empties it when the query
// vectors of a turn showed that the embedder's dimension changed.
func (e *Engine) prepareCache() {
	model := e.embedder.Model()
	if e.cache == nil || e.cache.model != model {
		if e.cache != nil {
			e.log.Info().Str("old", e.cache.model).Str("new", model).Msg("memretrieve: the embedding model changed; memories are embedded again")
		}
		e.cache = newVecCache(model, e.cfg.CacheSecret, e.cacheDirs, e.cfg.Quantized, e.log)
		clear(e.unusable)
		e.cache.refresh()
	}
	if d := int(e.dimSeen.Load()); d != 0 && e.cache.dim != 0 && d != e.cache.dim {
		e.dimensionChanged(d)
	}
}

// dimensionChanged empties the cache: the embedder's vectors now have dim
// values, though its Model is the same, so every memory is embedded again.
func (e *Engine) dimensionChanged(dim int) {
	e.log.Warn().Int("cached", e.cache.dim).Int("now", dim).Str("model", e.cache.model).
		Msg("memretrieve: the embedder's vectors changed dimension under the same model name; re-embedding every memory (its Model should include the dimension)")
	e.cache.reset(dim)
}

// embedAll embeds the texts of items that have no cached vector, after
// reading what other processes appended to the cache files meanwhile. When
// the embedder's dimension turns out to have changed, the cache is emptied
// and everything is embedded once more. It returns how many texts were
// embedded.
func (e *Engine) embedAll(ctx context.Context, items []item) (int, error) {
	embedded := 0
	refreshed := false
	for range 2 {
		missing := e.missing(items)
		if len(missing) > 0 && !refreshed {
			e.cache.refresh()
			refreshed = true
			missing = e.missing(items)
		}
		if len(missing) == 0 {
			return embedded, nil
		}
		e.publishSoFar() // what is cached answers while the rest is embedded
		n, reset, err := e.embedMissing(ctx, missing)
		embedded += n
		if err != nil || !reset {
			return embedded, err
		}
	}
	return embedded, nil
}

// publish swaps in a snapshot of graph g, a new vector index of the items
// at rows (those with cached vectors) and a new lexical index of every
// item, fingerprinted fp. The cache first forgets the vectors no memory
// has any more (compacting its files if they mostly hold such vectors),
// then shares the vector index's block, so each vector is held once.
func (e *Engine) publish(g *memcore.Graph, items []item, rows []int, fp [32]byte) {
	if ext := e.extensionOf(items, rows); ext != nil {
		e.publishExtended(g, items, rows, fp, ext)
		return
	}
	c := e.cache
	live := make(map[contentKey]struct{}, len(items)+len(theProbes().all))
	for _, it := range items {
		live[it.key] = struct{}{}
	}
	if e.gateOn() {
		for _, p := range theProbes().all {
			live[p.key] = struct{}{}
		}
	}
	c.retain(live)
	var idx *index.Flat
	if c.quantized {
		idx = e.quantIndex(items, rows)
	} else {
		dim := c.dim
		idx = &index.Flat{Dim: dim, IDs: make([]string, len(rows)), Vecs: make([]float32, len(rows)*dim)}
		for j, i := range rows {
			it := items[i]
			row := idx.Vecs[j*dim : (j+1)*dim : (j+1)*dim]
			copy(row, c.vecs[it.key])
			idx.IDs[j] = it.m.Meta.ID
			c.vecs[it.key] = row
		}
	}
	e.gen++
	e.fingerprint = fp
	var lex *index.Lex
	if p := e.partial; p != nil {
		// A build's partial snapshots share one lexical index: their items
		// are the same.
		if p.lex == nil {
			p.lex = e.lexicalIndex(items, live)
		}
		lex = p.lex
	} else {
		lex = e.lexicalIndex(items, live)
	}
	e.snap.Store(&snapshot{gen: e.gen, graph: g, idx: idx, lex: lex, lexRows: rowsByID(lex),
		cal: e.calibration(idx, lex, items, rows, nil)})
	e.last = &lastBuild{gen: e.gen, items: items, rows: rows}
	if idx.Len() > 0 || e.partial == nil {
		// A turn waiting for the first build need wait no longer (a
		// partial snapshot of the lexical index alone is not enough).
		e.firstPublish.Do(func() { close(e.published) })
	}
}

// quantIndex builds the quantised index of the items at rows from a
// quantised cache: the int8 codes in one block (shared with the cache), and
// for each row the place of its vector on disk — or, for vectors with no
// copy on disk, the vector itself, in memory.
func (e *Engine) quantIndex(items []item, rows []int) *index.Flat {
	c := e.cache
	dim := c.dim
	q := &index.Quant{Codes: make([]int8, len(rows)*dim), Scales: make([]float32, len(rows))}
	idx := &index.Flat{Dim: dim, IDs: make([]string, len(rows)), Quant: q}
	onDisk := 0
	for _, i := range rows {
		if c.codes[items[i].key].loc.file != nil {
			onDisk++
		}
	}
	var disk *diskRows
	if onDisk > 0 {
		disk = &diskRows{codes: q.Codes, scales: q.Scales, locs: make([]diskLoc, len(rows)),
			resident: make(map[int][]float32, len(rows)-onDisk)}
		q.Source = disk
	} else {
		q.Block = make([]float32, len(rows)*dim)
	}
	for j, i := range rows {
		it := items[i]
		ent := c.codes[it.key]
		code := q.Codes[j*dim : (j+1)*dim : (j+1)*dim]
		copy(code, ent.q)
		ent.q = code
		c.codes[it.key] = ent
		q.Scales[j] = ent.scale
		idx.IDs[j] = it.m.Meta.ID
		switch {
		case ent.loc.file != nil:
			disk.locs[j] = ent.loc
		case q.Block != nil:
			row := q.Block[j*dim : (j+1)*dim : (j+1)*dim]
			copy(row, c.vecs[it.key])
			c.vecs[it.key] = row
		default:
			disk.resident[j] = c.vecs[it.key]
		}
	}
	return idx
}

// missing lists the distinct texts of items that have no usable cached
// vector, each with the scope of its first memory, after the relevance
// gate's probes that have none. With no items it lists nothing: the gate
// needs no calibration when there is no memory to let through, so a build
// of no memories embeds nothing and writes nothing to the cache.
func (e *Engine) missing(items []item) []pending {
	if len(items) == 0 {
		return nil
	}
	out := e.missingProbes()
	seen := make(map[contentKey]bool)
	for _, it := range items {
		if seen[it.key] {
			continue
		}
		seen[it.key] = true
		if _, bad := e.unusable[it.key]; bad || e.cached(it.key) {
			continue
		}
		out = append(out, pending{key: it.key, text: strings.TrimSpace(it.m.Content), scope: it.m.Meta.Scope})
	}
	return out
}

// missingProbes lists the relevance gate's probe texts that have no cached
// vector, first in a build so that the gate is calibrated as soon as the
// first batch is embedded: none with the gate off.
func (e *Engine) missingProbes() []pending {
	if !e.gateOn() {
		return nil
	}
	var out []pending
	scope := e.cache.probeScope()
	for _, p := range theProbes().all {
		if _, bad := e.unusable[p.key]; !bad && !e.cached(p.key) {
			out = append(out, pending{key: p.key, text: p.text, scope: scope})
		}
	}
	return out
}

// probeVectors returns the cached vectors of the probes, in order, or nil
// when one has none (yet).
func (e *Engine) probeVectors() [][]float32 {
	out := make([][]float32, len(theProbes().all))
	keys := make(map[contentKey]struct{}, len(theProbes().all))
	for _, p := range theProbes().all {
		if !e.cached(p.key) {
			return nil
		}
		keys[p.key] = struct{}{}
	}
	vecs := e.cache.vectorsOf(keys)
	for i, p := range theProbes().all {
		if out[i] = vecs[p.key]; out[i] == nil {
			return nil
		}
	}
	return out
}

// embedMissing embeds the missing texts in batches and caches the vectors.
// It returns how many were embedded, and reset when the embedder's
// dimension turned out to differ from the cached vectors', which were then
// dropped (the caller embeds again).
func (e *Engine) embedMissing(ctx context.Context, missing []pending) (n int, reset bool, err error) {
	e.reportProgress(0, len(missing))
	for start := 0; start < len(missing); start += e.cfg.EmbedBatch {
		part := missing[start:min(start+e.cfg.EmbedBatch, len(missing))]
		vecs, err := e.embedBatch(ctx, part)
		if err != nil {
			return n, false, fmt.Errorf("memretrieve: build: embed %d of %d texts without a cached vector (memories, and the relevance gate's calibration texts): %w",
				len(missing)-start, len(missing), err)
		}
		if dim := len(vecs[0]); e.cache.dim != 0 && e.cache.dim != dim {
			e.dimensionChanged(dim)
			return n, true, nil
		}
		e.cacheVectors(part, vecs)
		n += len(part)
		e.reportProgress(n, len(missing))
		e.publishSoFar()
	}
	return n, false, nil
}

// reportProgress passes a build's embedding progress to the
// Config.BuildProgress function, if any.
func (e *Engine) reportProgress(done, total int) {
	if e.cfg.BuildProgress != nil {
		e.cfg.BuildProgress(done, total)
	}
}

// embedBatch embeds the texts of part in one Embed call, retrying
// transient failures, each attempt within buildCallLimit. The texts are
// redacted first: memories are redacted when capture writes them, but one
// written by hand may hold a secret (the vector is still cached under the
// text as stored). The vectors it returns, one per text, all have the same
// dimension, in range.
func (e *Engine) embedBatch(ctx context.Context, part []pending) ([][]float32, error) {
	texts := make([]string, len(part))
	for i, p := range part {
		texts[i], _ = redact.Text(p.text)
	}
	var vecs [][]float32
	err := memcore.Retry(ctx, memcore.RetryPolicy{}, func(ctx context.Context) error {
		cctx, cancel := context.WithTimeout(ctx, buildCallLimit)
		defer cancel()
		var err error
		vecs, err = embedWithin(cctx, e.embedder, texts)
		return err
	})
	if err != nil {
		return nil, err
	}
	return vecs, checkDims(vecs)
}

// cacheVectors puts the vectors of part, scaled to unit length, in the
// cache, which appends each scope's to that scope's file in one write. A
// text whose vector is zero or not finite is remembered as unusable, so it
// is not embedded again, and stays out of the index.
func (e *Engine) cacheVectors(part []pending, vecs [][]float32) {
	dim := len(vecs[0])
	e.cache.setDim(dim)
	block := make([]float32, len(vecs)*dim)
	type group struct {
		keys []contentKey
		vecs [][]float32
	}
	groups := make(map[memcore.Scope]*group)
	unusable := 0
	for i, v := range vecs {
		row := block[i*dim : (i+1)*dim : (i+1)*dim]
		copy(row, v)
		if !index.Normalize(row) {
			unusable++
			e.unusable[part[i].key] = struct{}{}
			continue
		}
		gr := groups[part[i].scope]
		if gr == nil {
			gr = &group{}
			groups[part[i].scope] = gr
		}
		gr.keys = append(gr.keys, part[i].key)
		gr.vecs = append(gr.vecs, row)
	}
	for s, gr := range groups {
		e.cache.put(s, gr.keys, gr.vecs)
	}
	if unusable > 0 {
		e.log.Warn().Int("memories", unusable).Msg("memretrieve: the embedder returned zero or non-finite vectors; those memories are not searchable")
	}
}

// checkDims reports vectors that are empty, too long or of different lengths.
func checkDims(vecs [][]float32) error {
	dim := len(vecs[0])
	if dim == 0 || dim > maxDim {
		return fmt.Errorf("%w: vectors of dimension %d", memcore.ErrInvalidResponse, dim)
	}
	for _, v := range vecs {
		if len(v) != dim {
			return fmt.Errorf("%w: vectors of dimensions %d and %d in one reply", memcore.ErrInvalidResponse, dim, len(v))
		}
	}
	return nil
}

// fingerprintOf hashes what a snapshot depends on — the dimension, every
// memory's place in the graph, and each item's content key and whether it
// has a vector — and returns the indexes of the items with vectors.
func (e *Engine) fingerprintOf(digests [][32]byte, items []item) ([32]byte, []int) {
	f := fingerprinter{h: sha256.New()}
	f.int(e.cache.dim)
	f.int(len(digests))
	for _, d := range digests {
		f.h.Write(d[:])
	}
	var rows []int
	for i, it := range items {
		has := e.cached(it.key)
		if has {
			rows = append(rows, i)
		}
		f.h.Write(it.key[:])
		f.bool(has)
	}
	// The gate's calibration changes when the probes get their vectors.
	f.bool(e.gateOn() && e.probeVectorsCached())
	var fp [32]byte
	f.h.Sum(fp[:0])
	return fp, rows
}

// probeVectorsCached reports whether every probe has a cached vector.
func (e *Engine) probeVectorsCached() bool {
	for _, p := range theProbes().all {
		if !e.cached(p.key) {
			return false
		}
	}
	return true
}

// cached reports whether the cache holds a vector of the current dimension
// for key.
func (e *Engine) cached(key contentKey) bool { return e.cache.has(key) }

// fingerprinter writes values to a hash so that different sequences of
// values never write the same bytes: integers in 8 bytes, strings after
// their length.
type fingerprinter struct {
	h   hash.Hash
	num [8]byte
}

func (f *fingerprinter) int(v int) {
	binary.LittleEndian.PutUint64(f.num[:], uint64(v))
	f.h.Write(f.num[:])
}

func (f *fingerprinter) str(s string) {
	f.int(len(s))
	f.h.Write([]byte(s))
}

func (f *fingerprinter) bool(b bool) {
	if b {
		f.h.Write([]byte{1})
	} else {
		f.h.Write([]byte{0})
	}
}

// memory writes what the graph and the rendered block take from m besides
// its content: id, version, scope, category, creation time and links.
func (f *fingerprinter) memory(m *memcore.MemoryFile) {
	f.str(m.Meta.ID)
	f.int(m.Meta.Version)
	f.str(string(m.Meta.Scope))
	f.str(string(m.Meta.Category))
	f.str(m.Meta.CreatedAt.String())
	if m.Meta.Supersedes != nil {
		f.str(*m.Meta.Supersedes)
	} else {
		f.str("")
	}
	f.int(len(m.Meta.Related))
	for _, r := range m.Meta.Related {
		f.str(r.ID)
		f.str(string(r.Relationship))
	}
}

// buildOutcome is the error of a build that ran to its end, nil if none.
type buildOutcome struct{ err error }

// recordBuild, deferred by build, redacts *err (an embedder's error may
// quote memory text) and remembers it as the outcome of the latest build,
// unless ctx ended (the build was stopped, not failed).
func (e *Engine) recordBuild(ctx context.Context, err *error) {
	*err = redact.Error(*err)
	if ctx.Err() == nil {
		e.lastBuild.Store(&buildOutcome{err: *err})
	}
}

// lastBuildErr returns the error of the latest build that ran to its end,
// nil if it succeeded or none has.
func (e *Engine) lastBuildErr() error {
	if o := e.lastBuild.Load(); o != nil {
		return o.err
	}
	return nil
}
