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
// contain, worked out from the expression's syntax tree, and checked with
// strings.Contains on the text folded once. Only a text that holds them
// all is scanned. The prefilter is a necessary condition of a match, never
// a sufficient one, so what the screen finds is unchanged
// (FuzzPrefilterAgrees checks it).
//
// The expressions of the instruction rule in ten languages need thousands
// of strings between them, nearly none of which a given text holds. So a
// text also carries a Bloom filter of its pairs of bytes (pairs), and a
// string with a pair the filter lacks is not looked for: a few bit tests
// instead of a scan of the text.
//
// Working the prefilters out parses every expression, about 11 ms of CPU
// for all of them, which the first Screen of each process — the prompt
// hook's among them — would pay. So go generate works them out once, into
// prefilterTable (prefilter_table.go), and a process looks its
// expressions' prefilters up there by their source: the first Screen only
// works out the pairs of bytes of the table's strings. An expression the
// table lacks has its prefilter worked out on its first use, as before
// (TestGeneratedPrefilters fails until the table is generated again).

//go:generate go test -run=TestGeneratedPrefilters -update

// expr is one of the screen's regular expressions with its prefilter.
type expr struct {
	src  string
	need *prefilter
	// compiled is the expression compiled, on its first use: most texts
	// hold what few of the screen's expressions need, and a program that
	// screens them never compiles the rest.
	compiled func() *regexp.Regexp
}

// MatchString reports whether the expression matches s.
func (x *expr) MatchString(s string) bool { return x.compiled().MatchString(s) }

// FindAllStringIndex returns the bounds of the expression's matches in s.
func (x *expr) FindAllStringIndex(s string, n int) [][]int {
	return x.compiled().FindAllStringIndex(s, n)
}

// String returns the expression's source.
func (x *expr) String() string { return x.src }

// re returns the regular expression s with its prefilter, looked up in
// prefilterTable on its first use (and s compiled when the prefilter
// first lets a text through). The trust screen's are needed only where
// memories are screened, and compiling them all when a program starts
// would cost every forgemem process — the hook of each prompt among them —
// more than a millisecond.
func re(s string) func() *expr { return reBuilt(func() string { return s }) }

// reBuilt is re of the expression build returns, built on first use too.
func reBuilt(build func() string) func() *expr {
	x := sync.OnceValue(func() *expr { return newExpr(build(), tabledPrefilters()) })
	screenExprs = append(screenExprs, screenExpr{source: build, expr: x})
	return x
}

// screenExpr is one of the screen's expressions, as re and reBuilt made
// it.
type screenExpr struct {
	source func() string // builds its source
	expr   func() *expr  // the expression, prepared on first use
}

// screenExprs are every expression re and reBuilt made, in the order the
// package made them.
var screenExprs []screenExpr

// newExpr returns the expression s with its prefilter, prepared: the one
// table holds of s, or, when it holds none, one worked out from s.
func newExpr(s string, table map[string]*prefilter) *expr {
	need, ok := table[s]
	if !ok {
		tree, err := syntax.Parse(s, syntax.Perl)
		if err != nil {
			regexp.MustCompile(s) // panics, saying why
		}
		need = needed(tree.Simplify())
		need.prepare()
	}
	return &expr{src: s, need: need, compiled: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(s) })}
}

// tabledPrefilter is the prefilter of one of the screen's expressions, as
// go generate worked it out (prefilterTable).
type tabledPrefilter struct {
	src  string     // the expression
	need *prefilter // its prefilter, ordered (order), its pairs not worked out
}

// tabledPrefilters returns the prefilters of prefilterTable by their
// expression, prepared, on its first use.
var tabledPrefilters = sync.OnceValue(func() map[string]*prefilter { return prepareTable(prefilterTable) })

// prepareTable returns the prefilters of table by their expression, their
// pairs worked out: it sets the pairs of table's own prefilters, which
// tabledPrefilters does once, before any expression uses them.
func prepareTable(table []tabledPrefilter) map[string]*prefilter {
	var room pairRoom
	for _, t := range table {
		room.count(t.need)
	}
	room.make()
	m := make(map[string]*prefilter, len(table))
	for _, t := range table {
		room.pair(t.need)
		m[t.src] = t.need
	}
	return m
}

// prefilter is what a text must contain for an expression to match it: a
// tree of strings, folded (foldString), joined by and and or. A nil
// prefilter holds for every text.
type prefilter struct {
	and   bool         // every sub holds; else, one sub or one of any
	any   []string     // strings of which one in the text is enough
	sub   []*prefilter // (in and, any is empty)
	pairs [][]uint16   // of each string of any, its pairs of bytes (pairHash)
}

