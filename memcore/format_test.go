package memcore

import (
	"bytes"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ and prefilter_table.go")

// formatInputs returns the hand-edited memory files of testdata/format.
func formatInputs(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "format", "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no inputs in testdata/format: %v", err)
	}
	return files
}

// TestParseGolden parses every hand-edited variant under testdata/format and
// compares its canonical Serialize output with the .golden file beside it.
// go test -run TestParseGolden -update rewrites the goldens.
func TestParseGolden(t *testing.T) {
	for _, in := range formatInputs(t) {
		name := strings.TrimSuffix(filepath.Base(in), ".md")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			m, err := Parse(raw)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			got, err := Serialize(m)
			if err != nil {
				t.Fatalf("Serialize: %v", err)
			}
			golden := strings.TrimSuffix(in, ".md") + ".golden"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("Serialize(Parse(%s)) differs from %s\n--- got ---\n%s\n--- want ---\n%s", in, golden, got, want)
			}
			// The canonical form is a fixed point and means the same memory.
			m2, err := Parse(want)
			if err != nil {
				t.Fatalf("Parse(golden): %v", err)
			}
			if !equalMemory(m, m2) {
				t.Errorf("Parse(golden) = %+v, want %+v", m2, m)
			}
			if again := mustSerialize(t, m2); !bytes.Equal(again, want) {
				t.Errorf("Serialize(Parse(golden)) is not the golden:\n%s", again)
			}
		})
	}
}

