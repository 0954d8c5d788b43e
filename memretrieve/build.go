package memretrieve

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strings"
	"time"

	"github.com/forgemem/forgemem/memcore"
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
// vector, and publishes a new snapshot when anything changed. Builds are
// serialised. The error reports a failed list (nothing published) or
// memories that could not be embedded (published without them).
func (e *Engine) build(ctx context.Context) error {
	e.buildMu.Lock()
	defer e.buildMu.Unlock()
	start := time.Now()
	mems, err := e.store.List(ctx)
	if err != nil {
		return fmt.Errorf("memretrieve: build: list memories: %w", err)
	}
	g := memcore.NewGraph(mems)
	all := g.Memories()

	model := e.embedder.Model()
	if e.cache == nil || e.cache.model != model {
		if e.cache != nil {
			e.log.Info().Str("old", e.cache.model).Str("new", model).Msg("memretrieve: the embedding model changed; memories are embedded again")
		}
		e.cache = newVecCache(model, e.cacheDirs, e.log)
		clear(e.unusable)
		e.cache.refresh()
	}
	c := e.cache
	if d := int(e.dimSeen.Load()); d != 0 && c.dim != 0 && d != c.dim {
		e.log.Warn().Int("cached", c.dim).Int("now", d).Str("model", model).
			Msg("memretrieve: the embedder's vectors changed dimension under the same model name; re-embedding every memory (its Model should include the dimension)")
		c.reset(d)
	}

	items := make([]item, 0, len(all))
	for _, m := range all {
		if text := strings.TrimSpace(m.Content); text != "" {
			items = append(items, item{m: m, key: sha256.Sum256([]byte(text))})
		}
	}
	embedded := 0
	var embedErr error
	refreshed := false
	for attempt := 0; attempt < 2; attempt++ {
		missing := e.missing(items)
		if len(missing) > 0 && !refreshed {
			// Another process may have embedded them meanwhile.
			c.refresh()
			refreshed = true
			missing = e.missing(items)
		}
		if len(missing) == 0 {
			break
		}
		n, reset, err := e.embedMissing(ctx, missing)
		embedded += n
		if err != nil {
			embedErr = err
			break
		}
		if !reset {
			break
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}

	fp, rows := e.fingerprintOf(all, items)
	if e.snap.Load() != nil && fp == e.fingerprint {
		e.log.Debug().Dur("elapsed", time.Since(start)).Msg("memretrieve: index unchanged")
		return embedErr
	}
	dim := c.dim
	idx := &flatIndex{dim: dim, ids: make([]string, len(rows)), vecs: make([]float32, len(rows)*dim)}
	live := make(map[contentKey]struct{}, len(items))
	for _, it := range items {
		live[it.key] = struct{}{}
	}
	for j, i := range rows {
		it := items[i]
		v, _ := c.get(it.key)
		row := idx.vecs[j*dim : (j+1)*dim : (j+1)*dim]
		copy(row, v)
		idx.ids[j] = it.m.Meta.ID
		// The cache now shares the index's block, so the vectors are held
		// once, not twice.
		c.vecs[it.key] = row
	}
	c.retain(live)
	e.gen++
	e.fingerprint = fp
	e.snap.Store(&snapshot{gen: e.gen, graph: g, idx: idx})
	e.log.Debug().Int("memories", len(all)).Int("indexed", len(rows)).Int("embedded", embedded).
		Uint64("generation", e.gen).Dur("elapsed", time.Since(start)).Msg("memretrieve: index built")
	return embedErr
}

// missing lists the distinct texts of items that have no usable cached
// vector, each with the scope of its first memory.
func (e *Engine) missing(items []item) []pending {
	var out []pending
	seen := make(map[contentKey]bool)
	for _, it := range items {
		if seen[it.key] {
			continue
		}
		seen[it.key] = true
		if v, ok := e.cache.get(it.key); ok && len(v) == e.cache.dim {
			continue
		}
		if _, bad := e.unusable[it.key]; bad {
			continue
		}
		out = append(out, pending{key: it.key, text: strings.TrimSpace(it.m.Content), scope: it.m.Meta.Scope})
	}
	return out
}

// embedMissing embeds the missing texts in batches and caches the vectors.
// It returns how many were embedded, and reset when the embedder's
// dimension turned out to differ from the cached vectors', which were then
// dropped (the caller embeds again).
func (e *Engine) embedMissing(ctx context.Context, missing []pending) (n int, reset bool, err error) {
	c := e.cache
	for start := 0; start < len(missing); start += e.opt.embedBatch {
		part := missing[start:min(start+e.opt.embedBatch, len(missing))]
		texts := make([]string, len(part))
		for i, p := range part {
			texts[i] = p.text
		}
		var vecs [][]float32
		err := memcore.Retry(ctx, memcore.RetryPolicy{}, func(ctx context.Context) error {
			cctx, cancel := context.WithTimeout(ctx, buildCallLimit)
			defer cancel()
			v, err := callWithin(cctx, func(ctx context.Context) ([][]float32, error) {
				return e.embedder.Embed(ctx, texts)
			})
			if err == nil && len(v) != len(texts) {
				err = fmt.Errorf("%w: %d vectors for %d texts", memcore.ErrInvalidResponse, len(v), len(texts))
			}
			vecs = v
			return err
		})
		if err == nil {
			err = checkDims(vecs)
		}
		if err != nil {
			return n, false, fmt.Errorf("memretrieve: build: embed %d of %d missing memories: %w", len(missing)-start, len(missing), err)
		}
		dim := len(vecs[0])
		if c.dim != 0 && c.dim != dim {
			e.log.Warn().Int("cached", c.dim).Int("now", dim).Str("model", c.model).
				Msg("memretrieve: the embedder's vectors changed dimension under the same model name; re-embedding every memory (its Model should include the dimension)")
			c.reset(dim)
			return n, true, nil
		}
		c.setDim(dim)
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
			if !normalize(row) {
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
			c.put(s, gr.keys, gr.vecs)
		}
		n += len(part)
		if unusable > 0 {
			e.log.Warn().Int("memories", unusable).Msg("memretrieve: the embedder returned zero or non-finite vectors; those memories are not searchable")
		}
	}
	return n, false, nil
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

// fingerprintOf hashes what a snapshot depends on — every memory's id,
// version, links and content key, which of them have vectors, and the
// dimension — and returns the indexes of the items with vectors.
func (e *Engine) fingerprintOf(all []*memcore.MemoryFile, items []item) ([32]byte, []int) {
	h := sha256.New()
	var num [8]byte
	writeInt := func(v int) {
		binary.LittleEndian.PutUint64(num[:], uint64(v))
		h.Write(num[:])
	}
	writeStr := func(s string) {
		writeInt(len(s))
		h.Write([]byte(s))
	}
	writeInt(e.cache.dim)
	for _, m := range all {
		writeStr(m.Meta.ID)
		writeInt(m.Meta.Version)
		writeStr(string(m.Meta.Scope))
		writeStr(string(m.Meta.Category))
		writeStr(m.Meta.CreatedAt.String())
		if m.Meta.Supersedes != nil {
			writeStr(*m.Meta.Supersedes)
		} else {
			writeStr("")
		}
		writeInt(len(m.Meta.Related))
		for _, r := range m.Meta.Related {
			writeStr(r.ID)
			writeStr(string(r.Relationship))
		}
	}
	var rows []int
	for i, it := range items {
		v, ok := e.cache.get(it.key)
		has := ok && len(v) == e.cache.dim
		if has {
			rows = append(rows, i)
		}
		h.Write(it.key[:])
		if has {
			h.Write([]byte{1})
		} else {
			h.Write([]byte{0})
		}
	}
	var fp [32]byte
	h.Sum(fp[:0])
	return fp, rows
}
