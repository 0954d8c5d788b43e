package fake

import (
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Feature weights. Whole words carry most of the meaning; word pairs reward
// shared phrases; trigrams let related word forms ("cache", "caching") meet.
// Very common words say little about a text and are damped, their trigrams
// and pairs with them.
const (
	weightWord     = 1.0
	weightStopWord = 0.15
	weightPair     = 0.5
	weightTrigram  = 0.25
)

// FNV-1a, applied to runes rather than bytes.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// Seeds that keep the feature kinds apart: the word "cat" and the trigram
// "cat" land in unrelated places.
const (
	seedWord    = 0x9e3779b97f4a7c15
	seedPair    = 0xc2b2ae3d27d4eb4f
	seedTrigram = 0x165667b19e3779f9
	seedBlank   = 0x27d4eb2f165667c5
)

// Word-boundary markers of trigrams: "cat" gives "^ca", "cat" and "at$".
const (
	wordStart = '^'
	wordEnd   = '$'
)

// stopWords are the hashes of common English words whose weight is damped.
var stopWords = func() map[uint64]struct{} {
	words := strings.Fields(`a an and are as at be but by do for from has have he i
		if in is it its me my not of on or our she so that the their them then there
		these they this to was we were what when which who will with you your`)
	set := make(map[uint64]struct{}, len(words))
	for _, w := range words {
		h := uint64(fnvOffset)
		for _, r := range w {
			h = (h ^ uint64(r)) * fnvPrime
		}
		set[h] = struct{}{}
	}
	return set
}()

// mix is the splitmix64 finaliser: it spreads every input bit over the
// output so that the low bits (the index) and the top bit (the sign) are
// independent.
func mix(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

// featureVector accumulates signed, hashed features into v.
type featureVector struct {
	v        []float32
	features int
}

func (f *featureVector) add(h uint64, w float32) {
	h = mix(h)
	i := h % uint64(len(f.v))
	if h>>63 == 0 {
		f.v[i] += w
	} else {
		f.v[i] -= w
	}
	f.features++
}

func trigramHash(a, b, c rune) uint64 {
	h := uint64(fnvOffset ^ seedTrigram)
	h = (h ^ uint64(a)) * fnvPrime
	h = (h ^ uint64(b)) * fnvPrime
	h = (h ^ uint64(c)) * fnvPrime
	return h
}

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

func toLower(r rune) rune {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		return r
	}
	return unicode.ToLower(r)
}

// addTrigrams adds the character trigrams of word, lower-cased and marked
// at both ends ("cat": "^ca", "cat", "at$"), each with weight w.
func addTrigrams(f *featureVector, word string, w float32) {
	t1, t2 := rune(0), rune(wordStart) // the last two runes, '^'-padded
	for _, r := range word {
		r = toLower(r)
		if t1 != 0 { // the first rune of a word completes no trigram
			f.add(trigramHash(t1, t2, r), w)
		}
		t1, t2 = t2, r
	}
	f.add(trigramHash(t1, t2, wordEnd), w)
}

// embedText writes the unit vector of text into v, which it overwrites.
// It allocates nothing.
func embedText(v []float32, text string) {
	clear(v)
	f := featureVector{v: v}

	var (
		inWord   bool
		start    int     // byte offset of the current word in text
		word     uint64  // running hash of the current word
		prev     uint64  // hash of the previous word
		prevW    float32 // weight of the previous word
		havePrev bool
	)
	endWord := func(end int) {
		w := float32(weightWord)
		if _, stop := stopWords[word]; stop {
			w = weightStopWord
		}
		addTrigrams(&f, text[start:end], weightTrigram*w/weightWord)
		f.add(word^seedWord, w)
		if havePrev {
			// A pair is worth as little as its weaker word.
			f.add(mix(prev^seedPair)^word, weightPair*min(w, prevW))
		}
		prev, prevW, havePrev = word, w, true
		inWord = false
	}
	for i, r := range text {
		if !isWordRune(r) {
			if inWord {
				endWord(i)
			}
			continue
		}
		if !inWord {
			inWord = true
			start = i
			word = fnvOffset
		}
		word = (word ^ uint64(toLower(r))) * fnvPrime
	}
	if inWord {
		endWord(len(text))
	}
	if f.features == 0 || !normalize(v) {
		// No words (or, in theory, features that cancelled out): give a
		// fixed unit vector derived from what the text does contain, so
		// that every text, even "", has a deterministic, usable vector.
		clear(v)
		h := uint64(fnvOffset ^ seedBlank)
		for _, r := range strings.TrimSpace(text) {
			h = (h ^ uint64(r)) * fnvPrime
		}
		f.add(h, 1)
		normalize(v)
	}
}

// normalize scales v to unit length and reports whether it could (a zero
// vector cannot be).
func normalize(v []float32) bool {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return false
	}
	scale := float32(1 / math.Sqrt(sum))
	for i := range v {
		v[i] *= scale
	}
	return true
}
