package redact

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// corpusCase is one line of a corpus file.
type corpusCase struct {
	line   int
	name   string
	text   string
	spans  [][2]int // the secrets of text, by byte offsets
	secret []string // the same secrets
}

// readCorpus reads a corpus file: one case a line, "#" comments and blank
// lines skipped. In a secret corpus (named), a line is "format | text" and
// «…» marks each secret; generators are expanded from a fixed seed.
func readCorpus(t testing.TB, path string, named bool) []corpusCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := rand.New(rand.NewPCG(7, 11))
	var out []corpusCase
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		c := corpusCase{line: n, name: line}
		if named {
			name, tmpl, ok := strings.Cut(line, " | ")
			if !ok {
				t.Fatalf("%s:%d: no \" | \" between format and text", path, n)
			}
			c.name = name
			line = tmpl
		}
		c.text = unescape(line)
		if named {
			c.text, c.spans = expandTemplate(t, c.text, r)
			if len(c.spans) == 0 {
				t.Fatalf("%s:%d: no «secret» marked", path, n)
			}
		}
		for _, sp := range c.spans {
			c.secret = append(c.secret, c.text[sp[0]:sp[1]])
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// unescape turns \n, \t and \\ into a line break, a tab and a backslash;
// other backslashes are kept.
func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case 'n':
				b.WriteByte('\n')
				i++
				continue
			case 't':
				b.WriteByte('\t')
				i++
				continue
			case '\\':
				b.WriteByte('\\')
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// alphabets of the generators.
var alphabets = map[string]string{
	"alnum":   alnum,
	"hex":     "0123456789abcdef",
	"HEX":     "0123456789ABCDEF",
	"upper":   upper,
	"lower":   "abcdefghijklmnopqrstuvwxyz",
	"letters": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
	"digits":  "0123456789",
	"b64":     b64,
	"b64url":  b64url,
	"age":     "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",
}

var generator = regexp.MustCompile(`\{(\w+)(?::(\d+))?\}`)

// expandTemplate expands the generators of s, removes the «» marks, and
// returns the text with the spans the marks enclosed.
func expandTemplate(t testing.TB, s string, r *rand.Rand) (string, [][2]int) {
	t.Helper()
	s = generator.ReplaceAllStringFunc(s, func(g string) string {
		m := generator.FindStringSubmatch(g)
		switch m[1] {
		case "uuid":
			return fmt.Sprintf("%s-%s-4%s-a%s-%s", genWith(r, "hex", 8), genWith(r, "hex", 4), genWith(r, "hex", 3), genWith(r, "hex", 3), genWith(r, "hex", 12))
		case "userpass64":
			return base64.StdEncoding.EncodeToString([]byte("deploy-bot:" + genWith(r, "alnum", 14)))
		}
		n, err := strconv.Atoi(m[2])
		if _, ok := alphabets[m[1]]; !ok || err != nil {
			t.Fatalf("bad generator %q", g)
		}
		return genWith(r, m[1], n)
	})
	var b strings.Builder
	var spans [][2]int
	start := -1
	for _, c := range s {
		switch c {
		case '«':
			start = b.Len()
		case '»':
			spans = append(spans, [2]int{start, b.Len()})
		default:
			b.WriteRune(c)
		}
	}
	return b.String(), spans
}

// genWith returns n characters of the named alphabet, with at least one
// digit, upper- and lower-case letter where the alphabet has them.
func genWith(r *rand.Rand, alphabet string, n int) string {
	a := alphabets[alphabet]
	out := make([]byte, n)
	for i := range out {
		out[i] = a[r.IntN(len(a))]
	}
	for i, class := range []string{"0123456789", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz"} {
		var in []byte
		for j := 0; j < len(class); j++ {
			if strings.IndexByte(a, class[j]) >= 0 {
				in = append(in, class[j])
			}
		}
		if len(in) > 0 && i < n {
			out[i] = in[r.IntN(len(in))]
		}
	}
	return string(out)
}

// TestSecretCorpus: every byte of every secret of testdata/secrets.txt lies
// inside a span Find reports, and Text agrees with Find.
func TestSecretCorpus(t *testing.T) {
	cases := readCorpus(t, "testdata/secrets.txt", true)
	formats := map[string]bool{}
	secrets := 0
	for _, c := range cases {
		formats[c.name] = true
		secrets += len(c.spans)
		t.Run(fmt.Sprintf("%d %s", c.line, c.name), func(t *testing.T) {
			ms := Find(c.text)
			for i, sp := range c.spans {
				for off := sp[0]; off < sp[1]; off++ {
					if !covered(ms, off) {
						out, _ := Text(c.text)
						t.Errorf("secret %q not wholly redacted (byte %d): %q", c.secret[i], off-sp[0], out)
						break
					}
				}
			}
			checkFind(t, c.text)
		})
	}
	t.Logf("secret corpus: %d cases, %d secrets, %d formats", len(cases), secrets, len(formats))
}

// TestCorpusFiguresDocumented: the figures memcore's README gives for the
// corpora are the corpora's: how many secrets in how many cases, how many
// rules found them, how many look-alikes.
func TestCorpusFiguresDocumented(t *testing.T) {
	cases := readCorpus(t, "testdata/secrets.txt", true)
	secrets := 0
	fired := map[string]bool{}
	for _, c := range cases {
		secrets += len(c.spans)
		for _, m := range Find(c.text) {
			fired[m.Rule] = true
		}
	}
	names := map[string]bool{}
	for _, r := range rules() {
		names[r.name] = true
	}
	if len(fired) != len(names) {
		t.Errorf("the secret corpus exercises %d of the %d rules", len(fired), len(names))
	}
	looks := readCorpus(t, "testdata/lookalikes.txt", false)
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		fmt.Sprintf("%d synthetic secrets in %d cases", secrets, len(cases)),
		fmt.Sprintf("%d rules", len(names)),
		fmt.Sprintf("%d look-alikes", len(looks)),
	} {
		if !strings.Contains(strings.Join(strings.Fields(string(readme)), " "), want) {
			t.Errorf("memcore/README.md does not say %q", want)
		}
	}
}

