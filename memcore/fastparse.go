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
	var seen uint32
	for block != "" {
		line, rest, ok := strings.Cut(block, "\n")
		if !ok {
			return MemoryMeta{}, false // the block always ends with the newline before the closing line
		}
		block = rest
		key, value, ok := fastKey(line)
		bit := fastKeyBit(key)
		if !ok || bit == 0 || seen&bit != 0 {
			return MemoryMeta{}, false
		}
		seen |= bit
		if parse := fastBlocks[key]; parse != nil {
			block, ok = parse(&meta, block)
		} else {
			ok = fastFields[key](&meta, value)
		}
		if !ok {
			return MemoryMeta{}, false
		}
	}
	return meta, seen != 0
}

// fastKey splits a top-level line into its key and value: "key: value"
// for a key of fastFields, "key:" alone for a key of fastBlocks, whose
// value follows on the next lines; false for anything else.
func fastKey(line string) (key, value string, ok bool) {
	if key, ok := strings.CutSuffix(line, ":"); ok && fastBlocks[key] != nil {
		return key, "", true
	}
	key, value, ok = strings.Cut(line, ": ")
	return key, value, ok && fastBlocks[key] == nil
}

// fastBlocks decode, for each key parseFast knows whose value is written
// on the lines after it, that value from the block that follows the key's
// line, and return the rest of the block.
var fastBlocks = map[string]func(m *MemoryMeta, block string) (string, bool){
	"related": func(m *MemoryMeta, block string) (rest string, ok bool) {
		m.Related, rest, ok = plainRelated(block)
		return rest, ok
	},
	"evidence": func(m *MemoryMeta, block string) (rest string, ok bool) {
		m.Evidence, rest, ok = plainEvidence(block)
		return rest, ok
	},
	"anchors": func(m *MemoryMeta, block string) (rest string, ok bool) {
		m.Anchors, rest, ok = plainAnchors(block)
		return rest, ok
	},
}

// fastFields sets, for each key parseFast knows but related, its field of
// a MemoryMeta from a value of the plain shape Serialize writes, and
// reports whether the value has that shape.
var fastFields = map[string]func(m *MemoryMeta, value string) bool{
	"id":         func(m *MemoryMeta, v string) bool { m.ID = v; return isPlainID(v) },
	"supersedes": func(m *MemoryMeta, v string) bool { m.Supersedes = &v; return isPlainID(v) },
	"created_at": func(m *MemoryMeta, v string) (ok bool) { m.CreatedAt, ok = plainTime(v); return ok },
	"updated_at": func(m *MemoryMeta, v string) (ok bool) { m.UpdatedAt, ok = plainTime(v); return ok },
	"version":    func(m *MemoryMeta, v string) (ok bool) { m.Version, ok = plainVersion(v); return ok },
	"scope":      func(m *MemoryMeta, v string) bool { m.Scope = Scope(v); return m.Scope.Valid() },
	"category":   func(m *MemoryMeta, v string) bool { m.Category = Category(v); return m.Category.Valid() },
	"trigger":    func(m *MemoryMeta, v string) bool { m.Trigger = Trigger(v); return m.Trigger.Valid() },
	"session_id": func(m *MemoryMeta, v string) (ok bool) { m.SessionID, ok = plainString(v); return ok },
	"retired_reason": func(m *MemoryMeta, v string) (ok bool) {
		m.RetiredReason, ok = plainText(v)
		return ok
	},
	"retired": func(m *MemoryMeta, v string) bool { m.Retired = true; return v == "true" },
	"source":  func(m *MemoryMeta, v string) bool { m.Source = Source(v); return v != "" && m.Source.Valid() },
	"status":  func(m *MemoryMeta, v string) bool { m.Status = Status(v); return m.Status == StatusPending },
	"status_reason": func(m *MemoryMeta, v string) (ok bool) {
		m.StatusReason, ok = plainText(v)
		return ok
	},
	"rejection_reason": func(m *MemoryMeta, v string) (ok bool) {
		m.RejectionReason, ok = plainText(v)
		return ok
	},
}

// plainEvidence decodes the evidence mapping that opens block — a
// "  quote: <text>" line, an "  at: <time>" line, or both in that order —
// and returns it with the rest of the block; false if there is neither or
// a value is of another shape.
func plainEvidence(block string) (*Evidence, string, bool) {
	var e Evidence
	if v, rest, ok := cutField(block, "  quote: "); ok {
		if e.Quote, ok = plainText(v); !ok {
			return nil, block, false
		}
		block = rest
	}
	if v, rest, ok := cutField(block, "  at: "); ok {
		if e.At, ok = plainTime(v); !ok {
			return nil, block, false
		}
		block = rest
	}
	return &e, block, !e.IsZero()
}

