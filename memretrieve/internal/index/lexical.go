package index

import (
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// The lexical index ranks memories by the words they share with a query,
// with Okapi BM25 (the ranking function of Lucene, Elasticsearch and most
// search engines) over the terms of AppendTerms. It needs no model: it
// answers while the first vector build is running and when the embedder is
// down, and it finds what an embedding blurs — an identifier such as
// errors.As, a file path, a rare name.

// BM25's parameters, at the values Lucene and Elasticsearch use by default
// (Robertson and Zaragoza, "The Probabilistic Relevance Framework: BM25 and
// Beyond", 2009, recommend k1 in 1.2–2 and b 0.75): k1 bounds how much
// repeating a term in a memory adds, b how much a long memory is penalised.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// Doc is one memory text as the lexical index sees it: its distinct
// terms with their counts, and its length in terms.
type Doc struct {
	terms  []string
	counts []int32
	length int32
}

// NewDoc tokenises text with tok.
func NewDoc(tok *Tokenizer, text string) *Doc {
	all := tok.terms(tok.buf[:0], text)
	tok.buf = all
	if tok.count == nil {
		tok.count = make(map[string]int32)
	}
	clear(tok.count)
	for _, t := range all {
		tok.count[t]++
	}
	d := &Doc{length: int32(len(all)), terms: make([]string, 0, len(tok.count)), counts: make([]int32, 0, len(tok.count))}
	// In order of first appearance, so that a document is the same every
	// time.
	for _, t := range all {
		if n := tok.count[t]; n > 0 {
			d.terms = append(d.terms, t)
			d.counts = append(d.counts, n)
			tok.count[t] = 0
		}
	}
	return d
}

// Lex is an immutable BM25 index: for each term, the rows whose text
// has it, each with the term's BM25 weight in that row (its inverse
// document frequency times its saturated, length-normalised count), so a
// query adds up precomputed weights. Row i belongs to ids[i] (a memory id).
type Lex struct {
	IDs []string
	// terms maps a term to its number t; its postings are
	// postings[starts[t]:starts[t+1]].
	terms    map[string]int32
	starts   []int32
	postings []lexPosting
	// docs holds the text of each row, for the evidence of a match
	// (Information).
	docs []*Doc
	// termOf holds the number of each term of each row, row after row:
	// what NewLexFrom reuses.
	termOf []int32
	// scratch holds *lexScratch values for search, so that a turn's
	// search allocates next to nothing.
	scratch sync.Pool
}

// lexScratch is what one search works in: a score per row, all zero
// between searches, and the rows it touched.
type lexScratch struct {
	scores  []float32
	touched []int32
	// info is BestInformation's sum per row, made on its first use.
	info []float64
}

// lexPosting is one row holding a term, with the term's weight there.
type lexPosting struct {
	Row int32
	w   float32
}

// NewLex indexes docs; docs[i] is the text of ids[i].
func NewLex(ids []string, docs []*Doc) *Lex { return NewLexFrom(nil, ids, docs) }

// NewLexFrom indexes docs, as NewLex does, reusing the work of prev for
// the rows that start both (the same *Doc values, in order): the terms of
// those are not looked up again, so indexing one more text costs the
// layout of the postings, not a map lookup per term of every text. The
// index is the one NewLex makes of the same docs, term numbers and weights
// alike. prev may be nil; it is not changed.
func NewLexFrom(prev *Lex, ids []string, docs []*Doc) *Lex {
	x := &Lex{IDs: ids, docs: docs}
	p := prev.commonPrefix(docs)
	var df []int32
	shared := false // x.terms is prev's: copied before a term is added
	if p == 0 {
		x.terms = make(map[string]int32)
		x.termOf = make([]int32, 0, len(docs)*16)
	} else {
		x.terms, df, x.termOf, shared = prev.prefixTerms(p, len(docs))
	}
	// First number the terms and count the rows holding each, then lay
	// the postings out in one block, term after term.
	for _, d := range docs[p:] {
		for _, t := range d.terms {
			n, ok := x.terms[t]
			if !ok {
				if shared {
					x.terms, shared = maps.Clone(x.terms), false
				}
				n = int32(len(df))
				x.terms[t] = n
				df = append(df, 0)
			}
			df[n]++
			x.termOf = append(x.termOf, n)
		}
	}
	x.layout(df)
	return x
}

// Doc returns the text of row, as indexed.
func (x *Lex) Doc(row int) *Doc { return x.docs[row] }

// commonPrefix returns how many rows x and docs start with alike; 0 for
// a nil x.
func (x *Lex) commonPrefix(docs []*Doc) int {
	if x == nil {
		return 0
	}
	n := 0
	for n < len(x.docs) && n < len(docs) && x.docs[n] == docs[n] {
		n++
	}
	return n
}

// prefixTerms returns what NewLex, numbering the terms of x's first p rows
// (of rows rows in all), has made of them: the terms' numbers (x's map,
// shared, when those rows hold every term of x; else a copy holding theirs
// only), each term's document frequency in them, and the number of each
// of their terms, with room for the other rows'. Terms are numbered by
// first appearance, so those of the first p rows are x's first ones.
func (x *Lex) prefixTerms(p, rows int) (terms map[string]int32, df, termOf []int32, shared bool) {
	if p == len(x.docs) {
		termOf = slices.Grow(slices.Clip(x.termOf), 16*(rows-p))
		return x.terms, x.dfs(), termOf, true
	}
	k := 0
	for _, d := range x.docs[:p] {
		k += len(d.terms)
	}
	termOf = make([]int32, k, k+16*(rows-p))
	copy(termOf, x.termOf[:k])
	nTerms := int32(0)
	for _, t := range termOf {
		nTerms = max(nTerms, t+1)
	}
	df = make([]int32, nTerms, int(nTerms)+16)
	for _, t := range termOf {
		df[t]++
	}
	terms = maps.Clone(x.terms)
	maps.DeleteFunc(terms, func(_ string, n int32) bool { return n >= nTerms })
	return terms, df, termOf, false
}

// dfs returns a new slice of each term's document frequency.
func (x *Lex) dfs() []int32 {
	df := make([]int32, len(x.starts)-1, len(x.starts)+16)
	for t := range df {
		df[t] = x.starts[t+1] - x.starts[t]
	}
	return df
}

// layout lays the postings out in one block, term after term, each row's
// in row order, with their weights: df is each term's document frequency,
// x.termOf the number of each term of each row.
func (x *Lex) layout(df []int32) {
	docs := x.docs
	var length float64
	total := 0
	for _, d := range docs {
		length += float64(d.length)
		total += len(d.terms)
	}
	x.starts = make([]int32, len(df)+1)
	for t, n := range df {
		x.starts[t+1] = x.starts[t] + n
	}
	x.postings = make([]lexPosting, total)
	next := slices.Clone(x.starts[:len(df)])
	avg := 1.0
	if len(docs) > 0 && length > 0 {
		avg = length / float64(len(docs))
	}
	// Lucene's form of the inverse document frequency, never negative.
	idf := make([]float64, len(df))
	for t, f := range df {
		idf[t] = IDF(int(f), len(docs))
	}
	k := 0
	for row, d := range docs {
		norm := bm25K1 * (1 - bm25B + bm25B*float64(d.length)/avg)
		for i := range d.terms {
			t := x.termOf[k]
			k++
			tf := float64(d.counts[i])
			x.postings[next[t]] = lexPosting{Row: int32(row), w: float32(idf[t] * tf * (bm25K1 + 1) / (tf + norm))}
			next[t]++
		}
	}
}

// Len is the number of rows.
func (x *Lex) Len() int {
	if x == nil {
		return 0
	}
	return len(x.IDs)
}

// DF returns how many rows hold term (its document frequency).
func (x *Lex) DF(term string) int {
	if x == nil {
		return 0
	}
	t, ok := x.terms[term]
	if !ok {
		return 0
	}
	return int(x.starts[t+1] - x.starts[t])
}

// Terms returns the distinct terms of text (see AppendTerms) that some row
// holds, in order of first appearance.
func (x *Lex) Terms(text string) []string { return x.KnownTerms(AppendTerms(nil, text)) }

// KnownTerms returns the distinct terms of all (the terms of a text, from
// AppendTerms) that some row holds, in order, in a new slice: Terms of a
// text whose terms are known already.
func (x *Lex) KnownTerms(all []string) []string {
	out := make([]string, 0, len(all))
	seen := make(map[string]bool, len(all))
	for _, t := range all {
		if !seen[t] && x.DF(t) > 0 {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// IDF is the inverse document frequency of a term df of n rows hold, in
// Lucene's form, which is never negative: ln(1 + (n − df + 0.5)/(df +
// 0.5)). BM25 weighs each term by it.
func IDF(df, n int) float64 {
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

// Information returns the evidence that row's words give of a match with
// terms (the distinct terms of a text, from Terms): the sum of the IDF of
// the terms it shares with them — the weight BM25 gives each, without its
// count and length normalisation — and how many it shares; 0 and 0 when it
// shares none. The IDF counts the index as holding at least minRows rows
// (those it does not hold holding none of the terms), so that in a small
// index a word one row holds still weighs what it would in a larger one.
func (x *Lex) Information(row int, terms []string, minRows int) (info float64, matched int) {
	if row < 0 || row >= len(x.docs) {
		return 0, 0
	}
	d := x.docs[row]
	n := max(x.Len(), minRows)
	for _, t := range terms {
		if slices.Contains(d.terms, t) {
			info += IDF(x.DF(t), n)
			matched++
		}
	}
	return info, matched
}

// BestInformation returns the most Information any row has for terms (the
// distinct terms of a text, from Terms), 0 when no row shares one.
func (x *Lex) BestInformation(terms []string, minRows int) float64 {
	sc, _ := x.scratch.Get().(*lexScratch)
	if sc == nil {
		sc = &lexScratch{scores: make([]float32, x.Len())}
	}
	if sc.info == nil {
		sc.info = make([]float64, x.Len())
	}
	acc, touched := sc.info, sc.touched[:0]
	defer func() {
		for _, r := range touched {
			acc[r] = 0
		}
		sc.touched = touched
		x.scratch.Put(sc)
	}()
	var best float64
	n := max(x.Len(), minRows)
	for _, term := range terms {
		t, ok := x.terms[term]
		if !ok {
			continue
		}
		w := IDF(int(x.starts[t+1]-x.starts[t]), n)
		for _, p := range x.postings[x.starts[t]:x.starts[t+1]] {
			if acc[p.Row] == 0 {
				touched = append(touched, p.Row)
			}
			acc[p.Row] += w
			best = max(best, acc[p.Row])
		}
	}
	return best
}

// Term is a query term with its weight: how many of the turn's queries
// hold it.
type Term struct {
	term string
	w    float32
}

// NewQuery merges the terms of texts into one weighted query: each
// text adds 1 to the weight of each distinct term it holds. A row's score is
// then the sum of its BM25 scores for the texts one by one, so that, with
// the nested queries of a turn (the latest message, the latest exchange,
// the window), a word of the latest message counts three times and one
// said only earlier in the window once.
func NewQuery(texts []string) []Term {
	weights := make(map[string]float32)
	var order []string
	var buf []string
	for _, t := range texts {
		buf = AppendTerms(buf[:0], t)
		slices.Sort(buf)
		for i, term := range buf {
			if i > 0 && buf[i-1] == term {
				continue
			}
			if _, ok := weights[term]; !ok {
				order = append(order, term)
			}
			weights[term]++
		}
	}
	q := make([]Term, len(order))
	for i, t := range order {
		q[i] = Term{term: t, w: weights[t]}
	}
	return q
}

// Search returns the k best rows for q, best first, among the rows that
// share a term with it (their score is above 0). Ties go to the earlier
// row.
func (x *Lex) Search(q []Term, k int) []Hit {
	n := x.Len()
	if n == 0 || k < 1 || len(q) == 0 {
		return nil
	}
	sc, _ := x.scratch.Get().(*lexScratch)
	if sc == nil {
		sc = &lexScratch{scores: make([]float32, n)}
	}
	scores, touched := sc.scores, sc.touched[:0]
	defer func() {
		for _, r := range touched {
			scores[r] = 0
		}
		sc.touched = touched
		x.scratch.Put(sc)
	}()
	for _, t := range q {
		n, ok := x.terms[t.term]
		if !ok {
			continue
		}
		for _, p := range x.postings[x.starts[n]:x.starts[n+1]] {
			if scores[p.Row] == 0 {
				touched = append(touched, p.Row)
			}
			scores[p.Row] += t.w * p.w
		}
	}
	h := newHeaps(1, min(k, len(touched)))[0]
	if h.k == 0 {
		return nil
	}
	for _, r := range touched {
		if s := scores[r]; s > 0 && s >= h.floor {
			h.offer(Hit{Row: int(r), Score: s})
		}
	}
	return h.sorted()
}

// AppendTerms appends the index terms of text to dst, in order of
// appearance, and returns it. A term is a word lower-cased and, when it is
// plain English letters, reduced to its stem (stem), with common English
// words (stopWords) and one-character words left out. A code identifier is
// indexed whole and by its parts: errors.As gives "errors.as", "error"
// ("as" is a common word); snake_case gives "snake_case", "snake", "case";
// CamelCase gives "camelcase", "camel", "case"; db/migrations gives
// "db/migrations", "db", "migrat". Parts are separated by _ . / \ - : @
// between letters or digits and by changes of case; a possessive 's is
// dropped and other apostrophes are removed ("don't" is "dont"). Each Han,
// kana or Hangul character is a term of its own.
func AppendTerms(dst []string, text string) []string {
	var tok Tokenizer
	return tok.terms(dst, text)
}

// Tokenizer computes the terms of texts (see AppendTerms). When known is
// not nil it remembers the term of each plain word it met (or "" for
// none): the words of a store's memories repeat, and a map look-up is
// cheaper than lower-casing, checking and stemming a word again.
type Tokenizer struct {
	known map[string]string
	buf   []string         // the terms of the latest text, reused
	count map[string]int32 // the counts of the latest text's terms, reused
}

// NewTokenizer returns a Tokenizer that remembers words.
func NewTokenizer() *Tokenizer {
	return &Tokenizer{known: make(map[string]string), count: make(map[string]int32)}
}

// maxKnownWords bounds the words a Tokenizer remembers.
const maxKnownWords = 1 << 16

// terms appends the terms of text to dst (see AppendTerms). A run of
// ASCII letters and digits, capitalised at most, is a plain word; any
// other run goes through word.
func (t *Tokenizer) terms(dst []string, text string) []string {
	w := wordScan{t: t, text: text, dst: dst, start: -1}
	for i := 0; i < len(text); {
		if c := text[i]; c < utf8.RuneSelf {
			w.ascii(c, i)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		w.other(r, i, size)
		i += size
	}
	w.flush(len(text))
	return w.dst
}

// wordScan is the state of Tokenizer.terms: the word being read, from
// start (−1: none), and whether it is a plain word so far.
type wordScan struct {
	t      *Tokenizer
	text   string
	dst    []string
	start  int
	simple bool
}

// begin starts a word at i unless one is being read.
func (w *wordScan) begin(i int, simple bool) {
	if w.start < 0 {
		w.start, w.simple = i, simple
	}
}

// ascii reads the ASCII byte c at i.
func (w *wordScan) ascii(c byte, i int) {
	switch {
	case 'a' <= c && c <= 'z' || '0' <= c && c <= '9':
		w.begin(i, true)
	case 'A' <= c && c <= 'Z':
		if w.start >= 0 {
			w.simple = false
		}
		w.begin(i, true)
	case isJoiner(rune(c)) || c == '\'':
		w.begin(i, false)
		w.simple = false
	default:
		w.flush(i)
	}
}

// other reads the rune r, of size bytes, at i.
func (w *wordScan) other(r rune, i, size int) {
	switch {
	case isIdeograph(r):
		w.flush(i)
		w.dst = append(w.dst, w.text[i:i+size])
	case isWordRune(r):
		w.begin(i, false)
		w.simple = false
	default:
		w.flush(i)
	}
}

// flush appends the terms of the word being read, which ends at end.
func (w *wordScan) flush(end int) {
	if w.start < 0 {
		return
	}
	if w.simple {
		w.dst = w.t.plain(w.dst, w.text[w.start:end])
	} else {
		w.dst = w.t.word(w.dst, w.text[w.start:end])
	}
	w.start = -1
}

// isIdeograph reports whether r is a character of a script written without
// spaces between words, each of which is indexed as a term of its own.
func isIdeograph(r rune) bool {
	return r >= 0x2E80 && (unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r))
}

// isAlnum reports whether r is a letter, a digit or a combining mark.
func isAlnum(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

// isJoiner reports whether r joins the parts of an identifier or a path
// when it stands between letters or digits.
func isJoiner(r rune) bool {
	switch r {
	case '_', '.', '/', '\\', '-', ':', '@':
		return true
	}
	return false
}

func isApostrophe(r rune) bool { return r == '\'' || r == '’' }

func isWordRune(r rune) bool { return isAlnum(r) || isJoiner(r) || isApostrophe(r) }

// word appends the terms of one run of word runes (see AppendTerms).
func (t *Tokenizer) word(dst []string, w string) []string {
	w = strings.TrimFunc(w, func(r rune) bool { return !isAlnum(r) })
	if w == "" {
		return dst
	}
	w = dropApostrophes(w)
	if !compound(w) {
		return t.plain(dst, w)
	}
	var parts []string
	joined := false
	for seg := range strings.FieldsFuncSeq(w, isJoiner) {
		n := len(parts)
		parts = appendCamelParts(parts, seg)
		joined = joined || n > 0
	}
	if len(parts) == 1 && !joined {
		return t.plain(dst, parts[0])
	}
	// An identifier: the whole of it (with its joiners, never stemmed),
	// then its parts as plain words.
	if whole := strings.ToLower(w); utf8.RuneCountInString(whole) > 1 {
		dst = append(dst, whole)
	}
	for _, p := range parts {
		dst = t.plain(dst, p)
	}
	return dst
}

// compound reports whether w has parts: a joiner, or a change of case
// within it (see appendCamelParts).
func compound(w string) bool {
	var prev rune
	for i, r := range w {
		if isJoiner(r) {
			return true
		}
		if i > 0 && unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsUpper(prev)) {
			// camelCase, or a capital run that may end in a new part
			// (HTTPServer); the split decides.
			return true
		}
		prev = r
	}
	return false
}

// plain appends the term of one plain word, if it is one.
func (t *Tokenizer) plain(dst []string, w string) []string {
	term, ok := t.known[w]
	if !ok {
		term = plainTerm(w)
		if t.known != nil && len(t.known) < maxKnownWords {
			t.known[w] = term
		}
	}
	if term == "" {
		return dst
	}
	return append(dst, term)
}

// plainTerm returns the term of a plain word: lower-cased and stemmed; ""
// for a common word or a single character.
func plainTerm(w string) string {
	w = strings.ToLower(w)
	if utf8.RuneCountInString(w) < 2 {
		return ""
	}
	if _, stop := stopWords[w]; stop {
		return ""
	}
	return stem(w)
}

// dropApostrophes removes a possessive 's or ’s ending the word or one of
// its joined parts, and every other apostrophe.
func dropApostrophes(w string) string {
	if !strings.ContainsAny(w, "'’") {
		return w
	}
	var b strings.Builder
	for i := 0; i < len(w); {
		r, size := utf8.DecodeRuneInString(w[i:])
		if !isApostrophe(r) {
			b.WriteString(w[i : i+size])
			i += size
			continue
		}
		i += size
		if i < len(w) && (w[i] == 's' || w[i] == 'S') {
			next, _ := utf8.DecodeRuneInString(w[i+1:])
			if i+1 == len(w) || !isAlnum(next) {
				i++ // the possessive s
			}
		}
	}
	return b.String()
}

// appendCamelParts appends the parts of seg split where its case changes:
// "camelCase" → "camel", "Case"; "HTTPServer" → "HTTP", "Server";
// "parseJSON2" → "parse", "JSON2". A segment without such a change is one
// part.
func appendCamelParts(dst []string, seg string) []string {
	start := 0
	var prev, prevPrev rune
	for i, r := range seg {
		if i > 0 {
			switch {
			case unicode.IsLower(prev) && unicode.IsUpper(r):
				// camelCase: a new part starts at the capital.
				dst = append(dst, seg[start:i])
				start = i
			case unicode.IsUpper(prevPrev) && unicode.IsUpper(prev) && unicode.IsLower(r):
				// HTTPServer: the last capital starts the new part.
				j := i - utf8.RuneLen(prev)
				if j > start {
					dst = append(dst, seg[start:j])
					start = j
				}
			}
		}
		prevPrev, prev = prev, r
	}
	return append(dst, seg[start:])
}

// stopWords are common English words, left out of the index and of
// queries: they are in most texts, so they say nothing about which memory a
// query means. The words of a whole identifier are kept ("errors.As" is
// indexed with its "as").
var stopWords = func() map[string]struct{} {
	words := strings.Fields(`a about above after again against all am an and any are arent as at
		be because been before being below between both but by can cannot cant could couldnt
		did didnt do does doesnt doing dont down during each few for from further had hadnt has hasnt
		have havent having he hes her here heres hers herself him himself his how hows i im ive if in
		into is isnt it its itself lets me more most mustnt my myself no nor not of off on once only or
		other ought our ours ourselves out over own same she should shouldnt so some such than that
		thats the their theirs them themselves then there theres these they theyd theyll theyre theyve
		this those through to too under until up very was wasnt we were weve werent what whats when
		whens where wheres which while who whos whom why whys will with wont would wouldnt you youd
		youll youre youve your yours yourself yourselves also just`)
	set := make(map[string]struct{}, len(words))
	for _, w := range words {
		set[w] = struct{}{}
	}
	return set
}()
