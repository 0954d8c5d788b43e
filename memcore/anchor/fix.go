package anchor

import (
	"cmp"
	"context"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/forgemem/forgemem/memcore"
)

// Fix is a memory's next version with the renames a check found applied.
type Fix struct {
	// Content is the memory's text with each renamed path written under
	// its new name (and a file name written alone under its new name).
	Content string
	// Anchors are the anchors to record with Content (see
	// [Checker.Anchors]): the renamed ones at their new paths, when the
	// tree has them, and those the new text names.
	Anchors []memcore.Anchor
	// Renames are the renames applied, old path → new path.
	Renames map[string]string
}

// Fix returns the memory whose text is content and whose check is r with
// every rename r found applied, and true; false when r found no rename
// (a gone path or an undefined symbol has no new text to propose). The
// result may still be stale for other reasons: check its Anchors.
func (c *Checker) Fix(ctx context.Context, content string, r Report) (Fix, bool) {
	renames := r.Renames()
	if len(renames) == 0 {
		return Fix{}, false
	}
	olds := slices.SortedFunc(maps.Keys(renames), func(a, b string) int {
		return cmp.Or(cmp.Compare(len(b), len(a)), strings.Compare(a, b))
	})
	text := content
	for _, old := range olds {
		text = rewritePath(text, old, renames[old])
	}
	// Renamed anchors, and symbols that moved, go to their new paths; what
	// is gone or undefined stays recorded as it is, so that the new
	// version still says so.
	var moved, kept []memcore.Anchor
	for _, f := range r.Findings {
		a := f.Anchor
		switch {
		case f.Status == Renamed || f.Status == Moved:
			a.Path = f.To
			moved = append(moved, a)
		case f.Status == Undefined && f.To != "":
			a.Path = f.To
			kept = append(kept, a)
		case f.Stale():
			kept = append(kept, a)
		}
	}
	res := c.Anchors(ctx, text, moved, kept)
	return Fix{Content: text, Anchors: res.Anchors, Renames: renames}, true
}

// rewritePath replaces the mentions of the path old in text by new: the
// whole path wherever it stands as a path (not inside a longer one), and,
// when a file's name changed, its name written alone (a folder's name
// alone is too often a plain word).
func rewritePath(text, old, new string) string {
	text, _ = replaceWord(text, old, new)
	if ob, nb := path.Base(old), path.Base(new); ob != nb && ob != old && hasExtension(ob) {
		text, _ = replaceWord(text, ob, nb)
	}
	return text
}

// replaceWord replaces each occurrence of old in text that stands alone as
// a path — no path character right before it, and none right after it but
// a sentence's full stop — by new, and says how many it replaced.
func replaceWord(text, old, new string) (string, int) {
	var b strings.Builder
	n := 0
	for {
		i := strings.Index(text, old)
		if i < 0 {
			b.WriteString(text)
			return b.String(), n
		}
		end := i + len(old)
		before := i == 0 || !isPathByte(text[i-1])
		after := end == len(text) || !isPathByte(text[end]) ||
			text[end] == '.' && (end+1 == len(text) || !isPathByte(text[end+1]))
		if before && after {
			b.WriteString(text[:i] + new)
			n++
		} else {
			b.WriteString(text[:end])
		}
		text = text[end:]
	}
}

// isPathByte reports whether c may be part of a path written in prose.
func isPathByte(c byte) bool { return isWordByte(c) || c == '.' || c == '/' || c == '-' }
