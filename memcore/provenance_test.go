package memcore

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// A file written before v0.2 reads as source unknown and active: nothing
// existing is quarantined by the new fields.
func TestOlderFilesReadAsUnknownAndActive(t *testing.T) {
	m, err := Parse([]byte("---\nid: " + idA + "\ncreated_at: 2025-01-15T10:30:00Z\nversion: 1\nscope: repo\ncategory: patterns\n---\n\nUse tabs.\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Meta.Source != SourceUnknown || m.Meta.Source.String() != "unknown" || m.Meta.Status != StatusActive ||
		m.Meta.Evidence != nil || m.Meta.Anchors != nil {
		t.Errorf("meta = %+v, want source unknown, active, no evidence, no anchors", m.Meta)
	}
}

func TestValidateProvenance(t *testing.T) {
	tests := []struct {
		name   string
		change func(*MemoryMeta)
		says   string // empty: valid
	}{
		{"every source", func(mt *MemoryMeta) { mt.Source = SourceAgent }, ""},
		{"unknown source", func(mt *MemoryMeta) { mt.Source = "me" }, `source "me" is not one of user, assistant, mixed, agent`},
		{"unknown status", func(mt *MemoryMeta) { mt.Status = "approved" }, `status "approved" is not pending`},
		{"reason without pending", func(mt *MemoryMeta) { mt.Status, mt.StatusReason = "", "because" }, "status_reason is set but status is not pending"},
		{"rejection of a change", func(mt *MemoryMeta) { mt.RejectionReason = "from a web page" }, ""},
		{"rejection on a pending version", func(mt *MemoryMeta) {
			mt.Status, mt.StatusReason, mt.RejectionReason = StatusPending, "held", "no"
		}, "rejection_reason is set on a retired or pending version"},
		{"rejection on a retired version", func(mt *MemoryMeta) { mt.Retired, mt.RejectionReason = true, "no" }, "rejection_reason is set on a retired or pending version"},
		{"rejection not UTF-8", func(mt *MemoryMeta) { mt.RejectionReason = "\xff" }, "rejection_reason holds a byte that is not UTF-8 (0xFF) at character 1"},
		{"evidence in year 10000", func(mt *MemoryMeta) { mt.Evidence = &Evidence{At: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)} }, "evidence.at"},
		{"anchor names nothing", func(mt *MemoryMeta) { mt.Anchors = []Anchor{{Blob: strings.Repeat("a", 40)}} }, "names neither a path nor a symbol"},
		{"absolute path", func(mt *MemoryMeta) { mt.Anchors = []Anchor{{Path: "/etc/passwd"}} }, "is absolute"},
		{"windows path", func(mt *MemoryMeta) { mt.Anchors = []Anchor{{Path: `C:\x`}} }, "backslash"},
		{"drive path", func(mt *MemoryMeta) { mt.Anchors = []Anchor{{Path: "C:/x"}} }, "is absolute"},
		{"leaves the repository", func(mt *MemoryMeta) { mt.Anchors = []Anchor{{Path: "../secrets"}} }, "leaves the repository"},
		{"not clean", func(mt *MemoryMeta) { mt.Anchors = []Anchor{{Path: "a/./b"}} }, `not clean (write "a/b")`},
		{"control character", func(mt *MemoryMeta) { mt.Anchors = []Anchor{{Path: "a\x1b[2Jb"}} }, "control characters"},
		{"symbol with space", func(mt *MemoryMeta) { mt.Anchors = []Anchor{{Symbol: "Get Order"}} }, "spaces"},
		{"symbol with slash", func(mt *MemoryMeta) { mt.Anchors = []Anchor{{Symbol: "db/GetOrder"}} }, "put the file in path"},
		{"blob without path", func(mt *MemoryMeta) { mt.Anchors = []Anchor{{Symbol: "X", Blob: strings.Repeat("a", 40)}} }, "blob but no path"},
		{"short blob", func(mt *MemoryMeta) { mt.Anchors = []Anchor{{Path: "x.go", Blob: "abc123"}} }, "not a git object id"},
		{"sha-256 blob", func(mt *MemoryMeta) { mt.Anchors = []Anchor{{Path: "x.go", Blob: strings.Repeat("0f", 32)}} }, ""},
		{"commit", func(mt *MemoryMeta) { mt.Anchors = []Anchor{{Path: "x.go", Commit: strings.Repeat("c", 40)}} }, ""},
		{"commit without path", func(mt *MemoryMeta) { mt.Anchors = []Anchor{{Symbol: "X", Commit: strings.Repeat("c", 40)}} }, "commit but no path"},
		{"short commit", func(mt *MemoryMeta) { mt.Anchors = []Anchor{{Path: "x.go", Commit: "HEAD"}} }, `commit "HEAD" is not a git object id`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := sample(NewMemoryID())
			tt.change(&m.Meta)
			err := m.Validate()
			if tt.says == "" {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidMemory) || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("Validate = %v, want ErrInvalidMemory saying %q", err, tt.says)
			}
		})
	}
}

// A hand-edited file with an unknown source, an unknown status or a bad
// anchor is served repaired, erring on the side of caution: never as the
// user's, never as active, and without the bad anchor.
func TestParseLenientRepairsProvenance(t *testing.T) {
	raw := "---\nid: " + idA + "\ncreated_at: 2025-01-15T10:30:00Z\nversion: 1\nscope: repo\ncategory: patterns\n" +
		"source: the-boss\nstatus: approved\nanchors:\n  - path: /etc/passwd\n  - path: cmd/main.go\n    symbol: main\n---\n\nUse tabs.\n"
	if _, err := Parse([]byte(raw)); !errors.Is(err, ErrInvalidMemory) {
		t.Fatalf("Parse = %v, want ErrInvalidMemory (the strict reader)", err)
	}
	m, repairs, err := parseLenient([]byte(raw), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if m.Meta.Source != SourceUnknown || m.Meta.Status != StatusPending || len(m.Meta.Anchors) != 1 || m.Meta.Anchors[0].Symbol != "main" {
		t.Errorf("repaired meta = %+v", m.Meta)
	}
	if len(repairs) != 3 || !strings.Contains(repairs[0], "read as unknown") || !strings.Contains(repairs[1], "waits for review") ||
		!strings.Contains(repairs[2], "anchors[0]") || !strings.Contains(repairs[2], "dropped") {
		t.Errorf("repairs = %q", repairs)
	}
}

func TestCloneCopiesProvenance(t *testing.T) {
	m := full()
	c := m.Clone()
	c.Meta.Evidence.Quote = "changed"
	c.Meta.Anchors[0].Path = "changed.go"
	if m.Meta.Evidence.Quote == "changed" || m.Meta.Anchors[0].Path == "changed.go" {
		t.Error("Clone shares evidence or anchors with the original")
	}
}

// "evidence: {}" and "anchors: []" record nothing, as absent keys do.
func TestEmptyProvenanceReadsAsAbsent(t *testing.T) {
	m, err := Parse([]byte("---\nid: " + idA + "\ncreated_at: 2025-01-15T10:30:00Z\nversion: 1\nscope: repo\ncategory: patterns\nevidence: {}\nanchors: []\n---\n\nUse tabs.\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Meta.Evidence != nil || m.Meta.Anchors != nil {
		t.Errorf("meta = %+v, want no evidence and no anchors", m.Meta)
	}
}
