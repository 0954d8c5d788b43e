package memretrieve

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseHypotheses(t *testing.T) {
	tests := []struct {
		name  string
		reply string
		n     int
		want  []string
	}{
		{"object", `{"hypotheses": ["Prefers tabs.", "Uses zerolog."]}`, 5, []string{"Prefers tabs.", "Uses zerolog."}},
		{"capitalised key", `{"Hypotheses": ["Prefers tabs."]}`, 5, []string{"Prefers tabs."}},
		{"bare array", `["Prefers tabs.", "Uses zerolog."]`, 5, []string{"Prefers tabs.", "Uses zerolog."}},
		{"fenced", "```json\n{\"hypotheses\": [\"Prefers tabs.\"]}\n```", 5, []string{"Prefers tabs."}},
		{"fence without info string", "```\n[\"Prefers tabs.\"]\n```", 5, []string{"Prefers tabs."}},
		{"prose around", "Sure! Here you go:\n{\"hypotheses\": [\"Prefers tabs.\"]}\nHope this helps.", 5, []string{"Prefers tabs."}},
		{"other key", `{"sentences": ["Prefers tabs.", "Uses zerolog."]}`, 5, []string{"Prefers tabs.", "Uses zerolog."}},
		{"objects in array", `[{"text": "Prefers tabs."}, {"hypothesis": "Uses zerolog."}, {"x": "Runs gofmt."}]`, 5,
			[]string{"Prefers tabs.", "Uses zerolog.", "Runs gofmt."}},
		{"object of strings", `{"h1": "Prefers tabs.", "h2": "Uses zerolog."}`, 5, []string{"Prefers tabs.", "Uses zerolog."}},
		{"explicit empty", `{"hypotheses": []}`, 5, []string{}},
		{"cut short", `{"hypotheses": ["Prefers tabs.", "Uses zerolog.", "Chose optimis`, 5, []string{"Prefers tabs.", "Uses zerolog."}},
		{"cut short with escapes", `["Says \"hi\" first.", "Uses \u00e9t\u00e9`, 5, []string{`Says "hi" first.`}},
		{"bullets", "Here are the hypotheses:\n- Prefers tabs.\n* Uses zerolog.\n• Runs gofmt.\n", 5,
			[]string{"Prefers tabs.", "Uses zerolog.", "Runs gofmt."}},
		{"numbered", "1. Prefers tabs.\n2) Uses zerolog.\n(3) Runs gofmt.\nHypothesis 4: Avoids globals.", 5,
			[]string{"Prefers tabs.", "Uses zerolog.", "Runs gofmt.", "Avoids globals."}},
		{"quoted lines", "\"Prefers tabs.\",\n\"Uses zerolog.\"", 5, []string{"Prefers tabs.", "Uses zerolog."}},
		{"stray bracket in prose", "Here are [3] ideas:\n1. Prefers tabs.\n2. Uses zerolog.", 5, []string{"Prefers tabs.", "Uses zerolog."}},
		{"at most n", `["a one.", "b two.", "c three.", "d four."]`, 2, []string{"a one.", "b two."}},
		{"duplicates and blanks", `["Prefers tabs.", "  prefers   TABS. ", "", "  ", "---", "Uses zerolog."]`, 5,
			[]string{"Prefers tabs.", "Uses zerolog."}},
		{"multi-line item", `["Prefers\ntabs\tover spaces."]`, 5, []string{"Prefers tabs over spaces."}},
		{"empty", "", 5, []string{}},
		{"only punctuation", "{}\n[]\n---", 5, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parseHypotheses(tt.reply, tt.n)
			if !slices.Equal(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
				t.Errorf("parseHypotheses(%q) = %q, want %q", tt.reply, got, tt.want)
			}
		})
	}
}

func TestParseHypothesesCutsLongOnes(t *testing.T) {
	got := parseHypotheses(`["`+strings.Repeat("é", 2*maxHypothesisRunes)+`"]`, 1)
	if len(got) != 1 || utf8.RuneCountInString(got[0]) != maxHypothesisRunes {
		t.Fatalf("got %d hypotheses, the first of %d runes; want 1 of %d", len(got), utf8.RuneCountInString(got[0]), maxHypothesisRunes)
	}
}

func FuzzParseHypotheses(f *testing.F) {
	for _, s := range []string{
		`{"hypotheses": ["a b.", "c d."]}`, "```json\n[\"x\"]\n```", "1. one\n2. two", `{"hypotheses": ["cut`,
		`[{"text": 1}, "a"]`, "\xff\xfe", `{"a": {"b": ["c"]}}`, "- \n* \n", `"\u0000"`,
	} {
		f.Add(s, 5)
	}
	f.Fuzz(func(t *testing.T, reply string, n int) {
		n = 1 + int(uint(n)%10)
		got := parseHypotheses(reply, n)
		if len(got) > n {
			t.Fatalf("%d hypotheses, want at most %d", len(got), n)
		}
		seen := make(map[string]bool)
		for _, h := range got {
			if strings.TrimSpace(h) != h || h == "" || strings.ContainsAny(h, "\n\r\t") || !utf8.ValidString(h) {
				t.Fatalf("hypothesis %q is not one trimmed valid line", h)
			}
			if utf8.RuneCountInString(h) > maxHypothesisRunes {
				t.Fatalf("hypothesis of %d runes", utf8.RuneCountInString(h))
			}
			if seen[strings.ToLower(h)] {
				t.Fatalf("duplicate hypothesis %q", h)
			}
			seen[strings.ToLower(h)] = true
		}
	})
}