// holds reports whether folded, a text folded with foldString, has what p
// needs; in, the pairs of folded, or nil.
func (p *prefilter) holds(folded string, in *pairs) bool {
	if p == nil {
		return true
	}
	if p.and {
		for _, q := range p.sub {
			if !q.holds(folded, in) {
				return false
			}
		}
		return true
	}
	for i, s := range p.any {
		if in.mayHold(p.pairs[i]) && strings.Contains(folded, s) {
			return true
		}
	}
	for _, q := range p.sub {
		if q.holds(folded, in) {
			return true
		}
	}
	return false
}

// prepare readies p for holds: it orders p (order) and works out its
// pairs (pair).
func (p *prefilter) prepare() {
	p.order()
	p.pair()
}

// order orders the subs of each and of p by how many strings they hold,
// fewest first, so that a text that lacks what p needs is told so soon.
func (p *prefilter) order() {
	if p == nil {
		return
	}
	for _, q := range p.sub {
		q.order()
	}
	if p.and {
		slices.SortStableFunc(p.sub, func(a, b *prefilter) int { return a.size() - b.size() })
	}
}

// pair works out the pairs of bytes of each string of p.
func (p *prefilter) pair() {
	var room pairRoom
	room.count(p)
	room.make()
	room.pair(p)
}

// pairRoom is room for the pairs of the strings of prefilters, taken from
// two arrays, not two for each of their thousands of nodes: the first
// Screen of a process works the pairs of every prefilter out.
type pairRoom struct {
	strings, pairs int        // how many, counted
	lists          [][]uint16 // the pairs of each string
	hashes         []uint16   // the pairs of them all
}

// count counts the strings of p and their pairs.
func (r *pairRoom) count(p *prefilter) {
	if p == nil {
		return
	}
	r.strings += len(p.any)
	for _, s := range p.any {
		r.pairs += max(len(s)-1, 0)
	}
	for _, q := range p.sub {
		r.count(q)
	}
}

// make makes the room counted.
func (r *pairRoom) make() {
	r.lists = make([][]uint16, r.strings)
	r.hashes = make([]uint16, 0, r.pairs)
}

// pair works out the pairs of p in the room, which count counted.
func (r *pairRoom) pair(p *prefilter) {
	if p == nil {
		return
	}
	p.pairs, r.lists = r.lists[:len(p.any):len(p.any)], r.lists[len(p.any):]
	for i, s := range p.any {
		from := len(r.hashes)
		for j := 0; j+1 < len(s); j++ {
			r.hashes = append(r.hashes, pairHash(s[j], s[j+1]))
		}
		p.pairs[i] = r.hashes[from:len(r.hashes):len(r.hashes)]
	}
	for _, q := range p.sub {
		r.pair(q)
	}
}

// size returns how many strings p holds.
func (p *prefilter) size() int {
	n := len(p.any)
	for _, q := range p.sub {
		n += q.size()
	}
	return n
}

// pairs is a Bloom filter of the pairs of bytes a folded text holds, each
// set as the bit of its pairHash: a string is in the text only if each of
// its pairs is in the filter.
type pairs [1 << pairBits / 64]uint64

// pairBits is the size of a pair's hash: 4096 bits hold the few hundred
// pairs of a memory with few collisions.
const pairBits = 12

// pairHash hashes the pair of bytes a, b (Fibonacci hashing).
func pairHash(a, b byte) uint16 {
	return uint16((uint32(a)<<8 | uint32(b)) * 0x9E3779B1 >> (32 - pairBits))
}

// pairsOf returns the filter of the pairs of folded.
func pairsOf(folded string) *pairs {
	var in pairs
	for i := 0; i+1 < len(folded); i++ {
		h := pairHash(folded[i], folded[i+1])
		in[h/64] |= 1 << (h % 64)
	}
	return &in
}