// TestParseHandEdits checks what the golden files cannot show by
// themselves: the decoded values of the hand-edited variants.
func TestParseHandEdits(t *testing.T) {
	canonical, err := os.ReadFile(filepath.Join("testdata", "format", "canonical.md"))
	if err != nil {
		t.Fatal(err)
	}
	base, err := Parse(canonical)
	if err != nil {
		t.Fatal(err)
	}
	if got := mustSerialize(t, base); !bytes.Equal(got, canonical) {
		t.Errorf("a canonical file is not reproduced byte for byte:\n%s", got)
	}
	const body = "Prefers optimistic locking with retry for concurrent writes (changed from\npessimistic locking after a performance issue)."
	tests := []struct {
		file  string
		check func(t *testing.T, m *MemoryFile)
	}{
		{"bom.md", func(t *testing.T, m *MemoryFile) { sameAs(t, m, base) }},
		{"no_trailing_newline.md", func(t *testing.T, m *MemoryFile) { sameAs(t, m, base) }},
		{"dots_closing.md", func(t *testing.T, m *MemoryFile) { sameAs(t, m, base) }},
		{"delimiter_spaces.md", func(t *testing.T, m *MemoryFile) { sameAs(t, m, base) }},
		{"crlf.md", func(t *testing.T, m *MemoryFile) {
			if strings.Contains(m.Content, "\r") || strings.Contains(m.Meta.SessionID, "\r") {
				t.Errorf("CR left in %q / %q", m.Content, m.Meta.SessionID)
			}
			if want := body + "\n\n- keep CRLF out of the body"; m.Content != want {
				t.Errorf("Content = %q, want %q", m.Content, want)
			}
		}},
		{"blank_lines.md", func(t *testing.T, m *MemoryFile) {
			// One separator line and one final newline are format; the rest is content.
			if want := "\n\n" + body + "\n\n\n"; m.Content != want {
				t.Errorf("Content = %q, want %q", m.Content, want)
			}
		}},
		{"body_dashes.md", func(t *testing.T, m *MemoryFile) {
			if want := "Intro line.\n\n---\n\nA section after a rule.\n...\n--- \nTrailer."; m.Content != want {
				t.Errorf("Content = %q, want %q", m.Content, want)
			}
			if m.Meta.ID != idA || m.Meta.Version != 2 {
				t.Errorf("front matter = %+v", m.Meta)
			}
		}},
		{"supersedes_null.md", func(t *testing.T, m *MemoryFile) {
			if m.Meta.Supersedes != nil || m.Meta.Related != nil || !m.Meta.UpdatedAt.IsZero() {
				t.Errorf("Supersedes = %v, Related = %#v, UpdatedAt = %v; want nil, nil, zero", m.Meta.Supersedes, m.Meta.Related, m.Meta.UpdatedAt)
			}
			if m.Meta.Trigger != TriggerManual {
				t.Errorf("Trigger = %q", m.Meta.Trigger)
			}
		}},
		{"empty_supersedes.md", func(t *testing.T, m *MemoryFile) {
			if m.Meta.Supersedes != nil || m.Meta.SessionID != "" {
				t.Errorf("Supersedes = %v, SessionID = %q", m.Meta.Supersedes, m.Meta.SessionID)
			}
		}},
		{"date_only.md", func(t *testing.T, m *MemoryFile) {
			if want := time.Date(2025, 1, 15, 0, 0, 0, 0, time.UTC); m.Meta.CreatedAt != want {
				t.Errorf("CreatedAt = %v, want %v", m.Meta.CreatedAt, want)
			}
			if want := time.Date(2025, 1, 16, 7, 0, 0, 0, time.UTC); m.Meta.UpdatedAt != want {
				t.Errorf("UpdatedAt = %v, want %v (in UTC)", m.Meta.UpdatedAt, want)
			}
		}},
		{"extra_keys.md", func(t *testing.T, m *MemoryFile) {
			want := map[string]any{
				"reviewed": true, "priority": 3, "weight": 1.0, "ratio": 0.25,
				"owner": "Ada Lovelace", "nothing": nil,
				"tags": []any{"go", "concurrency", 42},
				"origin": map[string]any{
					"tool": "editor", "lines": []any{3, 7},
					"nested": map[string]any{"deep": "yes-really"},
				},
				"reviewed_on": time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC),
			}
			if !equalValue(m.Meta.Extra, want) {
				t.Errorf("Extra = %#v\nwant    %#v", m.Meta.Extra, want)
			}
			sameAs(t, &MemoryFile{Meta: withoutExtra(m.Meta), Content: m.Content}, base)
		}},
		{"all_fields.md", func(t *testing.T, m *MemoryFile) {
			p := idB
			want := MemoryMeta{
				ID: idA, Version: 3, Scope: ScopeRepo, Category: CategoryArchitecturalDecisions,
				CreatedAt:  time.Date(2025, 3, 1, 8, 15, 30, 123456789, time.UTC),
				UpdatedAt:  time.Date(2025, 3, 1, 8, 15, 30, 123456789, time.UTC),
				Supersedes: &p, SessionID: "sess-42 ünïcödé", Trigger: TriggerCompaction,
				Related: []RelatedMemory{{idC, RelationshipRefines}, {idD, RelationshipContradicts}},
			}
			sameAs(t, m, &MemoryFile{Meta: want, Content: "# Event bus\n\nWe publish domain events through an outbox table; see ADR-0012."})
		}},
		{"crlf_bom_dots_no_newline.md", func(t *testing.T, m *MemoryFile) {
			if want := "Ünïcödé body ✓ — 日本語\n\nlast line"; m.Content != want {
				t.Errorf("Content = %q, want %q", m.Content, want)
			}
			sameAs(t, &MemoryFile{Meta: m.Meta, Content: base.Content}, base)
		}},
		{"unicode.md", func(t *testing.T, m *MemoryFile) {
			if m.Meta.SessionID != "セッション-🚀" || !strings.HasPrefix(m.Content, "名前は「太郎」です。") {
				t.Errorf("SessionID = %q, Content = %q", m.Meta.SessionID, m.Content)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "format", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			m, err := Parse(raw)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			tt.check(t, m)
		})
	}
}