func covered(ms []Match, off int) bool {
	for _, m := range ms {
		if m.Start <= off && off < m.End {
			return true
		}
	}
	return false
}

// TestLookAlikeCorpus: nothing in testdata/lookalikes.txt is redacted.
func TestLookAlikeCorpus(t *testing.T) {
	cases := readCorpus(t, "testdata/lookalikes.txt", false)
	for _, c := range cases {
		t.Run(strconv.Itoa(c.line), func(t *testing.T) {
			if ms := Find(c.text); len(ms) != 0 {
				out, _ := Text(c.text)
				t.Errorf("false positive %v in %q: %q", ms, c.text, out)
			}
			checkFind(t, c.text)
		})
	}
	t.Logf("look-alike corpus: %d cases", len(cases))
}

// TestCorpusSummary prints the figures docs/RELIABILITY.md quotes: the
// formats and secrets of the secret corpus and how many of them are
// wholly redacted, and how many look-alikes are touched. Run it with
//
//	go test -run TestCorpusSummary -v ./memcore/redact
//
// TestSecretCorpus and TestLookAlikeCorpus fail on any miss; this test
// only counts.
func TestCorpusSummary(t *testing.T) {
	secrets := readCorpus(t, "testdata/secrets.txt", true)
	formats, missed := map[string]bool{}, map[string]bool{}
	n := 0
	for _, c := range secrets {
		formats[c.name] = true
		n += len(c.spans)
		ms := Find(c.text)
		for _, sp := range c.spans {
			for off := sp[0]; off < sp[1]; off++ {
				if !covered(ms, off) {
					missed[c.name] = true
					break
				}
			}
		}
	}
	looks := readCorpus(t, "testdata/lookalikes.txt", false)
	falsePositives := 0
	for _, c := range looks {
		if len(Find(c.text)) > 0 {
			falsePositives++
		}
	}
	t.Logf("secret corpus: %d formats, %d secrets in %d cases; formats not wholly redacted: %d", len(formats), n, len(secrets), len(missed))
	t.Logf("look-alike corpus: %d false positives in %d look-alikes", falsePositives, len(looks))
}
