package termtext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestWidth(t *testing.T) {
	const family = "\U0001F468\u200D\U0001F469\u200D\U0001F467" // one emoji of 5 runes
	tests := []struct {
		name, in string
		want     int
	}{
		{"empty", "", 0},
		{"ascii", "Prefers table-driven tests.", 27},
		{"CJK takes two columns", "漢字のテスト", 12},
		{"CJK mixed with ascii", "go test で確認", 14},
		{"hangul", "한국어", 6},
		{"combining accents take none", "e\u0301te\u0301", 3},
		{"emoji", "👍", 2},
		{"emoji sequence", family, 2},
		{"ambiguous width is narrow", "…±│", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Width(tt.in); got != tt.want {
				t.Errorf("Width(%q) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}

// Clip counts the columns a terminal gives text: two for an East Asian
// wide character or an emoji, none for a combining mark; it never cuts a
// character as displayed in two, and bounds text that takes no columns.
func TestClip(t *testing.T) {
	const family = "\U0001F468\u200D\U0001F469\u200D\U0001F467" // one emoji of 5 runes, 2 columns
	tests := []struct {
		name, in string
		n        int
		want     string
	}{
		{"empty", "", 10, ""},
		{"ascii that fits", "Prefers table-driven tests.", 30, "Prefers table-driven tests."},
		{"ascii exactly", "abcdefghij", 10, "abcdefghij"},
		{"ascii cut", "abcdefghijk", 10, "abcdefghi…"},
		{"CJK that fits", "漢字のテスト", 12, "漢字のテスト"},
		{"CJK cut", "漢字のテストです", 11, "漢字のテス…"},
		{"CJK never cut in two", "漢字のテストです", 12, "漢字のテス…"},
		{"CJK mixed with ascii", "go test で確認する", 12, "go test で…"},
		{"CJK that a cut would split", "ab漢字", 4, "ab…"},
		{"combining accents take no column", strings.Repeat("e\u0301", 10), 10, strings.Repeat("e\u0301", 10)},
		{"combining accents cut with their letter", strings.Repeat("e\u0301", 11), 10, strings.Repeat("e\u0301", 9) + "…"},
		{"emoji", strings.Repeat("👍", 6), 10, strings.Repeat("👍", 4) + "…"},
		{"emoji sequences kept whole", strings.Repeat(family, 6), 10, strings.Repeat(family, 4) + "…"},
		{"flags", strings.Repeat("\U0001F1EB\U0001F1F7", 5), 10, strings.Repeat("\U0001F1EB\U0001F1F7", 5)},
		{"ambiguous width is narrow", strings.Repeat("±", 10), 10, strings.Repeat("±", 10)},
		{"characters of no width are bounded", "a" + strings.Repeat("\u0301", 1000), 10, "a" + strings.Repeat("\u0301", 10*clipRunesPerColumn-2) + "…"},
		{"characters of no width up to the bound", "a" + strings.Repeat("\u0301", 10*clipRunesPerColumn-1), 10, "a" + strings.Repeat("\u0301", 10*clipRunesPerColumn-1)},
		{"one column holds only the ellipsis", "abc", 1, "…"},
		{"one column, CJK", "漢字", 1, "…"},
		{"one column that fits", "a", 1, "a"},
		{"two columns, a wide character that fits", "漢", 2, "漢"},
		{"no column", "abc", 0, ""},
		{"no column, empty", "", 0, ""},
		{"fewer than none", "abc", -3, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Clip(tt.in, tt.n)
			if got != tt.want {
				t.Errorf("Clip(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
			}
			if w := Width(got); w > max(tt.n, 0) {
				t.Errorf("Clip(%q, %d) is %d columns wide", tt.in, tt.n, w)
			}
			if utf8.RuneCountInString(got) > max(tt.n, 0)*clipRunesPerColumn {
				t.Errorf("Clip(%q, %d) keeps %d runes", tt.in, tt.n, utf8.RuneCountInString(got))
			}
		})
	}
}
