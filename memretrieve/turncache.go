package memretrieve

import (
	"container/list"
	"sync"
)

// turnCache keeps the results of the most recent turns, least recently used
// dropped first, and lets concurrent Retrieve calls of one turn share a
// single computation.
type turnCache struct {
	mu    sync.Mutex
	size  int
	order *list.List // of *turnEntry, most recently used first
	byKey map[string]*list.Element
}

// turnEntry is the result of one turn, or its computation in flight.
type turnEntry struct {
	key string
	// gen is the index generation the result was computed against; an
	// entry of an older generation is stale.
	gen  uint64
	done chan struct{} // closed when res and ok are set
	res  *Result
	ok   bool
}

func newTurnCache(size int) *turnCache {
	return &turnCache{size: size, order: list.New(), byKey: make(map[string]*list.Element)}
}

// acquire returns the entry of turn key for index generation gen. leader
// is true when the caller must compute the result and hand it to finish;
// otherwise the entry is done or being computed by another caller.
func (c *turnCache) acquire(key string, gen uint64) (e *turnEntry, leader bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		e := el.Value.(*turnEntry)
		// A computation in flight is shared whatever the generation: it
		// uses the newest index it can get.
		if !e.isDone() || e.gen == gen {
			c.order.MoveToFront(el)
			return e, false
		}
		c.order.Remove(el)
		delete(c.byKey, key)
	}
	e = &turnEntry{key: key, gen: gen, done: make(chan struct{})}
	c.byKey[key] = c.order.PushFront(e)
	for c.order.Len() > c.size {
		old := c.order.Remove(c.order.Back()).(*turnEntry)
		delete(c.byKey, old.key)
	}
	return e, true
}

// isDone reports whether the entry's result is set. Callers hold c.mu.
func (e *turnEntry) isDone() bool {
	select {
	case <-e.done:
		return true
	default:
		return false
	}
}

// finish publishes the leader's result, computed against generation gen.
// A result that must not be reused (ok false: the caller gave up) is
// dropped, and callers waiting for it compute their own.
func (c *turnCache) finish(e *turnEntry, res *Result, gen uint64, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.res, e.ok, e.gen = res, ok, gen
	if !ok {
		if el, found := c.byKey[e.key]; found && el.Value.(*turnEntry) == e {
			c.order.Remove(el)
			delete(c.byKey, e.key)
		}
	}
	close(e.done)
}
