package index

import (
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestStem(t *testing.T) {
	// Pairs from Porter's paper and the reference vocabulary.
	cases := map[string]string{
		"caresses": "caress", "ponies": "poni", "ties": "ti", "caress": "caress", "cats": "cat",
		"feed": "feed", "agreed": "agre", "plastered": "plaster", "bled": "bled", "motoring": "motor",
		"sing": "sing", "conflated": "conflat", "troubled": "troubl", "sized": "size", "hopping": "hop",
		"tanned": "tan", "falling": "fall", "hissing": "hiss", "fizzed": "fizz", "failing": "fail",
		"filing": "file", "happy": "happi", "sky": "sky", "relational": "relat", "conditional": "condit",
		"rational": "ration", "valenci": "valenc", "digitizer": "digit", "conformabli": "conform",
		"radicalli": "radic", "differentli": "differ", "vileli": "vile", "analogousli": "analog",
		"vietnamization": "vietnam", "predication": "predic", "operator": "oper", "feudalism": "feudal",
		"decisiveness": "decis", "hopefulness": "hope", "callousness": "callous", "formaliti": "formal",
		"sensitiviti": "sensit", "sensibiliti": "sensibl", "triplicate": "triplic", "formative": "form",
		"formalize": "formal", "electriciti": "electr", "electrical": "electr", "hopeful": "hope",
		"goodness": "good", "revival": "reviv", "allowance": "allow", "inference": "infer",
		"airliner": "airlin", "gyroscopic": "gyroscop", "adjustable": "adjust", "defensible": "defens",
		"irritant": "irrit", "replacement": "replac", "adjustment": "adjust", "dependent": "depend",
		"adoption": "adopt", "homologou": "homolog", "communism": "commun", "activate": "activ",
		"angulariti": "angular", "homologous": "homolog", "effective": "effect", "bowdlerize": "bowdler",
		"probate": "probat", "rate": "rate", "cease": "ceas", "controll": "control", "roll": "roll",
		"generalizations": "gener", "oscillators": "oscil", "dancing": "danc", "danced": "danc",
		"dance": "danc", "migrations": "migrat", "archaeology": "archaeolog",
		// Left alone: short, or not plain lower-case ASCII letters.
		"as": "as", "go": "go", "x1": "x1", "naïve": "naïve", "Running": "Running", "": "",
	}
	for in, want := range cases {
		if got := stem(in); got != want {
			t.Errorf("stem(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAppendTerms(t *testing.T) {
	cases := []struct {
		text string
		want []string
	}{
		{"Wrap errors and check them with errors.As", []string{"wrap", "error", "check", "errors.as", "error"}},
		{"snake_case names", []string{"snake_case", "snake", "case", "name"}},
		{"CamelCase and HTTPServer", []string{"camelcase", "camel", "case", "httpserver", "http", "server"}},
		{"Migrations live in db/migrations.", []string{"migrat", "live", "db/migrations", "db", "migrat"}},
		{`C:\src\app and ./cmd/forgemem/main.go`, []string{`c:\src\app`, "src", "app", "cmd/forgemem/main.go", "cmd", "forgemem", "main", "go"}},
		{"The user's dog doesn't bark", []string{"user", "dog", "bark"}},
		{"Bart’s party, 2023-12-25!", []string{"bart", "parti", "2023-12-25", "2023", "12", "25"}},
		{"__init__ --verbose -x", []string{"init", "verbos"}},
		{"parseJSON2 iOS", []string{"parsejson2", "pars", "json2", "ios", "os"}},
		{"Le café est fermé", []string{"le", "café", "est", "fermé"}},
		{"記憶を検索", []string{"記", "憶", "を", "検", "索"}},
		{"a I x , ... -- ''", nil},
	}
	for _, c := range cases {
		if got := AppendTerms(nil, c.text); !slices.Equal(got, c.want) {
			t.Errorf("AppendTerms(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

func FuzzAppendTerms(f *testing.F) {
	for _, s := range []string{"errors.As", "snake_case CamelCase", "db/migrations.", "don't 's", "HTTPServer",
		"記憶", "a..b", "'s'", "x_", "ÀÉ-ü", "\xff\xfe", "1.2.3", "@@", "-'-"} {
		f.Add(s, "other words")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		terms := AppendTerms(nil, a)
		for _, term := range terms {
			if term == "" {
				t.Fatalf("empty term from %q", a)
			}
			if strings.ToLower(term) != term {
				t.Fatalf("term %q of %q is not lower-case", term, a)
			}
			if n := utf8.RuneCountInString(term); n < 2 && !isIdeograph([]rune(term)[0]) {
				t.Fatalf("one-character term %q of %q", term, a)
			}
			if strings.ContainsFunc(term, func(r rune) bool { return !isWordRune(r) && !isIdeograph(r) && r != utf8.RuneError }) {
				t.Fatalf("term %q of %q holds a separator", term, a)
			}
		}
		// Tokenising is local: two texts joined by a space give the terms
		// of each, in order.
		joined := AppendTerms(nil, a+" "+b)
		if want := AppendTerms(slices.Clone(terms), b); !slices.Equal(joined, want) {
			t.Fatalf("terms of %q + %q = %q, want %q", a, b, joined, want)
		}
		// Every text with a term finds itself.
		if len(terms) > 0 {
			x := NewLex([]string{"a", "b"}, []*Doc{NewDoc(NewTokenizer(), b), NewDoc(NewTokenizer(), a)})
			hits := x.Search(NewQuery([]string{a}), 2)
			if len(hits) == 0 || !slices.ContainsFunc(hits, func(h Hit) bool { return h.Row == 1 }) {
				t.Fatalf("%q does not find itself: %v", a, hits)
			}
		}
	})
}

func TestBM25Scores(t *testing.T) {
	docs := []string{
		"optimistic locking with retry",
		"pessimistic locking for payments, locking rows",
		"table driven tests",
	}
	lex := make([]*Doc, len(docs))
	for i, d := range docs {
		lex[i] = NewDoc(NewTokenizer(), d)
	}
	x := NewLex([]string{"0", "1", "2"}, lex)
	// By hand: lengths 3, 5 and 3 terms (avg 11/3); "lock" is in 2 of 3
	// documents, "retri" in 1.
	idf := func(df float64) float64 { return math.Log(1 + (3-df+0.5)/(df+0.5)) }
	tfw := func(tf, dl float64) float64 {
		return tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*dl/(11.0/3)))
	}
	got := x.Search(NewQuery([]string{"locking retries"}), 3)
	want := []struct {
		row   int
		score float64
	}{
		{0, idf(2)*tfw(1, 3) + idf(1)*tfw(1, 3)},
		{1, idf(2) * tfw(2, 5)},
	}
	if len(got) != len(want) {
		t.Fatalf("search = %v, want rows %v", got, want)
	}
	for i, w := range want {
		if got[i].Row != w.row || math.Abs(float64(got[i].Score)-w.score) > 1e-5 {
			t.Errorf("Hit %d = row %d score %v, want row %d score %v", i, got[i].Row, got[i].Score, w.row, w.score)
		}
	}
	// A query's weights add up: the same word in two queries counts twice.
	twice := x.Search(NewQuery([]string{"retry", "retrying"}), 1)
	once := x.Search(NewQuery([]string{"retry"}), 1)
	if len(twice) != 1 || len(once) != 1 || math.Abs(float64(twice[0].Score-2*once[0].Score)) > 1e-5 {
		t.Errorf("two queries holding a word score %v, one %v; want twice", twice, once)
	}
	if hs := x.Search(NewQuery([]string{"the and of"}), 3); len(hs) != 0 {
		t.Errorf("a query of common words found %v", hs)
	}
}

func TestLexicalQueryWeights(t *testing.T) {
	q := NewQuery([]string{"errors.As", "check errors.As now", "we check the build"})
	got := map[string]float32{}
	for _, t := range q {
		got[t.term] = t.w
	}
	want := map[string]float32{"errors.as": 2, "error": 2, "check": 2, "now": 1, "build": 1}
	if !maps.Equal(got, want) {
		t.Errorf("weights = %v, want %v", got, want)
	}
}

func TestInformation(t *testing.T) {
	texts := []string{
		"kestrel nightly builds",
		"kestrel releases",
		"other words entirely",
		"nightly other",
	}
	tok := NewTokenizer()
	docs := make([]*Doc, len(texts))
	for i, s := range texts {
		docs[i] = NewDoc(tok, s)
	}
	x := NewLex([]string{"0", "1", "2", "3"}, docs)
	terms := x.Terms("kestrel builds tonight, nightly")
	if want := []string{"kestrel", "build", "nightli"}; !slices.Equal(terms, want) {
		t.Fatalf("Terms = %v, want %v (the terms some row holds, once each)", terms, want)
	}
	idf := func(df float64) float64 { return math.Log(1 + (4-df+0.5)/(df+0.5)) }
	tests := []struct {
		row     int
		want    float64
		matched int
	}{
		// kestrel (df 2), build (df 1), nightli (df 2)
		{0, idf(2) + idf(1) + idf(2), 3},
		{1, idf(2), 1},
		{2, 0, 0},
		{3, idf(2), 1},
	}
	for _, tt := range tests {
		got, m := x.Information(tt.row, terms, 0)
		if math.Abs(got-tt.want) > 1e-12 || m != tt.matched {
			t.Errorf("Information(row %d) = %v, %d; want %v, %d", tt.row, got, m, tt.want, tt.matched)
		}
	}
	if got, want := x.BestInformation(terms, 0), tests[0].want; math.Abs(got-want) > 1e-12 {
		t.Errorf("BestInformation = %v, want %v (row 0)", got, want)
	}
	if got := x.BestInformation(x.Terms("unrelated text"), 0); got != 0 {
		t.Errorf("BestInformation of nothing shared = %v, want 0", got)
	}
	// One row: counted as at least 100, a word it holds weighs what a word
	// one row of 100 holds.
	one := NewLex([]string{"a"}, []*Doc{NewDoc(tok, "user updates lock rows")})
	if got, m := one.Information(0, one.Terms("how do user updates lock rows"), 100); m != 4 || math.Abs(got-4*IDF(1, 100)) > 1e-12 {
		t.Errorf("Information over one row counted as 100 = %v, %d; want 4 terms of IDF(1, 100)", got, m)
	}
	if got, _ := one.Information(0, one.Terms("user"), 0); math.Abs(got-IDF(1, 1)) > 1e-12 {
		t.Errorf("Information over one row = %v, want IDF(1, 1)", got)
	}
	var empty *Lex
	if empty.DF("x") != 0 || NewLex(nil, nil).BestInformation([]string{"x"}, 100) != 0 {
		t.Error("an empty or nil index: DF or BestInformation not 0")
	}
}
