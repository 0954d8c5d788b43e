package memcore

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// frontMatterOf returns the YAML block of a memory file in canonical form,
// as parse hands it to parseFast.
func frontMatterOf(t testing.TB, raw []byte) string {
	t.Helper()
	s := strings.TrimPrefix(string(raw), "---\n")
	block, _, ok := splitFrontMatter(s)
	if !ok {
		t.Fatalf("no front matter in %q", raw)
	}
	return block
}

// TestParseFastTakesCanonicalFiles: what Serialize writes for memories
// without Extra keys takes the fast path — otherwise the fast path would
// speed nothing up.
func TestParseFastTakesCanonicalFiles(t *testing.T) {
	plain := sample(NewMemoryID())
	quoted := sample(NewMemoryID())
	quoted.Meta.SessionID = "12345"
	minimal := sample(NewMemoryID())
	minimal.Meta.UpdatedAt, minimal.Meta.SessionID, minimal.Meta.Trigger = minimal.Meta.CreatedAt.AddDate(0, 0, 0), "", ""
	withEdges := full()
	withEdges.Meta.Extra = nil
	// A captured memory: its source, the evidence quoted from the
	// conversation and the anchors of the code it names.
	captured := sample(NewMemoryID())
	captured.Meta.Source = SourceUser
	captured.Meta.Evidence = &Evidence{Quote: "we'll keep the queries in internal/db, reviewed by two people", At: t0}
	captured.Meta.Anchors = []Anchor{{Path: "internal/db/queries.go", Blob: "3b18e512dba79e4c8300dd08aeb37f8e728b8dad",
		Commit: "9ced975b1c0c1f3e8d43a5a7b4a6d0f00e4d1c2a"}, {Path: "internal/db", Symbol: "GetOrder"}, {Symbol: "db.max_conns"}}
	pending := sample(NewMemoryID())
	pending.Meta.Source, pending.Meta.Status, pending.Meta.StatusReason = SourceAssistant, StatusPending, "not stated by the user"
	for name, m := range map[string]*MemoryFile{"plain": plain, "quoted session": quoted, "minimal": minimal,
		"edges and supersedes": withEdges, "captured": captured, "pending": pending} {
		t.Run(name, func(t *testing.T) {
			block := frontMatterOf(t, mustSerialize(t, m))
			got, ok := parseFast(block)
			if !ok {
				t.Fatalf("parseFast refused canonical front matter:\n%s", block)
			}
			want := m.Clone()
			want.normalize()
			if !equalMemory(&MemoryFile{Meta: got, Content: want.Content}, want) {
				t.Errorf("parseFast = %#v, want %#v", got, want.Meta)
			}
		})
	}
}

// TestParseFastRefuses: anything outside the simple form is left to the YAML
// decoder, never decided by the fast path.
func TestParseFastRefuses(t *testing.T) {
	id := "mem_1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b"
	base := "id: " + id + "\ncreated_at: 2025-01-15T10:30:00Z\nversion: 1\nscope: repo\ncategory: patterns\n"
	cases := map[string]string{
		"unknown key":              base + "reviewed_by: alice\n",
		"repeated key":             base + "scope: user\n",
		"comment":                  base + "trigger: cadence # why\n",
		"blank line":               base + "\ntrigger: cadence\n",
		"quoted enum":              strings.Replace(base, "scope: repo", `scope: "repo"`, 1),
		"unknown enum":             strings.Replace(base, "scope: repo", "scope: global", 1),
		"offset time":              strings.Replace(base, "10:30:00Z", "10:30:00+02:00", 1),
		"date only":                strings.Replace(base, "2025-01-15T10:30:00Z", "2025-01-15", 1),
		"version with zero":        strings.Replace(base, "version: 1", "version: 01", 1),
		"float version":            strings.Replace(base, "version: 1", "version: 1.0", 1),
		"numeric session":          base + "session_id: 123\n",
		"float session":            base + "session_id: 1e5\n",
		"hex session":              base + "session_id: 0x1F\n",
		"bool session":             base + "session_id: yes\n",
		"null session":             base + "session_id: null\n",
		"inf session":              base + "session_id: .inf\n",
		"escaped session":          base + `session_id: "a\tb"` + "\n",
		"flow related":             base + "related: [{id: " + id + ", relationship: refines}]\n",
		"related other order":      base + "related:\n  - relationship: refines\n    id: " + id + "\n",
		"empty related":            base + "related:\n",
		"supersedes null":          base + "supersedes: null\n",
		"no space after colon":     base + "trigger:cadence\n",
		"trailing space":           base + "trigger: cadence \n",
		"crlf":                     strings.ReplaceAll(base, "\n", "\r\n"),
		"missing final newline":    strings.TrimSuffix(base, "\n"),
		"indented key":             base + " trigger: cadence\n",
		"anchor":                   base + "trigger: &t cadence\n",
		"empty":                    "",
		"invalid id":               strings.Replace(base, id, "mem_x", 1),
		"upper-case id":            strings.Replace(base, id, strings.ToUpper(id), 1),
		"related bad relationship": base + "related:\n  - id: " + id + "\n    relationship: supersedes-ish\n",
	}
	for name, block := range cases {
		if _, ok := parseFast(block); ok {
			t.Errorf("%s: parseFast accepted %q; it must leave it to the YAML decoder", name, block)
		}
	}
}

// FuzzParseFastAgrees: whenever the fast path accepts a block, the YAML
// decoder accepts it too and gives the same metadata.
func FuzzParseFastAgrees(f *testing.F) {
	for _, in := range formatInputs(f) {
		raw, err := os.ReadFile(strings.TrimSuffix(in, ".md") + ".golden")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(frontMatterOf(f, raw))
	}
	f.Add("id: mem_1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b\ncreated_at: 2025-01-15T10:30:00.5Z\nversion: 3\nscope: user\ncategory: corrections\nsession_id: 3f2a9c1e-0b4d\n")
	f.Add("session_id: \"0x1F\"\n")
	f.Add("session_id: a_1\n")
	f.Add("retired: true\nretired_reason: stale\n")
	f.Add("retired: false\n")
	f.Add("source: user\nevidence:\n  quote: don't use tabs, ever (really)\n  at: 2025-01-15T10:30:00Z\n")
	f.Add("status: pending\nstatus_reason: not stated by the user\n")
	f.Add("rejection_reason: copied from a web page\n")
	f.Add("anchors:\n  - path: a/b.go\n    symbol: F\n    blob: \"0123\"\n  - symbol: x.y\n")
	f.Add("evidence:\n  quote: yes\n")
	f.Add("evidence:\n  quote: 12 monkeys, 3 (a)\n")
	f.Fuzz(func(t *testing.T, block string) {
		fast, ok := parseFast(block)
		if !ok {
			return
		}
		slow, err := decodeFrontMatter(block, 1)
		if err != nil {
			t.Fatalf("parseFast accepted what the YAML decoder refuses (%v):\n%q", err, block)
		}
		if len(slow.Related) == 0 {
			slow.Related = nil
		}
		slow.CreatedAt, slow.UpdatedAt = slow.CreatedAt.UTC(), slow.UpdatedAt.UTC()
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("parseFast and the YAML decoder disagree on %q\nfast: %#v\nyaml: %#v", block, fast, slow)
		}
	})
}
