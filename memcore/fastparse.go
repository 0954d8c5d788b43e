package memcore

import (
	"strconv"
	"strings"
	"time"
)

// parseFast decodes front matter in the simple form Serialize writes — one
// "key: value" line per known key, related edges as "  - id: …" /
// "    relationship: …" pairs, plain values of the expected shapes — without
// the YAML decoder, which costs tens of microseconds a file. It reports false
// for anything else (unknown keys, quoting other than a simple double-quoted
// session id, comments, blank lines, repeated keys, values of unexpected
// shape), and the caller then decodes the block with the YAML decoder; so
// when it reports true its result is what the decoder would give (a fuzz test
// checks this), and it never decides an error itself.
func parseFast(block string) (MemoryMeta, bool) {
	var meta MemoryMeta
	var seen uint16
	for block != "" {
		line, rest, ok := strings.Cut(block, "\n")
		if !ok {
			return meta, false // the block always ends with the newline before the closing line
		}
		block = rest
		key, value, ok := strings.Cut(line, ": ")
		if !ok {
			if line != "related:" {
				return meta, false
			}
			key = "related"
		}
		bit := fastKeyBit(key)
		if bit == 0 || seen&bit != 0 {
			return meta, false
		}
		seen |= bit
		switch key {
		case "id":
			if !isPlainID(value) {
				return meta, false
			}
			meta.ID = value
		case "created_at", "updated_at":
			t, ok := plainTime(value)
			if !ok {
				return meta, false
			}
			if key == "created_at" {
				meta.CreatedAt = t
			} else {
				meta.UpdatedAt = t
			}
		case "version":
			n, ok := plainVersion(value)
			if !ok {
				return meta, false
			}
			meta.Version = n
		case "scope":
			if !Scope(value).Valid() {
				return meta, false
			}
			meta.Scope = Scope(value)
		case "category":
			if !Category(value).Valid() {
				return meta, false
			}
			meta.Category = Category(value)
		case "trigger":
			if !Trigger(value).Valid() {
				return meta, false
			}
			meta.Trigger = Trigger(value)
		case "supersedes":
			if !isPlainID(value) {
				return meta, false
			}
			meta.Supersedes = &value
		case "session_id", "retired_reason":
			s, ok := plainString(value)
			if !ok {
				return meta, false
			}
			if key == "session_id" {
				meta.SessionID = s
			} else {
				meta.RetiredReason = s
			}
		case "retired":
			if value != "true" {
				return meta, false
			}
			meta.Retired = true
		case "related":
			if meta.Related, block, ok = plainRelated(block); !ok {
				return meta, false
			}
		}
	}
	return meta, seen != 0
}

// plainRelated decodes the edges that open block, each an "  - id: <id>"
// line and a "    relationship: <relationship>" line, and returns them with
// the rest of the block; false if there is none or one is of another shape.
func plainRelated(block string) ([]RelatedMemory, string, bool) {
	var edges []RelatedMemory
	for strings.HasPrefix(block, "  - id: ") {
		idLine, rest, ok := strings.Cut(block[len("  - id: "):], "\n")
		if !ok || !isPlainID(idLine) {
			return nil, block, false
		}
		relLine, rest, ok := strings.Cut(rest, "\n")
		rel, found := strings.CutPrefix(relLine, "    relationship: ")
		if !ok || !found || !Relationship(rel).Valid() {
			return nil, block, false
		}
		edges = append(edges, RelatedMemory{ID: idLine, Relationship: Relationship(rel)})
		block = rest
	}
	return edges, block, len(edges) > 0
}

// fastKeyBit is a bit per key parseFast knows, 0 for any other key.
func fastKeyBit(key string) uint16 {
	switch key {
	case "retired":
		return 1 << 10
	case "retired_reason":
		return 1 << 11
	}
	switch key {
	case "id":
		return 1 << 0
	case "created_at":
		return 1 << 1
	case "updated_at":
		return 1 << 2
	case "version":
		return 1 << 3
	case "scope":
		return 1 << 4
	case "category":
		return 1 << 5
	case "supersedes":
		return 1 << 6
	case "related":
		return 1 << 7
	case "session_id":
		return 1 << 8
	case "trigger":
		return 1 << 9
	}
	return 0
}

// isPlainID reports whether s is a memory id, which YAML reads as a plain
// string.
func isPlainID(s string) bool { return ValidateID(s) == nil }

// plainTime parses a UTC RFC 3339 timestamp ending in "Z" with a four-digit
// year, the form Serialize writes.
func plainTime(s string) (time.Time, bool) {
	if len(s) < len("2006-01-02T15:04:05Z") || s[len(s)-1] != 'Z' || s[4] != '-' || s[10] != 'T' {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, false
	}
	return t.UTC(), true
}

// plainVersion parses a decimal version without sign or leading zeros.
func plainVersion(s string) (int, bool) {
	if len(s) == 0 || len(s) > 9 || s[0] < '1' || s[0] > '9' {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// plainString decodes a session id written plainly or double-quoted without
// escapes. A plain value must be made of letters, digits, '_', '.' and '-',
// start with a letter or digit, contain a letter, and not be a word or number
// that YAML reads as another type (a bool, null, an int, a float).
func plainString(s string) (string, bool) {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		inner := s[1 : len(s)-1]
		if strings.ContainsAny(inner, "\"\\") || !isPrintableASCII(inner) {
			return "", false
		}
		return inner, true
	}
	if s == "" || !isAlnum(s[0]) {
		return "", false
	}
	letter := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
			letter = true
		case '0' <= c && c <= '9', c == '_', c == '.', c == '-':
		default:
			return "", false
		}
	}
	if !letter || isOldBool(s) {
		return "", false
	}
	switch strings.ToLower(s) {
	case "true", "false", "null", "nan", "inf", "infinity":
		return "", false
	}
	plain := strings.ReplaceAll(s, "_", "")
	if _, err := strconv.ParseFloat(plain, 64); err == nil {
		return "", false
	}
	if _, err := strconv.ParseInt(plain, 0, 64); err == nil {
		return "", false
	}
	if _, err := strconv.ParseUint(plain, 0, 64); err == nil {
		return "", false
	}
	return s, true
}

func isAlnum(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func isPrintableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
