package memcore

import (
	"regexp/syntax"
	"strings"
	"testing"
)

// variants returns text as written and changed in the ways a prefilter
// could get wrong: other cases, the runes that fold to ASCII letters (ſ,
// the Kelvin sign), bytes that are not UTF-8, and text cut short.
func variants(text string) []string {
	return []string{
		text,
		strings.ToUpper(text),
		strings.ToLower(text),
		strings.ReplaceAll(strings.ReplaceAll(text, "s", "ſ"), "k", "\u212a"),
		strings.ReplaceAll(text, " ", "\xff "),
		"Never again. " + text,
		text[:len(text)/2],
		text[len(text)/2:],
	}
}

// checkAgrees fails t when the screen finds something else in text with
// its prefilters than with every expression tried.
func checkAgrees(t *testing.T, text string) {
	t.Helper()
	fast, full := newScreened(text), screened{text: text, all: true}
	if got, want := fast.instruction(), full.instruction(); got != want {
		t.Errorf("instruction rule on %q: %q with the prefilters, %q without", text, got, want)
	}
	if got, want := fast.toolOutput(), full.toolOutput(); got != want {
		t.Errorf("tool-output rule on %q: %q with the prefilters, %q without", text, got, want)
	}
}

// The prefilters change nothing the screen finds, on the screen's own cases
// and the instruction corpora, and on their variants.
func TestPrefilterAgrees(t *testing.T) {
	held := 0
	texts := instructionCorpusTexts(t)
	for _, tt := range screenCases {
		texts = append(texts, tt.text)
	}
	for _, text := range texts {
		for _, v := range variants(text) {
			checkAgrees(t, v)
		}
		if newScreened(text).instruction() != "" {
			held++
		}
	}
	// The cases hold some texts, so that the check compares findings, not
	// only empty results.
	if held < 10 {
		t.Errorf("the instruction rule holds %d of the cases, want at least 10", held)
	}
}

// FuzzPrefilterAgrees checks the prefilters on any text.
func FuzzPrefilterAgrees(f *testing.F) {
	for _, tt := range screenCases {
		f.Add(tt.text)
	}
	for _, text := range instructionCorpusTexts(f) {
		f.Add(text)
	}
	f.Add("PS C:\\Users\\me> go test ./...")
	f.Add("  at com.example.Main(Main.java:12)")
	f.Fuzz(func(t *testing.T, text string) { checkAgrees(t, text) })
}

// Every expression of the screen has a prefilter: one that needs nothing
// would scan every text again.
func TestEveryExpressionIsPrefiltered(t *testing.T) {
	for i, x := range screenExprs {
		if x.expr().need == nil {
			t.Errorf("expression %d (%s) has no prefilter", i, x.expr())
		}
	}
}

// A prefilter needs, of each path through an expression, the strings the
// path always matches, folded, joined where they follow each other.
func TestNeeded(t *testing.T) {
	tests := []struct{ expr, want string }{
		{`abc`, `"abc"`},
		{`(?i)\bSUDO\b`, `"sudo"`},
		{`\bcurl\s+-o\b`, `and("curl" "-o")`},
		{`curl|wget`, `or("curl" "wget")`},
		{`(?:https?|ftp)://`, `or("https://" "http://" "ftp://")`},
		// The parser's factoring of a common prefix is undone.
		{`(?i)check|consult`, `or("check" "consult")`},
		{`e-?mail`, `or("e-mail" "email")`},
		{`[Ss]udo`, `"sudo"`},
		{`a\s+token|b\s+pass`, `or(and("a" "token") and("b" "pass"))`},
		{`(?:ab)+c`, `and("ab" "c")`},
		// Past 16 strings the start factored out of an alternation is
		// joined to each branch again.
		{`s(?:ans\s+x|in\s+y)`, `or(and("sans" "x") and("sin" "y"))`},
		// A string that holds another of its set adds nothing.
		{`(?:ab){2,3}`, `"abab"`},
		{`無効に\s?`, `"無効に"`},
		// Past 16 strings, a join stops: the parts are needed apart.
		{`(?:x|y|z|w)(?:a|b|c|d)(?:e|f)`, `and(or("wa" "wb" "wc" "wd" "xa" "xb" "xc" "xd" "ya" "yb" "yc" "yd" "za" "zb" "zc" "zd") or("e" "f"))`},
		{`(?i)log\s*in|login`, `and("log" "in")`},
		{`exit\s+\d+`, `"exit"`},
		// A branch that needs nothing: the expression needs nothing.
		{`curl|\w+`, `anything`},
		{`(?:curl)?x*`, `anything`},
		{`[a-z]+`, `anything`},
		{`\b`, `anything`},
	}
	for _, tt := range tests {
		tree, err := syntax.Parse(tt.expr, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		if got := needed(tree.Simplify()).String(); got != tt.want {
			t.Errorf("needed(%s) = %s, want %s", tt.expr, got, tt.want)
		}
	}
}

// Folding maps each case of a letter to one, the Unicode runes that fold to
// ASCII letters among them.
func TestFoldString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Curl -O", "curl -o"},
		{"ſudo", "sudo"},
		{"\u212aey", "key"},
		{"ÉCOLE école", "École École"},
		{"a\xffb", "a\ufffdb"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := foldString(tt.in); got != tt.want {
			t.Errorf("foldString(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// BenchmarkScreen screens a memory text of a few hundred bytes that no rule
// holds, the common case, with the prefilters (fast) and with every
// expression tried (full), the screen without them.
func BenchmarkScreen(b *testing.B) {
	text := "Migrations live in db/migrations, one numbered file per change. The handlers use sqlc for queries, " +
		"wrap errors with %w and check them with errors.Is. Prefers table-driven tests and zerolog for logging; " +
		"the API docs are generated from the OpenAPI file in api/ with make generate."
	for _, c := range []struct {
		name string
		all  bool
	}{{"fast", false}, {"full", true}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				s := newScreened(text)
				s.all = c.all
				if s.instruction() != "" || s.toolOutput() != "" {
					b.Fatal("the benchmark's text is held")
				}
			}
		})
	}
}

// BenchmarkScreenPrepare prepares every expression of the screen from its
// source, as the first Screen of a process does (of a text no rule holds;
// the negations and the URL's verbs wait for a match that needs them): the
// cost of the first Screen over that of the next. It prepares the
// generated table's prefilters again each time, and looks each
// expression's up there.
func BenchmarkScreenPrepare(b *testing.B) {
	for b.Loop() {
		table := prepareTable(prefilterTable)
		for _, x := range screenExprs {
			newExpr(x.source(), table)
		}
	}
}
