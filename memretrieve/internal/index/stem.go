package index

// stem reduces an English word in lower-case ASCII letters to its stem with
// the Porter stemming algorithm (M.F. Porter, "An algorithm for suffix
// stripping", Program 14(3), 1980, with the later "bli" → "ble" and "logi" →
// "log" rules of the reference implementation), so that "danced", "dancing"
// and "dances" all index as "danc". Words of one or two letters, and words
// with anything but the letters a–z, are returned unchanged.
func stem(w string) string {
	if len(w) <= 2 {
		return w
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return w
		}
	}
	var buf [32]byte
	s := stemmer{b: append(buf[:0], w...)}
	s.step1ab()
	if len(s.b) > 1 {
		s.step1c()
		s.step2()
		s.step3()
		s.step4()
		s.step5()
	}
	// Most stems are the word cut short: share its bytes.
	if len(s.b) <= len(w) && string(s.b) == w[:len(s.b)] {
		return w[:len(s.b)]
	}
	return string(s.b)
}

// stemmer holds the word being stemmed. The algorithm's conditions are
// evaluated on a stem: b[:j], the word without the suffix under test.
type stemmer struct {
	b []byte
}

// cons reports whether b[i] is a consonant: a letter other than a, e, i,
// o, u, and other than a y that follows a consonant.
func (s *stemmer) cons(i int) bool {
	switch s.b[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !s.cons(i-1)
	}
	return true
}

// measure returns m of b[:j] written as [C](VC)^m[V]: the number of
// vowel-consonant sequences.
func (s *stemmer) measure(j int) int {
	n, i := 0, 0
	for i < j && s.cons(i) {
		i++
	}
	for i < j {
		for i < j && !s.cons(i) {
			i++
		}
		if i >= j {
			break
		}
		n++
		for i < j && s.cons(i) {
			i++
		}
	}
	return n
}

// hasVowel reports whether b[:j] contains a vowel (*v*).
func (s *stemmer) hasVowel(j int) bool {
	for i := range j {
		if !s.cons(i) {
			return true
		}
	}
	return false
}

// doubleCons reports whether b[:j] ends with a double consonant (*d).
func (s *stemmer) doubleCons(j int) bool {
	return j >= 2 && s.b[j-1] == s.b[j-2] && s.cons(j-1)
}

// cvc reports whether b[:j] ends consonant-vowel-consonant with the last
// consonant not w, x or y (*o): "hop", "fil", not "snow" or "box".
func (s *stemmer) cvc(j int) bool {
	if j < 3 || !s.cons(j-1) || s.cons(j-2) || !s.cons(j-3) {
		return false
	}
	switch s.b[j-1] {
	case 'w', 'x', 'y':
		return false
	}
	return true
}

// ends reports whether the word ends with suffix.
func (s *stemmer) ends(suffix string) bool {
	n := len(s.b) - len(suffix)
	return n >= 0 && string(s.b[n:]) == suffix
}

// replace swaps the word's suffix of n letters for with.
func (s *stemmer) replace(n int, with string) {
	s.b = append(s.b[:len(s.b)-n], with...)
}

// rule is one suffix rule of steps 2 to 4: suffix becomes with.
type rule struct{ suffix, with string }

// applyRules applies the first rule whose suffix ends the word (the rules
// are listed longest suffix first, so that is the longest matching one),
// if the stem before it has a measure above minM; a matching rule whose
// condition fails ends the step.
func (s *stemmer) applyRules(rules []rule, minM int) {
	for _, r := range rules {
		if s.ends(r.suffix) {
			j := len(s.b) - len(r.suffix)
			if s.measure(j) > minM {
				s.replace(len(r.suffix), r.with)
			}
			return
		}
	}
}

func (s *stemmer) step1ab() {
	switch {
	case s.ends("sses"), s.ends("ies"):
		s.replace(2, "")
	case s.ends("ss"):
	case s.ends("s"):
		s.replace(1, "")
	}
	switch {
	case s.ends("eed"):
		if s.measure(len(s.b)-3) > 0 {
			s.replace(1, "")
		}
		return
	case s.ends("ed") && s.hasVowel(len(s.b)-2):
		s.replace(2, "")
	case s.ends("ing") && s.hasVowel(len(s.b)-3):
		s.replace(3, "")
	default:
		return
	}
	j := len(s.b)
	switch {
	case s.ends("at"), s.ends("bl"), s.ends("iz"):
		s.b = append(s.b, 'e')
	case s.doubleCons(j):
		switch s.b[j-1] {
		case 'l', 's', 'z':
		default:
			s.b = s.b[:j-1]
		}
	case s.measure(j) == 1 && s.cvc(j):
		s.b = append(s.b, 'e')
	}
}

// step1c turns a final y into i when the stem has a vowel: "happy" →
// "happi".
func (s *stemmer) step1c() {
	if s.ends("y") && s.hasVowel(len(s.b)-1) {
		s.b[len(s.b)-1] = 'i'
	}
}

var step2Rules = []rule{
	{"ational", "ate"}, {"tional", "tion"}, {"fulness", "ful"}, {"ousness", "ous"},
	{"iveness", "ive"}, {"ization", "ize"}, {"biliti", "ble"}, {"entli", "ent"},
	{"ousli", "ous"}, {"alism", "al"}, {"ation", "ate"}, {"aliti", "al"},
	{"iviti", "ive"}, {"enci", "ence"}, {"anci", "ance"}, {"izer", "ize"},
	{"alli", "al"}, {"ator", "ate"}, {"logi", "log"}, {"bli", "ble"}, {"eli", "e"},
}

func (s *stemmer) step2() { s.applyRules(step2Rules, 0) }

var step3Rules = []rule{
	{"icate", "ic"}, {"ative", ""}, {"alize", "al"}, {"iciti", "ic"},
	{"ical", "ic"}, {"ness", ""}, {"ful", ""},
}

func (s *stemmer) step3() { s.applyRules(step3Rules, 0) }

var step4Rules = []rule{
	{"ement", ""}, {"ance", ""}, {"ence", ""}, {"able", ""}, {"ible", ""},
	{"ment", ""}, {"ant", ""}, {"ent", ""}, {"ism", ""}, {"ate", ""},
	{"iti", ""}, {"ous", ""}, {"ive", ""}, {"ize", ""}, {"ion", ""},
	{"al", ""}, {"er", ""}, {"ic", ""}, {"ou", ""},
}

// step4 removes a suffix from a stem of measure above 1; "ion" only after s
// or t.
func (s *stemmer) step4() {
	for _, r := range step4Rules {
		if !s.ends(r.suffix) {
			continue
		}
		j := len(s.b) - len(r.suffix)
		if r.suffix == "ion" && (j == 0 || (s.b[j-1] != 's' && s.b[j-1] != 't')) {
			return
		}
		if s.measure(j) > 1 {
			s.b = s.b[:j]
		}
		return
	}
}

// step5 removes a final e (measure above 1, or 1 when the stem does not
// end consonant-vowel-consonant) and makes a final ll single (measure above
// 1).
func (s *stemmer) step5() {
	if s.ends("e") {
		j := len(s.b) - 1
		if m := s.measure(j); m > 1 || (m == 1 && !s.cvc(j)) {
			s.b = s.b[:j]
		}
	}
	if j := len(s.b); s.ends("ll") && s.measure(j) > 1 {
		s.b = s.b[:j-1]
	}
}
