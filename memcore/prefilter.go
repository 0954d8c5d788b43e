package memcore

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// The trust screen's expressions are many and large, and Go's regular
// expressions scan a few megabytes a second with them: about 2 µs a byte
// of memory text for the instruction rule alone. Yet most texts contain
// none of the words an expression needs ("curl", "sudo", "token", …). So
// each expression carries a prefilter: the literal strings a match must
// contain, worked out from the expression's syntax tree when it is
// compiled, and checked with strings.Contains on the text folded once.
// Only a text that holds them all is scanned. The prefilter is a necessary
// condition of a match, never a sufficient one, so what the screen finds
// is unchanged (FuzzPrefilterAgrees checks it).

// expr is one of the screen's regular expressions with its prefilter.
type expr struct {
	*regexp.Regexp
	need *prefilter
}

// re returns the regular expression s with its prefilter, compiled on its
// first use. The trust screen's are needed only where memories are
// screened, and compiling them all when a program starts would cost every
// forgemem process — the hook of each prompt among them — more than a
// millisecond.
func re(s string) func() *expr {
	return sync.OnceValue(func() *expr {
		x := &expr{Regexp: regexp.MustCompile(s)}
		if tree, err := syntax.Parse(s, syntax.Perl); err == nil {
			x.need = needed(tree.Simplify())
		}
		return x
	})
}

// prefilter is what a text must contain for an expression to match it: a
// tree of strings, folded (foldString), joined by and and or. A nil
// prefilter holds for every text.
type prefilter struct {
	and bool         // every sub holds; else, one sub or one of any
	any []string     // strings of which one in the text is enough
	sub []*prefilter // (in and, any is empty)
}

// holds reports whether folded, a text folded with foldString, has what p
// needs.
func (p *prefilter) holds(folded string) bool {
	if p == nil {
		return true
	}
	if p.and {
		for _, q := range p.sub {
			if !q.holds(folded) {
				return false
			}
		}
		return true
	}
	for _, s := range p.any {
		if strings.Contains(folded, s) {
			return true
		}
	}
	for _, q := range p.sub {
		if q.holds(folded) {
			return true
		}
	}
	return false
}

// String writes p as the tests read it: and(…), or(…), "strings".
func (p *prefilter) String() string {
	if p == nil {
		return "anything"
	}
	var parts []string
	for _, s := range p.any {
		parts = append(parts, strconv.Quote(s))
	}
	for _, q := range p.sub {
		parts = append(parts, q.String())
	}
	if !p.and && len(parts) == 1 {
		return parts[0]
	}
	return map[bool]string{true: "and", false: "or"}[p.and] + "(" + strings.Join(parts, " ") + ")"
}

// maxExact bounds the strings an exact set holds (see exact).
const maxExact = 16

// needed returns the prefilter of the expression tree re: what every match
// of it contains. It is nil when a match may contain nothing fixed.
func needed(re *syntax.Regexp) *prefilter {
	if set, ok := exact(re); ok {
		return anyOf(set)
	}
	switch re.Op {
	case syntax.OpCapture, syntax.OpPlus:
		return needed(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return needed(re.Sub[0])
		}
	case syntax.OpConcat:
		return neededConcat(re.Sub)
	case syntax.OpAlternate:
		// One branch matches: what that branch needs holds.
		p := &prefilter{}
		for _, sub := range re.Sub {
			q := needed(sub)
			switch {
			case q == nil:
				return nil
			case q.and:
				p.sub = append(p.sub, q)
			default:
				p.any = union(p.any, q.any)
				p.sub = append(p.sub, q.sub...)
			}
		}
		if len(p.sub) == 1 && len(p.any) == 0 {
			return p.sub[0]
		}
		return p
	}
	// Character classes, optional and repeated parts need nothing.
	return nil
}

