package memcore

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
)

// instructionCase is one line of an instruction corpus file.
type instructionCase struct {
	line int
	lang string
	kind string // in the held corpus: the kind of instruction (instructionKinds)
	text string
}

// instructionKinds are what the instruction rule says it found, by the kind
// a line of testdata/instruction/held.txt names.
var instructionKinds = map[string]string{
	"agent":  "addresses the agent reading it",
	"check":  "tells the agent to turn off a check",
	"send":   "tells the agent to send data somewhere",
	"review": "tells the agent to bypass review",
}

// instructionLanguages are the languages the corpora cover: those of
// urlVerbIntlRE.
var instructionLanguages = []string{"de", "fr", "es", "pt", "it", "nl", "ru", "zh", "ja", "ko"}

// Each language has at least this many planted instructions and look-alikes.
const minHeldPerLanguage, minLookAlikesPerLanguage = 4, 6

// readInstructionCorpus reads testdata/instruction/name: one case a line,
// "language kind | text" (held) or "language | text" (look-alikes), "#"
// comments and blank lines skipped.
func readInstructionCorpus(t testing.TB, name string) []instructionCase {
	t.Helper()
	path := "testdata/instruction/" + name
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []instructionCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		head, text, ok := strings.Cut(line, " | ")
		if !ok || strings.TrimSpace(text) == "" {
			t.Fatalf("%s:%d: no \" | \" between language and text", path, n)
		}
		c := instructionCase{line: n, text: text}
		c.lang, c.kind, _ = strings.Cut(head, " ")
		if _, known := instructionKinds[c.kind]; c.kind != "" && !known {
			t.Fatalf("%s:%d: unknown kind %q", path, n, c.kind)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// instructionCorpusTexts returns the texts of both corpora, for the
// prefilter's checks.
func instructionCorpusTexts(t testing.TB) []string {
	var out []string
	for _, name := range []string{"held.txt", "lookalikes.txt"} {
		for _, c := range readInstructionCorpus(t, name) {
			out = append(out, c.text)
		}
	}
	return out
}

// The instruction rule holds the planted instructions of each language, in
// every review mode and for what they are, and none of the ordinary
// memories written with the same words.
func TestInstructionCorpus(t *testing.T) {
	held := readInstructionCorpus(t, "held.txt")
	looks := readInstructionCorpus(t, "lookalikes.txt")
	heldBy, looksBy := map[string]int{}, map[string]int{}
	for _, c := range held {
		if c.kind == "" {
			t.Errorf("held.txt:%d: no kind", c.line)
		}
		heldBy[c.lang]++
		want := RuleInstruction + ": " + instructionKinds[c.kind]
		for _, mode := range ReviewModes() {
			m := sample(idA)
			m.Content, m.Meta.Source = c.text, SourceUser
			if got := Screen(m, mode); got != want {
				t.Errorf("held.txt:%d: Screen(%q, %s) = %q, want %q", c.line, c.text, mode, got, want)
			}
		}
	}
	for _, c := range looks {
		looksBy[c.lang]++
		if got := newScreened(c.text).instruction(); got != "" {
			t.Errorf("lookalikes.txt:%d: %q is held: %s", c.line, c.text, got)
		}
	}
	for _, lang := range instructionLanguages {
		if heldBy[lang] < minHeldPerLanguage || looksBy[lang] < minLookAlikesPerLanguage {
			t.Errorf("language %s: %d planted instructions and %d look-alikes, want at least %d and %d",
				lang, heldBy[lang], looksBy[lang], minHeldPerLanguage, minLookAlikesPerLanguage)
		}
		delete(heldBy, lang)
		delete(looksBy, lang)
	}
	for lang := range heldBy {
		t.Errorf("held.txt: unknown language %q", lang)
	}
	for lang := range looksBy {
		t.Errorf("lookalikes.txt: unknown language %q", lang)
	}
	t.Logf("instruction corpus: %d planted instructions and %d look-alikes in %d languages", len(held), len(looks), len(instructionLanguages))
}

// The figures memcore's README gives for the corpora are the corpora's.
func TestInstructionCorpusFiguresDocumented(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(readme)), " ")
	for _, want := range []string{
		fmt.Sprintf("`held.txt` holds %d planted instructions", len(readInstructionCorpus(t, "held.txt"))),
		fmt.Sprintf("`lookalikes.txt` %d ordinary memories", len(readInstructionCorpus(t, "lookalikes.txt"))),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("memcore/README.md does not say %q", want)
		}
	}
}
