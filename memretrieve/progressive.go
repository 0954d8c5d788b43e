package memretrieve

import (
	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memretrieve/internal/index"
)

// A first build can take long: a cold cache of many memories, a slow
// embedder. Rather than leave every turn without memories until it ends,
// it publishes partial snapshots: before it embeds anything, the lexical
// index of every memory (it needs no model; with Config.LexicalWeight
// above 0) together with the vectors the cache holds, then again as
// batches of the others are embedded. Each is swapped in atomically like
// any snapshot, so searches never wait. A turn waits for the first build
// only while there is no snapshot holding vectors, and at most until its
// model calls' deadline (see snapshotWithin); it then answers from what is
// published, the lexical index alone if need be. Once a build has run to
// its end, later builds keep serving the complete snapshot they replace
// until they are done.

// partialBuild is what a build that publishes partial snapshots needs: the
// graph and items it indexes, how many rows its last snapshot had, whether
// it published one yet, and the lexical index its snapshots share.
type partialBuild struct {
	g         *memcore.Graph
	digests   [][32]byte // of the memories of g, in order
	items     []item
	rows      int
	published bool
	lex       *index.Lex
}

// startPartial prepares the build of the items of g (all its memories) to
// publish partial snapshots, if no build has yet run to its end.
func (e *Engine) startPartial(g *memcore.Graph, digests [][32]byte, items []item) {
	e.partial = nil
	if !e.complete {
		e.partial = &partialBuild{g: g, digests: digests, items: items}
	}
}

// publishSoFar publishes, during a build that publishes partial snapshots,
// an index of the items whose vectors the cache holds now: the first time
// with the lexical index on, whatever the cache holds, since the lexical
// index answers turns on its own; otherwise when there are some vectors and
// at least twice as many as the last partial snapshot had: so the first
// batch is searchable as soon as it is embedded, and the copies into new
// index blocks cost at most about twice one full index.
func (e *Engine) publishSoFar() {
	p := e.partial
	if p == nil {
		return
	}
	fp, rows := e.fingerprintOf(p.digests, p.items)
	lexicalFirst := !p.published && e.cfg.LexicalWeight > 0 && len(p.items) > 0
	if !lexicalFirst && (len(rows) == 0 || len(rows) < 2*p.rows) || fp == e.fingerprint && e.snap.Load() != nil {
		return
	}
	e.publish(p.g, p.items, rows, fp)
	p.published = true
	p.rows = len(rows)
	e.log.Debug().Int("indexed", len(rows)).Int("memories", len(p.items)).Uint64("generation", e.gen).
		Msg("memretrieve: published a partial index while the first build embeds")
}