// neededConcat returns the prefilter of a concatenation of subs: what each
// part needs, where consecutive parts of exact sets are joined into the
// strings they match together ("c" and (heck|onsult) into check, consult).
func neededConcat(subs []*syntax.Regexp) *prefilter {
	p := &prefilter{and: true}
	run := []string{""}
	add := func(q *prefilter) {
		if q != nil && q.and {
			p.sub = append(p.sub, q.sub...)
		} else if q != nil {
			p.sub = append(p.sub, q)
		}
	}
	flush := func() {
		add(anyOf(run))
		run = []string{""}
	}
	for _, sub := range subs {
		set, ok := exact(sub)
		if ok && len(run)*len(set) <= maxExact {
			run = product(run, set)
			continue
		}
		flush()
		if ok {
			run = set
			continue
		}
		add(needed(sub))
	}
	flush()
	switch len(p.sub) {
	case 0:
		return nil
	case 1:
		return p.sub[0]
	}
	return p
}

// anyOf returns the prefilter that needs one of set. It is nil when set
// has the empty string (a match may be empty), or is a class of many
// characters (\s, \d), which nearly every text has.
func anyOf(set []string) *prefilter {
	if len(set) == 0 || slices.Contains(set, "") {
		return nil
	}
	if len(set) > 4 && !slices.ContainsFunc(set, func(s string) bool { return len(s) > 1 }) {
		return nil
	}
	return &prefilter{any: set}
}

// exact returns every string re matches, folded, when they are at most
// maxExact; ok is false otherwise. Empty-width assertions match "".
func exact(re *syntax.Regexp) (set []string, ok bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return []string{foldString(string(re.Rune))}, true
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return []string{""}, true
	case syntax.OpCharClass:
		return classSet(re.Rune)
	case syntax.OpCapture:
		return exact(re.Sub[0])
	case syntax.OpQuest:
		set, ok := exact(re.Sub[0])
		if !ok || len(set) >= maxExact {
			return nil, false
		}
		return union(set, []string{""}), true
	case syntax.OpConcat:
		set = []string{""}
		for _, sub := range re.Sub {
			s, ok := exact(sub)
			if !ok || len(set)*len(s) > maxExact {
				return nil, false
			}
			set = product(set, s)
		}
		return set, true
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			s, ok := exact(sub)
			if !ok {
				return nil, false
			}
			if set = union(set, s); len(set) > maxExact {
				return nil, false
			}
		}
		return set, true
	}
	return nil, false
}

// classSet returns the runes of a character class (pairs of first and last
// rune), folded, when they are few.
func classSet(ranges []rune) ([]string, bool) {
	var set []string
	for i := 0; i+1 < len(ranges); i += 2 {
		if ranges[i+1]-ranges[i] >= maxExact {
			return nil, false
		}
		for r := ranges[i]; r <= ranges[i+1]; r++ {
			if set = union(set, []string{string(foldRune(r))}); len(set) > maxExact {
				return nil, false
			}
		}
	}
	return set, len(set) > 0
}

// product returns every string of a followed by one of b.
func product(a, b []string) []string {
	var out []string
	for _, x := range a {
		for _, y := range b {
			out = union(out, []string{x + y})
		}
	}
	return out
}

// union returns a with the strings of b it lacks appended.
func union(a, b []string) []string {
	for _, s := range b {
		if !slices.Contains(a, s) {
			a = append(a, s)
		}
	}
	return a
}

// foldString maps each character of s to one of its case: so that when a
// regular expression matches a literal in s, with or without (?i), the
// folded literal is in the folded s. Each rune becomes the smallest rune
// of its Unicode case orbit (ſ and s become S, the Kelvin sign and k
// become K), lower-cased when it is ASCII. Bytes that are not UTF-8 become
// U+FFFD, as the regular expressions read them.
func foldString(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		b.WriteRune(foldRune(r))
	}
	return b.String()
}

// foldRune is foldString's mapping of one rune.
func foldRune(r rune) rune {
	if r < utf8.RuneSelf {
		return unicode.ToLower(r)
	}
	least := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		least = min(least, f)
	}
	if least < utf8.RuneSelf {
		return unicode.ToLower(least)
	}
	return least
}
