package anchor

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCandidates(t *testing.T) {
	tests := []struct {
		text string
		want []string // quoted ones marked with a leading `
	}{
		{"Call `GetOrder` through internal/db/queries.go.", []string{"Call", "`GetOrder", "through", "internal/db/queries.go"}},
		{"see (queries.go:42), then db/migrations/.", []string{"see", "queries.go", "then", "db/migrations/"}},
		{"run `go test ./memcore/...` first", []string{"run", "go", "test", "./memcore", "first"}},
		{"use `errors.As()`; never `==` on errors", []string{"use", "`errors.As", "never", "`==", "on", "errors"}},
		{"```go\nfunc GetOrder() {}\n```", []string{"go", "func", "GetOrder"}},
		{"set --cadence-turns or `retrieval_top_k`", []string{"set", "cadence-turns", "or", "`retrieval_top_k"}},
		{"unclosed `span here", []string{"unclosed", "span", "here"}},
		{"twice: `X` and X", []string{"twice", "`X", "and"}},
		{"", nil},
	}
	for _, tt := range tests {
		var got []string
		for _, c := range candidates(tt.text) {
			if c.quoted {
				got = append(got, "`"+c.text)
			} else {
				got = append(got, c.text)
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("candidates(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestAsPath(t *testing.T) {
	tests := []struct {
		tok    string
		quoted bool
		want   string // "" when not a path
	}{
		{"internal/db/queries.go", false, "internal/db/queries.go"},
		{"./memcore", false, "memcore"},
		{"db/migrations/", false, "db/migrations"},
		{"go.mod", false, "go.mod"},
		{".gitignore", false, ".gitignore"},
		{"Makefile", true, "Makefile"},
		{"Makefile", false, ""},
		{"https://example.com/a", false, ""},
		{"/etc/passwd", false, ""},
		{"~/.forge/config.yaml", false, ""},
		{"../secrets.txt", false, ""},
		{"a/../../b", false, ""},
		{"*.go", false, ""},
		{"$HOME/x", false, ""},
		{"v1.2.3", false, ""},
		{"e.g", false, "e.g"}, // written like a file name: only a file of the tree makes it an anchor
	}
	for _, tt := range tests {
		got, ok := asPath(tt.tok, tt.quoted)
		if ok != (tt.want != "") || got != tt.want {
			t.Errorf("asPath(%q, %v) = %q, %v; want %q", tt.tok, tt.quoted, got, ok, tt.want)
		}
	}
}

func TestIdentOf(t *testing.T) {
	tests := []struct {
		tok    string
		quoted bool
		want   identKind
	}{
		{"GetOrder", false, distinctIdent},
		{"getOrder", false, distinctIdent},
		{"HTTPServer", false, distinctIdent},
		{"retrieval_top_k", false, distinctIdent},
		{"errors.As", false, distinctIdent},
		{"memory.retrieval_top_k", false, distinctIdent},
		{"cadence-turns", true, distinctIdent},
		{"cadence-turns", false, notIdent},
		{"Execute", false, notIdent},
		{"Execute", true, plainIdent},
		{"main", true, plainIdent},
		{"OK", false, notIdent},
		{"the", false, notIdent},
		{"_", true, plainIdent},
		{"1abc", true, notIdent},
		{"a..b", false, notIdent},
		{"x.", false, notIdent},
	}
	for _, tt := range tests {
		if got := identOf(tt.tok, tt.quoted); got != tt.want {
			t.Errorf("identOf(%q, %v) = %v, want %v", tt.tok, tt.quoted, got, tt.want)
		}
	}
}

// FuzzCandidates checks that extraction's tokenizer never panics, is
// deterministic, stays within its bounds and returns trimmed, distinct,
// valid UTF-8 tokens.
func FuzzCandidates(f *testing.F) {
	for _, s := range []string{
		"Call `GetOrder` through internal/db/queries.go.",
		"```\ncode `x` ``y``\n```",
		"a:1:2 b/... ((c)) `--flag` ` ` ``",
		strings.Repeat("`a` ", 300),
		"\xff\xfe `\xff`",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got := candidates(text)
		if again := candidates(text); !slices.Equal(got, again) {
			t.Fatalf("not deterministic: %v then %v", got, again)
		}
		if len(got) > maxCandidates {
			t.Fatalf("%d candidates, want at most %d", len(got), maxCandidates)
		}
		seen := map[string]bool{}
		for _, c := range got {
			if c.text == "" || !utf8.ValidString(c.text) || seen[c.text] || trimToken(c.text) != c.text {
				t.Fatalf("bad candidate %q in %v", c.text, got)
			}
			seen[c.text] = true
			if p, ok := asPath(c.text, c.quoted); ok && (strings.HasPrefix(p, "/") || p == ".." || strings.HasPrefix(p, "../")) {
				t.Fatalf("asPath(%q) = %q leaves the repository", c.text, p)
			}
		}
	})
}
