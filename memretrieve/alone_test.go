package memretrieve

import (
	"strings"
	"testing"

	"github.com/forgemem/forgemem/memcore"
)

// AloneTokens is the least a memory costs an injection: a memory over the
// budget by it is left out even when it is the only one recalled, and
// one within it is kept.
func TestAloneTokensSaysWhetherAMemoryEverFits(t *testing.T) {
	for _, runes := range []int{10, 3924, 7846, 20000} {
		m := mem("01J00000000000000000000001", memcore.ScopeUser, memcore.CategoryPatterns, 1, 1, strings.Repeat("a", runes))
		g := memcore.NewGraph([]*memcore.MemoryFile{m})
		for _, budget := range []int{500, 2000, 4000} {
			_, kept := newRenderer(g, []Recalled{{Memory: m, Score: 1}}).inject(budget)
			if fits := AloneTokens(m) <= budget; fits != (kept == 1) {
				t.Errorf("%d characters, budget %d: AloneTokens %d, kept %d", runes, budget, AloneTokens(m), kept)
			}
		}
	}
}