func sameAs(t *testing.T, got, want *MemoryFile) {
	t.Helper()
	if !equalMemory(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func withoutExtra(m MemoryMeta) MemoryMeta {
	m.Extra = nil
	return m
}

// front builds a memory file from front-matter lines and a body.
func front(lines ...string) string {
	return "---\n" + strings.Join(lines, "\n") + "\n---\n\nBody text.\n"
}

// validLines are the front-matter lines of a valid memory; tests replace
// one of them.
func validLines(replace map[string]string) []string {
	keys := []string{"id", "created_at", "version", "scope", "category"}
	vals := map[string]string{
		"id": idA, "created_at": "2025-01-15T10:30:00Z", "version": "1", "scope": "repo", "category": "patterns",
	}
	var out []string
	for _, k := range keys {
		v, ok := replace[k]
		if !ok {
			v = vals[k]
		}
		if v != "-" { // "-" drops the key
			out = append(out, k+": "+v)
		}
	}
	for k, v := range replace {
		if _, known := vals[k]; !known {
			out = append(out, k+": "+v)
		}
	}
	return out
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		want  []error // every one must match with errors.Is
		field string  // the message must name it
	}{
		{"empty file", "", []error{ErrMalformed}, "front matter"},
		{"only a BOM", bom, []error{ErrMalformed}, "front matter"},
		{"only blank lines", "\n\n  \n", []error{ErrMalformed}, "front matter"},
		{"missing opening line", "id: " + idA + "\n---\nbody\n", []error{ErrMalformed}, "front matter missing"},
		{"opening line with text", "--- id: x\nversion: 1\n---\nbody\n", []error{ErrMalformed}, "front matter missing"},
		{"body only", "Just some notes.\n", []error{ErrMalformed}, "front matter missing"},
		{"opening line only", "---", []error{ErrMalformed}, "not closed"},
		{"unclosed front matter", "---\nid: " + idA + "\nversion: 1\nbody without a closing line\n", []error{ErrMalformed}, "not closed"},
		{"unclosed, indented closing line", "---\nid: " + idA + "\n  ---\nbody\n", []error{ErrMalformed}, "not closed"},
		{"empty front matter", "---\n---\nbody\n", []error{ErrMalformed}, "empty"},
		{"blank front matter", "---\n \n\t\n---\nbody\n", []error{ErrMalformed}, "empty"},
		{"comment-only front matter", "---\n# nothing here\n---\nbody\n", []error{ErrMalformed}, "empty"},
		{"bad YAML", front(append(validLines(nil), "a: b: c")...), []error{ErrMalformed}, "line 7"},
		{"bad YAML indentation", "---\nid: " + idA + "\n  version: 1\n---\nbody\n", []error{ErrMalformed}, "front matter"},
		{"front matter is a list", "---\n- id\n- version\n---\nbody\n", []error{ErrMalformed}, "front matter"},
		{"front matter is a scalar", "---\nhello\n---\nbody\n", []error{ErrMalformed}, "front matter"},
		{"version: abc", front(validLines(map[string]string{"version": "abc"})...), []error{ErrMalformed}, "version"},
		{"version: 1.5", front(validLines(map[string]string{"version": "1.5"})...), []error{ErrMalformed}, "version"},
		{"created_at not a time", front(validLines(map[string]string{"created_at": "yesterday"})...), []error{ErrMalformed}, "created_at"},
		{"scope is a list", front(validLines(map[string]string{"scope": "[repo]"})...), []error{ErrMalformed}, "scope"},
		{"related is a number", front(validLines(map[string]string{"related": "5"})...), []error{ErrMalformed}, "related"},
		{"supersedes is a map", front(validLines(map[string]string{"supersedes": "{a: b}"})...), []error{ErrMalformed}, "supersedes"},
		{"duplicate key", front(append(validLines(nil), "id: "+idB)...), []error{ErrMalformed}, `"id" already defined`},
		{"invalid UTF-8 in front matter", front(append(validLines(nil), "note: \xff\xfe")...), []error{ErrMalformed}, "front matter"},
		{"bad id", front(validLines(map[string]string{"id": "mem_nope"})...), []error{ErrInvalidMemory, ErrInvalidID}, "id"},
		{"path traversal id", front(validLines(map[string]string{"id": "../../etc/passwd"})...), []error{ErrInvalidMemory, ErrInvalidID}, "id"},
		{"missing id", front(validLines(map[string]string{"id": "-"})...), []error{ErrInvalidMemory, ErrInvalidID}, "id"},
		{"missing created_at", front(validLines(map[string]string{"created_at": "-"})...), []error{ErrInvalidMemory}, "created_at"},
		{"version 0", front(validLines(map[string]string{"version": "0"})...), []error{ErrInvalidMemory}, "version"},
		{"negative version", front(validLines(map[string]string{"version": "-3"})...), []error{ErrInvalidMemory}, "version"},
		{"missing version", front(validLines(map[string]string{"version": "-"})...), []error{ErrInvalidMemory}, "version"},
		{"unknown scope", front(validLines(map[string]string{"scope": "team"})...), []error{ErrInvalidMemory}, "scope"},
		{"missing scope", front(validLines(map[string]string{"scope": "-"})...), []error{ErrInvalidMemory}, "scope"},
		{"unknown category", front(validLines(map[string]string{"category": "gossip"})...), []error{ErrInvalidMemory}, "category"},
		{"upper-case category", front(validLines(map[string]string{"category": "Patterns"})...), []error{ErrInvalidMemory}, "category"},
		{"unknown trigger", front(validLines(map[string]string{"trigger": "turn"})...), []error{ErrInvalidMemory}, "trigger"},
		{"bad supersedes id", front(validLines(map[string]string{"supersedes": "mem_x"})...), []error{ErrInvalidMemory, ErrInvalidID}, "supersedes"},
		{"self-supersede", front(validLines(map[string]string{"supersedes": idA})...), []error{ErrInvalidMemory}, "supersedes"},
		{"unknown relationship", front(validLines(map[string]string{"related": "[{id: " + idB + ", relationship: likes}]"})...), []error{ErrInvalidMemory}, "relationship"},
		{"supersedes as a related edge", front(validLines(map[string]string{"related": "[{id: " + idB + ", relationship: supersedes}]"})...), []error{ErrInvalidMemory}, "relationship"},
		{"bad related id", front(validLines(map[string]string{"related": "[{id: x, relationship: refines}]"})...), []error{ErrInvalidMemory, ErrInvalidID}, "related[0].id"},
		{"self-link", front(validLines(map[string]string{"related": "[{id: " + idA + ", relationship: refines}]"})...), []error{ErrInvalidMemory}, "related[0]"},
		{"blank content", "---\n" + strings.Join(validLines(nil), "\n") + "\n---\n\n \n\t\n", []error{ErrInvalidMemory}, "content"},
		{"no content", "---\n" + strings.Join(validLines(nil), "\n") + "\n---\n", []error{ErrInvalidMemory}, "content"},
		{"invalid UTF-8 content", "---\n" + strings.Join(validLines(nil), "\n") + "\n---\n\nok \xc3\x28 not\n", []error{ErrInvalidMemory}, "content"},
		{"merge conflict in the content", front(validLines(nil)...) + "\n<<<<<<< HEAD\nUse tabs.\n=======\nUse spaces.\n>>>>>>> feature\n",
			[]error{ErrMalformed, ErrMergeConflict}, "lines 11–15"},
		{"merge conflict in the front matter", "---\nid: " + idA + "\n<<<<<<< HEAD\nversion: 1\n=======\nversion: 2\n>>>>>>> theirs\n---\nbody\n",
			[]error{ErrMalformed, ErrMergeConflict}, "lines 3–7"},
		{"diff3 merge conflict, CRLF", "---\r\nid: " + idA + "\r\n---\r\n<<<<<<< ours\r\na\r\n||||||| base\r\nb\r\n=======\r\nc\r\n>>>>>>>\r\n",
			[]error{ErrMalformed, ErrMergeConflict}, "lines 4–10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse([]byte(tt.in))
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", m)
			}
			if m != nil {
				t.Errorf("Parse returned a memory with its error: %+v", m)
			}
			for _, want := range tt.want {
				if !errors.Is(err, want) {
					t.Errorf("error %q does not match %v", err, want)
				}
			}
			if !strings.Contains(err.Error(), tt.field) {
				t.Errorf("error %q does not name %q", err, tt.field)
			}
		})
	}
}