// mayHold reports whether a text with the pairs in may hold a string with
// the pairs hs: true when in is nil.
func (in *pairs) mayHold(hs []uint16) bool {
	if in == nil {
		return true
	}
	for _, h := range hs {
		if in[h/64]&(1<<(h%64)) == 0 {
			return false
		}
	}
	return true
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
func needed(re *syntax.Regexp) *prefilter { return exacts{}.needed(re) }

// exacts holds what exact found of each node of a tree, so that the
// recursion of needed, which asks it of each node at each level above
// it, works it out once.
type exacts map[*syntax.Regexp]exactSet

// exactSet is what exact found of a node.
type exactSet struct {
	set []string
	ok  bool
}

// needed is needed, remembering exact sets in e.
func (e exacts) needed(re *syntax.Regexp) *prefilter {
	if set, ok := e.exact(re); ok {
		return anyOf(set)
	}
	switch re.Op {
	case syntax.OpCapture, syntax.OpPlus:
		return e.needed(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return e.needed(re.Sub[0])
		}
	case syntax.OpConcat:
		return e.neededConcat(re.Sub)
	case syntax.OpAlternate:
		// One branch matches: what that branch needs holds.
		p := &prefilter{}
		for _, sub := range re.Sub {
			if !p.orBranch(e.needed(sub)) {
				return nil
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
// Where the parser factored a short common start out of an alternation too
// large to be exact (sans…|sin…|sem… into s(?:ans…|in…|em…)), the start
// is joined to each branch again: "sans", "sin", "sem", not "s", which
// nearly every text holds.
func (e exacts) neededConcat(subs []*syntax.Regexp) *prefilter {
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
		set, ok := e.exact(sub)
		if ok && len(run)*len(set) <= maxExact {
			run = product(run, set)
			continue
		}
		if !ok && sub.Op == syntax.OpAlternate && anyOf(run) != nil && !slices.ContainsFunc(run, func(s string) bool { return len(s) > 2 }) {
			if q := e.neededAfter(run, sub.Sub); q != nil {
				add(q)
				run = []string{""}
				continue
			}
		}
		flush()
		if ok {
			run = set
			continue
		}
		add(e.needed(sub))
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

// neededAfter returns the prefilter of one of the strings run followed by
// one of branches, or nil when a branch needs nothing.
func (e exacts) neededAfter(run []string, branches []*syntax.Regexp) *prefilter {
	start := &syntax.Regexp{Op: syntax.OpAlternate}
	for _, s := range run {
		start.Sub = append(start.Sub, &syntax.Regexp{Op: syntax.OpLiteral, Rune: []rune(s)})
	}
	if len(start.Sub) == 1 {
		start = start.Sub[0]
	}
	p := &prefilter{}
	for _, b := range branches {
		subs := []*syntax.Regexp{start, b}
		if b.Op == syntax.OpConcat {
			subs = append(subs[:1], b.Sub...)
		}
		if !p.orBranch(e.neededConcat(subs)) {
			return nil
		}
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
	return &prefilter{any: shortest(set)}
}

// shortest returns set without the strings that hold another of it: where
// "無効に " is, "無効に" is, and the set needs one of them.
func shortest(set []string) []string {
	out := set[:0:0]
	for _, s := range set {
		if !slices.ContainsFunc(set, func(t string) bool { return t != s && strings.Contains(s, t) }) {
			out = append(out, s)
		}
	}
	return out
}

// exact returns every string re matches, folded, when they are at most
// maxExact; ok is false otherwise. Empty-width assertions match "".
func (e exacts) exact(re *syntax.Regexp) (set []string, ok bool) {
	if x, seen := e[re]; seen {
		return x.set, x.ok
	}
	set, ok = e.exactOf(re)
	set = slices.Clip(set) // a caller that appends to it copies it
	e[re] = exactSet{set, ok}
	return set, ok
}

// exactOf is exact, worked out.
func (e exacts) exactOf(re *syntax.Regexp) (set []string, ok bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return []string{foldString(string(re.Rune))}, true
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return []string{""}, true
	case syntax.OpCharClass:
		return classSet(re.Rune)
	case syntax.OpCapture:
		return e.exact(re.Sub[0])
	case syntax.OpQuest:
		set, ok := e.exact(re.Sub[0])
		if !ok || len(set) >= maxExact {
			return nil, false
		}
		return union(set, []string{""}), true
	case syntax.OpConcat:
		set = []string{""}
		for _, sub := range re.Sub {
			s, ok := e.exact(sub)
			if !ok || len(set)*len(s) > maxExact {
				return nil, false
			}
			set = product(set, s)
		}
		return set, true
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			s, ok := e.exact(sub)
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

// orBranch adds to p, a prefilter of an alternation, what one of its
// branches needs (q), and reports whether it did: false when the branch
// needs nothing, and so neither does the alternation.
func (p *prefilter) orBranch(q *prefilter) bool {
	switch {
	case q == nil:
		return false
	case q.and:
		p.sub = append(p.sub, q)
	default:
		p.any = union(p.any, q.any)
		p.sub = append(p.sub, q.sub...)
	}
	return true
}