// plainAnchors decodes the anchors that open block, each a mapping of
// path, symbol, blob and commit lines in that order (the first opened by
// "  - ", the others indented by four spaces), and returns them with the
// rest of the block; false if there is none or one is of another shape.
func plainAnchors(block string) ([]Anchor, string, bool) {
	var anchors []Anchor
	for strings.HasPrefix(block, "  - ") {
		var a Anchor
		indent := "  - "
		for _, f := range []struct {
			key   string
			field *string
		}{{"path", &a.Path}, {"symbol", &a.Symbol}, {"blob", &a.Blob}, {"commit", &a.Commit}} {
			v, rest, ok := cutField(block, indent+f.key+": ")
			if !ok {
				continue
			}
			if *f.field, ok = plainPath(v); !ok {
				return nil, block, false
			}
			block, indent = rest, "    "
		}
		if indent != "    " { // the item opened with no field of ours
			return nil, block, false
		}
		anchors = append(anchors, a)
	}
	return anchors, block, len(anchors) > 0
}

// cutField returns the value of block's first line when it starts with
// prefix, and the rest of the block.
func cutField(block, prefix string) (value, rest string, ok bool) {
	if !strings.HasPrefix(block, prefix) {
		return "", block, false
	}
	value, rest, ok = strings.Cut(block[len(prefix):], "\n")
	if !ok {
		return "", block, false
	}
	return value, rest, true
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
func fastKeyBit(key string) uint32 {
	switch key {
	case "retired":
		return 1 << 10
	case "retired_reason":
		return 1 << 11
	}
	if bit := fastProvenanceBit(key); bit != 0 {
		return bit
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

// fastProvenanceBit is the bit of each key added in v0.2, 0 for any other
// key.
func fastProvenanceBit(key string) uint32 {
	switch key {
	case "source":
		return 1 << 12
	case "evidence":
		return 1 << 13
	case "status":
		return 1 << 14
	case "status_reason":
		return 1 << 15
	case "anchors":
		return 1 << 16
	case "rejection_reason":
		return 1 << 17
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
	if !plainWord(s) || readsAsOtherType(s) {
		return "", false
	}
	return s, true
}

// plainPath decodes a path or a symbol as plainString does, a slash
// allowed in the plain form too.
func plainPath(s string) (string, bool) {
	if s != "" && !strings.HasPrefix(s, `"`) && strings.Contains(s, "/") {
		if plainWord(strings.ReplaceAll(s, "/", "_")) && !strings.Contains(s, "//") {
			return s, true
		}
		return "", false
	}
	return plainString(s)
}

// plainText decodes a short text as plainString does, or written plainly
// as words separated by single spaces, made of letters, digits and the
// punctuation , . ' ( ) - _ / (no colon, hash or quote that would mean
// something to YAML), that does not read as another type.
func plainText(s string) (string, bool) {
	if v, ok := plainString(s); ok {
		return v, true
	}
	if s == "" || !isAlnum(s[0]) || strings.Contains(s, "  ") || strings.HasSuffix(s, " ") || readsAsOtherType(s) {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && !strings.ContainsRune(" ,.'()-_/", rune(c)) {
			return "", false
		}
	}
	return s, true
}

// plainWord reports whether s is made of letters, digits, '_', '.' and
// '-', starts with a letter or digit, and holds a letter.
func plainWord(s string) bool {
	if s == "" || !isAlnum(s[0]) {
		return false
	}
	letter := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
			letter = true
		case '0' <= c && c <= '9', c == '_', c == '.', c == '-':
		default:
			return false
		}
	}
	return letter
}

// readsAsOtherType reports whether YAML reads the plain word s as
// something other than a string: a bool (in YAML 1.1's words too), null,
// an int or a float.
func readsAsOtherType(s string) bool {
	if isOldBool(s) {
		return true
	}
	switch strings.ToLower(s) {
	case "true", "false", "null", "nan", "inf", "infinity":
		return true
	}
	plain := strings.ReplaceAll(s, "_", "")
	_, errF := strconv.ParseFloat(plain, 64)
	_, errI := strconv.ParseInt(plain, 0, 64)
	_, errU := strconv.ParseUint(plain, 0, 64)
	return errF == nil || errI == nil || errU == nil
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