// TestParseErrorLines checks that YAML errors give the file's line numbers,
// blank lines before the opening delimiter included.
func TestParseErrorLines(t *testing.T) {
	in := "\n\n---\n" + strings.Join(validLines(map[string]string{"version": "abc"}), "\n") + "\n---\nbody\n"
	_, err := Parse([]byte(in))
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "line 6: version") {
		t.Errorf("err = %v, want ErrMalformed naming line 6: version", err)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(m *MemoryFile)
		want   []error
		field  string
	}{
		{"bad id", func(m *MemoryFile) { m.Meta.ID = "mem_123" }, []error{ErrInvalidMemory, ErrInvalidID}, "id"},
		{"empty id", func(m *MemoryFile) { m.Meta.ID = "" }, []error{ErrInvalidMemory, ErrInvalidID}, "id"},
		{"missing created_at", func(m *MemoryFile) { m.Meta.CreatedAt = time.Time{} }, []error{ErrInvalidMemory}, "created_at"},
		{"version 0", func(m *MemoryFile) { m.Meta.Version = 0 }, []error{ErrInvalidMemory}, "version"},
		{"unknown scope", func(m *MemoryFile) { m.Meta.Scope = "global" }, []error{ErrInvalidMemory}, "scope"},
		{"empty scope", func(m *MemoryFile) { m.Meta.Scope = "" }, []error{ErrInvalidMemory}, "scope"},
		{"unknown category", func(m *MemoryFile) { m.Meta.Category = "misc" }, []error{ErrInvalidMemory}, "category"},
		{"unknown trigger", func(m *MemoryFile) { m.Meta.Trigger = "turn" }, []error{ErrInvalidMemory}, "trigger"},
		{"unknown relationship", func(m *MemoryFile) {
			m.Meta.Related = []RelatedMemory{{ID: idB, Relationship: "likes"}}
		}, []error{ErrInvalidMemory}, "relationship"},
		{"supersedes in related", func(m *MemoryFile) {
			m.Meta.Related = []RelatedMemory{{ID: idB, Relationship: RelationshipSupersedes}}
		}, []error{ErrInvalidMemory}, "related[0].relationship"},
		{"bad related id", func(m *MemoryFile) {
			m.Meta.Related = []RelatedMemory{{ID: idB, Relationship: RelationshipRefines}, {ID: "mem_../x", Relationship: RelationshipRefines}}
		}, []error{ErrInvalidMemory, ErrInvalidID}, "related[1].id"},
		{"self-link", func(m *MemoryFile) {
			m.Meta.Related = []RelatedMemory{{ID: idA, Relationship: RelationshipRelatesTo}}
		}, []error{ErrInvalidMemory}, "related[0]"},
		{"self-supersede", func(m *MemoryFile) { s := idA; m.Meta.Supersedes = &s }, []error{ErrInvalidMemory}, "supersedes"},
		{"bad supersedes", func(m *MemoryFile) { s := "../etc"; m.Meta.Supersedes = &s }, []error{ErrInvalidMemory, ErrInvalidID}, "supersedes"},
		{"empty supersedes", func(m *MemoryFile) { s := ""; m.Meta.Supersedes = &s }, []error{ErrInvalidMemory, ErrInvalidID}, "supersedes"},
		{"reserved extra key", func(m *MemoryFile) { m.Meta.Extra = map[string]any{"version": 9} }, []error{ErrInvalidMemory}, `"version"`},
		{"blank content", func(m *MemoryFile) { m.Content = " \n\t\r\n" }, []error{ErrInvalidMemory}, "content"},
		{"empty content", func(m *MemoryFile) { m.Content = "" }, []error{ErrInvalidMemory}, "content"},
		{"invalid UTF-8 content", func(m *MemoryFile) { m.Content = "a\xffb" }, []error{ErrInvalidMemory}, "content holds a byte that is not UTF-8 (0xFF) at character 2"},
		{"invalid UTF-8 session_id", func(m *MemoryFile) { m.Meta.SessionID = "s\xff" }, []error{ErrInvalidMemory}, "session_id holds a byte that is not UTF-8 (0xFF) at character 2"},
		{"invalid UTF-8 evidence.quote", func(m *MemoryFile) { m.Meta.Evidence = &Evidence{Quote: "é\n\xc3\x28"} }, []error{ErrInvalidMemory}, "evidence.quote holds a byte that is not UTF-8 (0xC3) at character 3"},
		{"invalid UTF-8 status_reason", func(m *MemoryFile) { m.Meta.Status, m.Meta.StatusReason = StatusPending, "\x80" }, []error{ErrInvalidMemory}, "status_reason holds a byte that is not UTF-8 (0x80) at character 1"},
		{"retired_reason without retired", func(m *MemoryFile) { m.Meta.RetiredReason = "stale" }, []error{ErrInvalidMemory}, "retired_reason"},
		{"invalid UTF-8 retired_reason", func(m *MemoryFile) { m.Meta.Retired, m.Meta.RetiredReason = true, "r\x1b\xff" }, []error{ErrInvalidMemory}, "retired_reason holds a byte that is not UTF-8 (0xFF) at character 3"},
		{"created_at after 9999", func(m *MemoryFile) { m.Meta.CreatedAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, []error{ErrInvalidMemory}, "created_at"},
		{"updated_at before year 0", func(m *MemoryFile) { m.Meta.UpdatedAt = time.Date(-1, 12, 31, 0, 0, 0, 0, time.UTC) }, []error{ErrInvalidMemory}, "updated_at"},
		{"year 9999 in UTC only", func(m *MemoryFile) {
			m.Meta.CreatedAt = time.Date(9999, 12, 31, 23, 0, 0, 0, time.FixedZone("", -2*3600))
		}, []error{ErrInvalidMemory}, "created_at"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := sample(idA)
			tt.mutate(m)
			err := m.Validate()
			if err == nil {
				t.Fatal("Validate accepted it")
			}
			for _, want := range tt.want {
				if !errors.Is(err, want) {
					t.Errorf("error %q does not match %v", err, want)
				}
			}
			if !strings.Contains(err.Error(), tt.field) {
				t.Errorf("error %q does not name %q", err, tt.field)
			}
			// Serialize refuses what Validate refuses.
			if _, serr := Serialize(m); !errors.Is(serr, ErrInvalidMemory) {
				t.Errorf("Serialize error = %v, want ErrInvalidMemory", serr)
			}
		})
	}
}

