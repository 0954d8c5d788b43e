package memcore

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

var v4Shape = regexp.MustCompile(`^mem_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestNewMemoryID(t *testing.T) {
	const n = 10000
	seen := make(map[string]bool, n)
	// Every hex digit that is free to vary should be seen to vary.
	var varied [36]map[byte]bool
	for i := range varied {
		varied[i] = map[byte]bool{}
	}
	for i := 0; i < n; i++ {
		id := NewMemoryID()
		if !v4Shape.MatchString(id) {
			t.Fatalf("NewMemoryID() = %q: not mem_ + a lower-case UUID v4 with the RFC 4122 variant", id)
		}
		if err := ValidateID(id); err != nil {
			t.Fatalf("ValidateID(NewMemoryID()) = %v", err)
		}
		if seen[id] {
			t.Fatalf("NewMemoryID() returned %q twice in %d calls", id, i+1)
		}
		seen[id] = true
		for j := 0; j < 36; j++ {
			varied[j][id[4+j]] = true
		}
	}
	for j, digits := range varied {
		switch j {
		case 8, 13, 18, 23, 14: // dashes, and the version digit
			if len(digits) != 1 {
				t.Errorf("position %d took %d values, want 1", j, len(digits))
			}
		case 19: // the variant digit: 8, 9, a or b
			if len(digits) != 4 {
				t.Errorf("variant digit took %d values, want 4", len(digits))
			}
		default:
			if len(digits) != 16 {
				t.Errorf("position %d took %d values in %d ids, want 16", j, len(digits), n)
			}
		}
	}
}

func TestValidateID(t *testing.T) {
	tests := []struct {
		id string
		ok bool
	}{
		{"mem_1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b", true},
		{"mem_00000000-0000-0000-0000-000000000000", true}, // any version: ids from other tools
		{"mem_ffffffff-ffff-1fff-ffff-ffffffffffff", true},
		{"", false},
		{"mem_", false},
		{"mem", false},
		{"1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b", false},
		{"mem_1B4E28BA-2FA1-4D3B-A3F5-EF19B5A7633B", false}, // upper case
		{"MEM_1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b", false},
		{"mem_1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633", false},   // one short
		{"mem_1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633bb", false}, // one long
		{"mem_1b4e28ba2fa14d3ba3f5ef19b5a7633b", false},      // no dashes
		{"mem_1b4e28ba-2fa1-4d3b-a3f5_ef19b5a7633b", false},
		{"mem_1b4e28bа-2fa1-4d3b-a3f5-ef19b5a7633", false}, // Cyrillic а, same byte length
		{"mem_1b4e28bg-2fa1-4d3b-a3f5-ef19b5a7633b", false},
		{"mem_1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b.md", false},
		{" mem_1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b", false},
		{"../x", false},
		{"..", false},
		{"mem_../../etc/passwd", false},
		{"mem_../../../../../../../../../etc/passw", false}, // the right length
		{"mem_1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7/../", false},
		{"/", false},
		{"\\", false},
		{"mem_1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633/", false},
		{"mem_1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633\\", false},
		{"mem_1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633\x00", false},
		{"mem_1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7\x00\x00\x00", false},
		{"mem_1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633\n", false},
		{"/etc/passwd", false},
		{"C:\\Windows\\system32", false},
		{strings.Repeat("a", 1000), false},
	}
	for _, tt := range tests {
		err := ValidateID(tt.id)
		if tt.ok {
			if err != nil {
				t.Errorf("ValidateID(%q) = %v, want nil", tt.id, err)
			}
			continue
		}
		if !errors.Is(err, ErrInvalidID) {
			t.Errorf("ValidateID(%q) = %v, want ErrInvalidID", tt.id, err)
		}
		if err != nil && len(err.Error()) > 300 {
			t.Errorf("ValidateID(%q) message is %d bytes; long ids should be clipped", tt.id[:20], len(err.Error()))
		}
	}
}
