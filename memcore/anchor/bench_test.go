package anchor

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/memcore"
)

// benchRepo writes a repository of 50 packages of 20 Go files, each
// declaring 5 functions, and returns anchors to 30 memories' worth of
// them: a file and a function each, one in ten gone, one in ten
// undefined.
func benchRepo(b *testing.B) (string, [][]memcore.Anchor) {
	root := b.TempDir()
	files := map[string]string{}
	for p := range 50 {
		for f := range 20 {
			var src strings.Builder
			fmt.Fprintf(&src, "package pkg%02d\n", p)
			for k := range 5 {
				fmt.Fprintf(&src, "\nfunc F%02d%02d%d() {}\n", p, f, k)
			}
			files[fmt.Sprintf("pkg%02d/file%02d.go", p, f)] = src.String()
		}
	}
	writeTree(b, root, files)
	var mems [][]memcore.Anchor
	for i := range 30 {
		p, f := (i*7)%50, (i*3)%20
		rel := fmt.Sprintf("pkg%02d/file%02d.go", p, f)
		sym := fmt.Sprintf("F%02d%02d%d", p, f, i%5)
		switch i % 10 {
		case 3:
			rel = fmt.Sprintf("pkg%02d/gone%02d.go", p, f)
		case 6:
			sym = "Undefined"
		}
		mems = append(mems, []memcore.Anchor{{Path: rel}, {Path: rel, Symbol: sym}})
	}
	return root, mems
}

// BenchmarkCheckTurn checks the anchors of the 30 memories of a turn, the
// caches warm:
//
//	go test -run '^$' -bench CheckTurn ./memcore/anchor/
func BenchmarkCheckTurn(b *testing.B) {
	root, mems := benchRepo(b)
	c := newChecker(b, root)
	ctx := context.Background()
	for _, m := range mems {
		c.Check(ctx, m)
	}
	b.ResetTimer()
	for range b.N {
		for _, m := range mems {
			c.Check(ctx, m).Reason()
		}
	}
}