func TestValidateAccepts(t *testing.T) {
	for name, m := range map[string]*MemoryFile{"minimal": sample(idA), "full": full()} {
		if err := m.Validate(); err != nil {
			t.Errorf("%s: Validate = %v", name, err)
		}
	}
	for _, tr := range []Trigger{"", TriggerCadence, TriggerCompaction, TriggerManual} {
		m := sample(idA)
		m.Meta.Trigger = tr
		if err := m.Validate(); err != nil {
			t.Errorf("trigger %q: Validate = %v", tr, err)
		}
	}
	for _, c := range Categories() {
		m := sample(idA)
		m.Meta.Category = c
		if err := m.Validate(); err != nil {
			t.Errorf("category %q: Validate = %v", c, err)
		}
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	m := sample(idA)
	m.Meta.Version = 0
	m.Meta.Scope = "team"
	m.Content = ""
	var nilMemory *MemoryFile
	if err := nilMemory.Validate(); !errors.Is(err, ErrInvalidMemory) {
		t.Errorf("nil memory: %v", err)
	}
	err := m.Validate()
	for _, field := range []string{"version", "scope", "content"} {
		if !strings.Contains(err.Error(), field) {
			t.Errorf("error %q does not name %q", err, field)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	big := strings.Repeat("0123456789abcdef — ünïcödé line\n", (1<<20)/34)
	tests := []struct {
		name string
		m    func() *MemoryFile
	}{
		{"minimal", func() *MemoryFile { return sample(idA) }},
		{"every field set", full},
		{"no optional fields", func() *MemoryFile {
			m := sample(idA)
			m.Meta.SessionID, m.Meta.Trigger = "", ""
			return m
		}},
		{"unicode", func() *MemoryFile {
			m := sample(idA)
			m.Meta.SessionID = "セッション-🚀 «ε»"
			m.Content = "名前は「太郎」です。\n🦀 ε ≤ 0.001 — Ünïcödé\u00a0nbsp\u2028line-sep"
			return m
		}},
		{"1 MiB body", func() *MemoryFile {
			m := sample(idA)
			m.Content = big
			return m
		}},
		{"body with --- lines", func() *MemoryFile {
			m := sample(idA)
			m.Content = "---\nid: " + idB + "\n---\n\nafter\n...\n---"
			return m
		}},
		{"leading and trailing newlines", func() *MemoryFile {
			m := sample(idA)
			m.Content = "\n\n\ntext\n\n\n"
			return m
		}},
		{"stray carriage returns", func() *MemoryFile {
			m := sample(idA)
			m.Content = "\r\nline one\r\nline two\rthree\r"
			m.Meta.SessionID = "a\rb"
			return m
		}},
		{"leading spaces and tabs", func() *MemoryFile {
			m := sample(idA)
			m.Content = "    indented code\n\tand a tab"
			m.Meta.SessionID = "  padded  "
			return m
		}},
		{"tabs and newlines in front-matter strings", func() *MemoryFile {
			// yaml.v3 on its own writes these as literal blocks it cannot read back.
			m := sample(idA)
			m.Meta.SessionID = "\t\n"
			m.Meta.Extra = map[string]any{
				"\t\n": "key with a tab line", "value": "\tindented\n\tlines\n",
				"nested": map[string]any{"\ta\nb": []any{"\t\n", map[any]any{"\t\n": 1, 2: "two"}}},
			}
			return m
		}},
		{"year 0 and year 9999", func() *MemoryFile {
			m := sample(idA)
			m.Meta.CreatedAt = time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)
			m.Meta.UpdatedAt = time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)
			return m
		}},
		{"YAML 1.1 look-alikes", func() *MemoryFile {
			m := sample(idA)
			m.Meta.SessionID = "yes"
			m.Meta.Extra = map[string]any{"y": "on", "n": "1:20", "no": "0x10", "null-ish": "~", "empty": ""}
			return m
		}},
		{"YAML-looking session id", func() *MemoryFile {
			m := sample(idA)
			m.Meta.SessionID = "---\n... # not: a comment\n- [x]"
			return m
		}},
		{"extra keys", func() *MemoryFile {
			m := sample(idA)
			m.Meta.Extra = map[string]any{
				"float-one":   1.0,
				"neg-zero":    math.Copysign(0, -1),
				"big":         1e300,
				"specials":    []any{math.Inf(1), math.Inf(-1), math.NaN(), 1e21, 5e-324},
				"int":         -7,
				"string-int":  "42",
				"bool-string": "yes",
				"null":        nil,
				"when":        time.Date(2024, 2, 29, 23, 59, 59, 0, time.UTC),
				"list":        []any{1, 1.0, "one", true, nil, []any{"nested"}},
				"map":         map[string]any{"a": map[string]any{"b": []any{1.5}}},
				"int-keys":    map[any]any{1: "one", 1.0: "float one", true: "yes", "x": 2},
				"multi line":  "first\nsecond\n",
			}
			return m
		}},
		{"retired with a reason", func() *MemoryFile {
			m := sample(idA)
			m.Meta.Retired, m.Meta.RetiredReason = true, "no longer true: we moved to Postgres"
			return m
		}},
		{"retired without a reason", func() *MemoryFile {
			m := sample(idA)
			m.Meta.Retired = true
			return m
		}},
		{"times with nanoseconds and zero updated_at", func() *MemoryFile {
			m := sample(idA)
			m.Meta.CreatedAt = time.Date(1999, 12, 31, 23, 59, 59, 999999999, time.UTC)
			return m
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := tt.m()
			before := m.Clone()
			data := mustSerialize(t, m)
			if !equalMemory(m, before) {
				t.Fatalf("Serialize changed its argument")
			}
			got, err := Parse(data)
			if err != nil {
				t.Fatalf("Parse(Serialize(m)): %v\n%s", err, data)
			}
			if !equalMemory(got, m) {
				t.Errorf("Parse(Serialize(m)) =\n%+v\nwant\n%+v\nfile:\n%s", got, m, data)
			}
			if again := mustSerialize(t, got); !bytes.Equal(again, data) {
				t.Errorf("Serialize is not stable:\n%s\nthen\n%s", data, again)
			}
		})
	}
}

// TestRoundTripTimesInUTC: times in other zones come back as the same
// instant in UTC (documented: they compare Equal, in UTC).
func TestRoundTripTimesInUTC(t *testing.T) {
	m := sample(idA)
	berlin := time.FixedZone("CET", 3600)
	m.Meta.CreatedAt = time.Date(2025, 1, 15, 11, 30, 0, 0, berlin)
	m.Meta.UpdatedAt = time.Now() // with a monotonic reading
	got, err := Parse(mustSerialize(t, m))
	if err != nil {
		t.Fatal(err)
	}
	if got.Meta.CreatedAt != t0 || !got.Meta.UpdatedAt.Equal(m.Meta.UpdatedAt) || got.Meta.UpdatedAt.Location() != time.UTC {
		t.Errorf("CreatedAt = %v, UpdatedAt = %v", got.Meta.CreatedAt, got.Meta.UpdatedAt)
	}
}

func TestSerializeLayout(t *testing.T) {
	m := sample(idA)
	m.Meta.Extra = map[string]any{"zeta": 1, "alpha": "a"}
	got := string(mustSerialize(t, m))
	want := "---\n" +
		"id: " + idA + "\n" +
		"created_at: 2025-01-15T10:30:00Z\n" +
		"version: 1\n" +
		"scope: repo\n" +
		"category: coding-preferences\n" +
		"session_id: session-1\n" +
		"trigger: cadence\n" +
		"alpha: a\n" +
		"zeta: 1\n" +
		"---\n\n" +
		"Prefers table-driven tests.\n"
	if got != want {
		t.Errorf("Serialize =\n%s\nwant\n%s", got, want)
	}
	if _, err := Serialize(nil); !errors.Is(err, ErrInvalidMemory) {
		t.Errorf("Serialize(nil) = %v, want ErrInvalidMemory", err)
	}
}

func TestTitle(t *testing.T) {
	tests := map[string]string{
		"first line\nsecond":       "first line",
		"\n\n  # Heading  \nbody":  "# Heading",
		" \t\n\r\n last \n":        "last",
		"":                         "",
		"no newline at all":        "no newline at all",
		"\r\nwindows line\r\nnext": "windows line",
	}
	for content, want := range tests {
		m := &MemoryFile{Content: content}
		if got := m.Title(); got != want {
			t.Errorf("Title(%q) = %q, want %q", content, got, want)
		}
	}
}

func TestClone(t *testing.T) {
	m := fullWithKeys()
	c := m.Clone()
	if !equalMemory(c, m) {
		t.Fatalf("Clone = %+v, want %+v", c, m)
	}
	*c.Meta.Supersedes = idC
	c.Meta.Related[0].ID = idE
	c.Meta.Extra["tags"].([]any)[0] = "changed"
	c.Meta.Extra["origin"].(map[string]any)["tool"] = "changed"
	c.Meta.Extra["keys"].(map[any]any)[1].([]any)[0] = "changed"
	c.Meta.Extra["new"] = 1
	if want := fullWithKeys(); !equalMemory(m, want) {
		t.Errorf("changing the clone changed the original: %+v", m.Meta)
	}
	var nilMemory *MemoryFile
	if nilMemory.Clone() != nil {
		t.Error("Clone(nil) != nil")
	}
}

// fullWithKeys is full() with the extra key TestClone adds.
func fullWithKeys() *MemoryFile {
	m := full()
	m.Meta.Extra["keys"] = map[any]any{1: []any{"x"}}
	return m
}

func TestEnums(t *testing.T) {
	for _, s := range Scopes() {
		if !s.Valid() {
			t.Errorf("scope %q not valid", s)
		}
	}
	for _, r := range Relationships() {
		if !r.Valid() {
			t.Errorf("relationship %q not valid", r)
		}
		if r.IsEdge() == (r == RelationshipSupersedes) {
			t.Errorf("%q.IsEdge() = %v: every relationship but supersedes is an edge", r, r.IsEdge())
		}
	}
	if len(Categories()) != 6 || len(Relationships()) != 4 || len(Scopes()) != 2 {
		t.Errorf("enum lists: %v %v %v", Categories(), Relationships(), Scopes())
	}
	for _, bad := range []string{"", "Repo", "team"} {
		if Scope(bad).Valid() || Category(bad).Valid() || Relationship(bad).Valid() || Relationship(bad).IsEdge() || Trigger(bad).Valid() {
			t.Errorf("%q accepted", bad)
		}
	}
}

// Times in unknown keys keep their instant and offset, read back exactly
// whatever the machine's zone (a "+00:00" offset would otherwise decode to
// the Local location on a machine in UTC), and unwritable years are refused.
func TestExtraTimes(t *testing.T) {
	in := front(append(validLines(nil),
		"utc: 2025-01-01T10:00:00Z",
		"zero_offset: 2025-01-01T10:00:00+00:00",
		"india: 2025-01-01T10:00:00+05:30",
		"list: [2025-01-01T10:00:00-07:00]",
		"date: 2025-01-01",
	)...)
	m, err := Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	x := m.Meta.Extra
	want := time.Date(2025, 1, 1, 10, 0, 0, 0, time.UTC)
	for _, k := range []string{"utc", "zero_offset"} {
		if got := x[k].(time.Time); got != want {
			t.Errorf("%s = %#v, want %#v (UTC)", k, got, want)
		}
	}
	india := x["india"].(time.Time)
	if name, off := india.Zone(); off != 5*3600+1800 || name != "" || !india.Equal(want.Add(-5*time.Hour-30*time.Minute)) {
		t.Errorf("india = %v (zone %q %d)", india, name, off)
	}
	if _, off := x["list"].([]any)[0].(time.Time).Zone(); off != -7*3600 {
		t.Errorf("list[0] offset = %d", off)
	}
	out := mustSerialize(t, m)
	for _, line := range []string{"india: 2025-01-01T10:00:00+05:30\n", "zero_offset: 2025-01-01T10:00:00Z\n", "  - 2025-01-01T10:00:00-07:00\n"} {
		if !strings.Contains(string(out), line) {
			t.Errorf("%q not in\n%s", line, out)
		}
	}
	m2, err := Parse(out)
	if err != nil || !equalMemory(m, m2) {
		t.Errorf("round trip: %v\n%#v\n%#v", err, m.Meta.Extra, m2.Meta.Extra)
	}

	bad := sample(idA)
	bad.Meta.Extra = map[string]any{"far": []any{time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}}
	if _, err := Serialize(bad); !errors.Is(err, ErrInvalidMemory) || !strings.Contains(err.Error(), "far") {
		t.Errorf("Serialize of a year-10000 extra time = %v, want ErrInvalidMemory naming the key", err)
	}
}
