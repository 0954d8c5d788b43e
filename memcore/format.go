package memcore

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// The file format is YAML front matter between two "---" lines, one blank
// line, then the markdown body:
//
//	---
//	id: mem_1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b
//	created_at: 2025-01-15T10:30:00Z
//	version: 1
//	scope: user
//	category: coding-preferences
//	trigger: cadence
//	---
//
//	Prefers table-driven tests.
//
// Serialize writes exactly that: the known keys in a fixed order, unknown
// keys (MemoryMeta.Extra) after them, times in UTC, then "\n", the content
// byte for byte, and a final "\n". Parse undoes it exactly, so
// Parse(Serialize(m)) gives back m for any valid m (times compare Equal, in
// UTC).

const bom = "\ufeff"

// Parse decodes a memory file. It accepts files edited by hand: a UTF-8
// byte order mark, CRLF line endings (a file whose opening line ends in CRLF
// has all its CRLFs read as LF), blank lines before the opening "---",
// trailing spaces on the delimiter lines, "..." as the closing delimiter,
// extra blank lines, a missing final newline, unknown keys (kept in
// MemoryMeta.Extra), "supersedes: null", and "---" lines inside the body —
// only the first delimiter line after the opening one closes the front
// matter.
//
// The body is everything after the closing line, less one blank separator
// line if present and one final newline if present.
//
// Errors wrap [ErrMalformed] when the bytes are not a memory file, and
// [ErrInvalidMemory] (see [MemoryFile.Validate]) when the fields break the
// schema; the message names what is wrong.
//
// Parse is strict: a file without created_at, or with a related edge whose
// relationship is unknown, is an error, since bytes alone do not say what
// to do instead. A [FileStore] reads such a file leniently — the file's
// modification time as created_at, the unknown edge dropped — and reports
// the repair (see [FileStore.Problems]).
func Parse(raw []byte) (*MemoryFile, error) {
	m, err := parse(raw)
	if err != nil {
		return nil, fmt.Errorf("memcore: parse: %w", err)
	}
	return m, nil
}

// parse is Parse without the package prefix on errors, for callers that
// add their own context.
func parse(raw []byte) (*MemoryFile, error) {
	m, err := decodeFile(raw)
	if err != nil {
		return nil, err
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// parseLenient is parse for a file of a memory folder last modified at
// modTime, repairing what a hand edit commonly breaks, and returns what it
// repaired, one sentence each:
//
//   - a missing (or empty) created_at is read as modTime, in UTC and whole
//     seconds, as a new memory's would be;
//   - a related edge whose relationship is not refines, contradicts or
//     relates-to is dropped, and the memory kept.
//
// The result passes Validate, so it serializes to what was read. Anything
// else wrong is an error, as with parse.
func parseLenient(raw []byte, modTime time.Time) (*MemoryFile, []string, error) {
	m, err := decodeFile(raw)
	if err != nil {
		return nil, nil, err
	}
	var repairs []string
	if m.Meta.CreatedAt.IsZero() {
		m.Meta.CreatedAt = modTime.UTC().Truncate(time.Second)
		repairs = append(repairs, fmt.Sprintf("created_at is missing: the file's modification time, %s, is used",
			m.Meta.CreatedAt.Format(time.RFC3339)))
	}
	if slices.ContainsFunc(m.Meta.Related, func(r RelatedMemory) bool { return !r.Relationship.IsEdge() }) {
		var kept []RelatedMemory
		for i, r := range m.Meta.Related {
			if r.Relationship.IsEdge() {
				kept = append(kept, r)
				continue
			}
			repairs = append(repairs, fmt.Sprintf("related[%d]: relationship %q is not one of refines, contradicts, relates-to: the edge to %s is dropped",
				i, r.Relationship, r.ID))
		}
		m.Meta.Related = kept
	}
	repairs = append(repairs, m.Meta.repairProvenance()...)
	if err := m.Validate(); err != nil {
		return nil, nil, err
	}
	return m, repairs, nil
}

// decodeFile decodes a memory file without validating its fields.
func decodeFile(raw []byte) (*MemoryFile, error) {
	if open, end, found := mergeConflict(string(raw)); found {
		return nil, fmt.Errorf("%w: %w at lines %d–%d: %s", ErrMalformed, ErrMergeConflict, open, end, conflictAdvice)
	}
	yamlBlock, body, opening, err := splitFile(string(raw))
	if err != nil {
		return nil, err
	}
	meta, fast := parseFast(yamlBlock)
	if !fast {
		if meta, err = decodeFrontMatter(yamlBlock, opening); err != nil {
			return nil, err
		}
	}
	meta.normalizeDecoded()
	body = strings.TrimPrefix(body, "\n")
	body = strings.TrimSuffix(body, "\n")
	return &MemoryFile{Meta: meta, Content: body}, nil
}

// splitFile splits a memory file into its front-matter block and its body,
// with the file's line number of the opening delimiter (blank lines may
// come before it), so that YAML errors can name the file's lines. A BOM is
// dropped, and CRLF line endings become LF when the opening delimiter has
// one.
func splitFile(s string) (yamlBlock, body string, opening int, err error) {
	s = strings.TrimPrefix(s, bom)
	opening = 1
	for {
		line, rest, ok := strings.Cut(s, "\n")
		if !ok || strings.TrimSpace(line) != "" {
			break
		}
		s = rest
		opening++
	}
	first, rest, ok := strings.Cut(s, "\n")
	if strings.TrimRight(first, " \t\r") != "---" {
		return "", "", 0, fmt.Errorf("%w: the first line is not \"---\" (front matter missing)", ErrMalformed)
	}
	if !ok {
		return "", "", 0, fmt.Errorf("%w: front matter is not closed by a \"---\" line", ErrMalformed)
	}
	if strings.HasSuffix(first, "\r") {
		rest = strings.ReplaceAll(rest, "\r\n", "\n")
	}
	yamlBlock, body, found := splitFrontMatter(rest)
	if !found {
		return "", "", 0, fmt.Errorf("%w: front matter is not closed by a \"---\" line", ErrMalformed)
	}
	if strings.TrimSpace(yamlBlock) == "" {
		return "", "", 0, fmt.Errorf("%w: front matter is empty", ErrMalformed)
	}
	return yamlBlock, body, opening, nil
}

// normalizeDecoded gives decoded metadata its one form: an empty
// supersedes, no edges, no extra keys, empty evidence and no anchors read
// as absent; times in UTC.
func (meta *MemoryMeta) normalizeDecoded() {
	if meta.Supersedes != nil && *meta.Supersedes == "" {
		meta.Supersedes = nil
	}
	if len(meta.Related) == 0 {
		meta.Related = nil // "related: []" is no edges, as an absent key
	}
	if len(meta.Extra) == 0 {
		meta.Extra = nil
	} else {
		canonicalTimes(meta.Extra)
	}
	meta.CreatedAt = meta.CreatedAt.UTC()
	meta.UpdatedAt = meta.UpdatedAt.UTC()
	if meta.Evidence != nil {
		if meta.Evidence.IsZero() {
			meta.Evidence = nil // "evidence: {}" records nothing, as an absent key
		} else {
			meta.Evidence.At = meta.Evidence.At.UTC()
		}
	}
	if len(meta.Anchors) == 0 {
		meta.Anchors = nil
	}
}

// decodeFrontMatter decodes a front-matter block with the YAML decoder.
// opening is the file's line number of the opening delimiter, for messages.
func decodeFrontMatter(yamlBlock string, opening int) (MemoryMeta, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(yamlBlock), &doc); err != nil {
		return MemoryMeta{}, fmt.Errorf("%w: front matter: %s", ErrMalformed, shiftYAMLLines(err.Error(), opening))
	}
	if doc.Kind == 0 || doc.Kind == yaml.DocumentNode && len(doc.Content) == 0 {
		return MemoryMeta{}, fmt.Errorf("%w: front matter is empty", ErrMalformed)
	}
	var meta MemoryMeta
	if err := doc.Decode(&meta); err != nil {
		return MemoryMeta{}, fmt.Errorf("%w: front matter: %s", ErrMalformed, describeDecodeError(err, &doc, opening))
	}
	if err := checkWholeVersion(&doc, opening); err != nil {
		return MemoryMeta{}, err
	}
	return meta, nil
}

// canonicalTimes gives every time.Time in v, a value decoded into
// MemoryMeta.Extra, a location that depends only on its offset: UTC for
// offset zero, an unnamed fixed zone otherwise. (The decoder gives a time
// the Local location when its offset matches the machine's zone, so the
// same text would otherwise read back differently after a rewrite, and from
// machine to machine.) Maps and slices are changed in place; the result
// replaces v.
func canonicalTimes(v any) any {
	switch t := v.(type) {
	case time.Time:
		if _, off := t.Zone(); off != 0 {
			return t.In(time.FixedZone("", off))
		}
		return t.UTC()
	case []any:
		for i, e := range t {
			t[i] = canonicalTimes(e)
		}
	case map[string]any:
		for k, e := range t {
			t[k] = canonicalTimes(e)
		}
	case map[any]any:
		// Keys may be times too: rebuild the map.
		c := make(map[any]any, len(t))
		for k, e := range t {
			c[canonicalTimes(k)] = canonicalTimes(e)
		}
		return c
	}
	return v
}

// splitFrontMatter finds the first line of s that is "---" or "..." (trailing
// spaces allowed) and returns what comes before it and after its newline.
func splitFrontMatter(s string) (yamlBlock, body string, ok bool) {
	off := 0
	for off <= len(s) {
		line, _, hasNL := strings.Cut(s[off:], "\n")
		if t := strings.TrimRight(line, " \t\r"); t == "---" || t == "..." {
			end := off + len(line)
			if hasNL {
				end++
			}
			return s[:off], s[end:], true
		}
		if !hasNL {
			break
		}
		off += len(line) + 1
	}
	return "", "", false
}

// describeDecodeError renders an error of decoding doc into MemoryMeta. A
// type error ("line 4: cannot unmarshal !!str `abc` into int") is given the
// name of the key it is about ("line 4: version: cannot unmarshal …"), and
// every line number is made the file's (see shiftYAMLLines).
func describeDecodeError(err error, doc *yaml.Node, opening int) string {
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return shiftYAMLLines(err.Error(), opening)
	}
	pairs := doc.Content[0].Content
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		// An error of a field's own decoding (a time that does not parse)
		// names neither key nor line: find the key by decoding one at a time.
		for j := 0; j+1 < len(pairs); j += 2 {
			one := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: pairs[j : j+2]}
			if one.Decode(new(MemoryMeta)) != nil {
				return fmt.Sprintf("line %d: %s: %v", pairs[j].Line+opening, pairs[j].Value, err)
			}
		}
		return shiftYAMLLines(err.Error(), opening)
	}
	msgs := make([]string, len(te.Errors))
	for i, e := range te.Errors {
		// Entries look like "line N: message"; name the last key that starts
		// on or before line N, which is the key whose value is at fault.
		if rest, ok := strings.CutPrefix(e, "line "); ok {
			num, msg, _ := strings.Cut(rest, ": ")
			if n, err := strconv.Atoi(num); err == nil {
				key := ""
				for j := 0; j+1 < len(pairs); j += 2 {
					if pairs[j].Line > n {
						break
					}
					key = pairs[j].Value
				}
				if key != "" {
					e = fmt.Sprintf("line %d: %s: %s", n, key, msg)
				}
			}
		}
		msgs[i] = shiftYAMLLines(e, opening)
	}
	return strings.Join(msgs, "; ")
}

// checkWholeVersion rejects a version written as a float: the YAML decoder
// would silently truncate "version: 1.5" to 1.
func checkWholeVersion(doc *yaml.Node, opening int) error {
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil
	}
	pairs := doc.Content[0].Content
	for j := 0; j+1 < len(pairs); j += 2 {
		if v := pairs[j+1]; pairs[j].Value == "version" && v.Kind == yaml.ScalarNode && v.ShortTag() == "!!float" {
			return fmt.Errorf("%w: front matter: line %d: version: %q is not a whole number", ErrMalformed, v.Line+opening, v.Value)
		}
	}
	return nil
}

// shiftYAMLLines rewrites "line N" in a yaml error, where N counts lines of
// the YAML block, to the file's line number (the YAML block starts on the
// line after the opening delimiter, which is the file's line opening).
func shiftYAMLLines(msg string, opening int) string {
	var b strings.Builder
	for {
		i := strings.Index(msg, "line ")
		if i < 0 {
			b.WriteString(msg)
			return b.String()
		}
		b.WriteString(msg[:i+5])
		msg = msg[i+5:]
		n, j := 0, 0
		for j < len(msg) && msg[j] >= '0' && msg[j] <= '9' {
			n = n*10 + int(msg[j]-'0')
			j++
		}
		if j == 0 {
			continue
		}
		fmt.Fprintf(&b, "%d", n+opening)
		msg = msg[j:]
	}
}

// Serialize encodes m in the file format described above. It fails, with an
// error wrapping [ErrInvalidMemory], if m does not pass [MemoryFile.Validate].
func Serialize(m *MemoryFile) ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("memcore: serialize: %w", err)
	}
	return serialize(m)
}

// serialize is Serialize for a memory already validated.
func serialize(m *MemoryFile) ([]byte, error) {
	doc, err := frontMatterNode(&m.Meta)
	if err != nil {
		return nil, fmt.Errorf("memcore: serialize: %w: encode front matter: %w", ErrInvalidMemory, err)
	}
	var buf bytes.Buffer
	buf.Grow(len(m.Content) + 512)
	buf.WriteString("---\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("memcore: serialize: %w: encode front matter: %w", ErrInvalidMemory, err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("memcore: serialize: %w: encode front matter: %w", ErrInvalidMemory, err)
	}
	buf.WriteString("---\n\n")
	buf.WriteString(m.Content)
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// frontMatterNode builds the front matter of meta as a YAML mapping: the
// known keys in their fixed order, then the Extra keys sorted.
//
// The tree is built by hand rather than by encoding the struct because the
// YAML encoder, left to itself, writes some values so that they do not read
// back as written: a string containing a newline as a literal block, which
// cannot hold a line that starts with a tab (the file would not parse
// again); the float 1.0 as "1", which reads back as an int; and the keys 1
// and 1.0 of one mapping both as "1". See strNode, floatNode and valueNode.
func frontMatterNode(meta *MemoryMeta) (*yaml.Node, error) {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	add := func(key string, v *yaml.Node) { n.Content = append(n.Content, strNode(key), v) }
	add("id", strNode(meta.ID))
	add("created_at", timeNode(meta.CreatedAt.UTC()))
	if !meta.UpdatedAt.IsZero() {
		add("updated_at", timeNode(meta.UpdatedAt.UTC()))
	}
	add("version", scalarNode("!!int", strconv.Itoa(meta.Version)))
	add("scope", strNode(string(meta.Scope)))
	add("category", strNode(string(meta.Category)))
	if meta.Supersedes != nil {
		add("supersedes", strNode(*meta.Supersedes))
	}
	if len(meta.Related) > 0 {
		seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, r := range meta.Related {
			seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{
				strNode("id"), strNode(r.ID), strNode("relationship"), strNode(string(r.Relationship)),
			}})
		}
		add("related", seq)
	}
	if meta.SessionID != "" {
		add("session_id", strNode(meta.SessionID))
	}
	if meta.Trigger != "" {
		add("trigger", strNode(string(meta.Trigger)))
	}
	addProvenance(meta, add)
	if meta.Retired {
		add("retired", scalarNode("!!bool", "true"))
	}
	if meta.RetiredReason != "" {
		add("retired_reason", strNode(meta.RetiredReason))
	}
	for _, k := range slices.Sorted(maps.Keys(meta.Extra)) {
		v, err := valueNode(meta.Extra[k])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		add(k, v)
	}
	return n, nil
}

// addProvenance adds the fields of v0.2 that meta sets, in their order:
// source, evidence, status, status_reason, rejection_reason, anchors.
func addProvenance(meta *MemoryMeta, add func(key string, v *yaml.Node)) {
	if meta.Source != SourceUnknown {
		add("source", strNode(string(meta.Source)))
	}
	if meta.Evidence != nil && !meta.Evidence.IsZero() {
		add("evidence", evidenceNode(meta.Evidence))
	}
	if meta.Status != StatusActive {
		add("status", strNode(string(meta.Status)))
	}
	if meta.StatusReason != "" {
		add("status_reason", strNode(meta.StatusReason))
	}
	if meta.RejectionReason != "" {
		add("rejection_reason", strNode(meta.RejectionReason))
	}
	if len(meta.Anchors) > 0 {
		add("anchors", anchorsNode(meta.Anchors))
	}
}

// evidenceNode is the evidence mapping: quote, then at, each when set.
func evidenceNode(e *Evidence) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	if e.Quote != "" {
		n.Content = append(n.Content, strNode("quote"), strNode(e.Quote))
	}
	if !e.At.IsZero() {
		n.Content = append(n.Content, strNode("at"), timeNode(e.At.UTC()))
	}
	return n
}

// anchorsNode is the anchors sequence: each anchor's path, symbol, blob
// and commit, each when set.
func anchorsNode(anchors []Anchor) *yaml.Node {
	seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for _, a := range anchors {
		m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for _, kv := range [][2]string{{"path", a.Path}, {"symbol", a.Symbol}, {"blob", a.Blob}, {"commit", a.Commit}} {
			if kv[1] != "" {
				m.Content = append(m.Content, strNode(kv[0]), strNode(kv[1]))
			}
		}
		seq.Content = append(seq.Content, m)
	}
	return seq
}

func scalarNode(tag, value string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value}
}

// strNode is s as a YAML string that reads back as s. A string with a
// newline is double-quoted (escaped on one line) rather than a literal
// block; one that YAML 1.1 readers would take for a bool or a sexagesimal
// number ("yes", "1:20") is quoted too, as the encoder does for struct
// fields; invalid UTF-8 is stored as !!binary, which reads back as the same
// string. Otherwise the encoder quotes s if it would read as another type.
func strNode(s string) *yaml.Node {
	n := scalarNode("!!str", s)
	switch {
	case !utf8.ValidString(s):
		n.Tag, n.Value = "!!binary", base64.StdEncoding.EncodeToString([]byte(s))
	case strings.Contains(s, "\n") || isOldBool(s) || base60Float.MatchString(s):
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}

// isOldBool reports whether YAML 1.1 reads s as a bool.
func isOldBool(s string) bool {
	switch s {
	case "y", "Y", "yes", "Yes", "YES", "on", "On", "ON",
		"n", "N", "no", "No", "NO", "off", "Off", "OFF":
		return true
	}
	return false
}

// base60Float matches what YAML 1.1 reads as a sexagesimal number.
var base60Float = regexp.MustCompile(`^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`)

func timeNode(t time.Time) *yaml.Node { return scalarNode("!!timestamp", t.Format(time.RFC3339Nano)) }

// valueNode is v, a value of MemoryMeta.Extra, as a YAML node that reads
// back as v: the types YAML decoding produces are written by hand, in a
// fixed order for mappings; any other type is left to the encoder.
func valueNode(v any) (*yaml.Node, error) {
	switch t := v.(type) {
	case nil:
		return scalarNode("!!null", "null"), nil
	case string:
		return strNode(t), nil
	case bool:
		return scalarNode("!!bool", strconv.FormatBool(t)), nil
	case int:
		return scalarNode("!!int", strconv.Itoa(t)), nil
	case int64:
		return scalarNode("!!int", strconv.FormatInt(t, 10)), nil
	case uint64:
		return scalarNode("!!int", strconv.FormatUint(t, 10)), nil
	case float64:
		return floatNode(t), nil
	case time.Time:
		if y := t.Year(); y < 0 || y > 9999 {
			return nil, fmt.Errorf("time %s is outside the years 0000-9999", t.Format(time.RFC3339))
		}
		return timeNode(t), nil
	case []any:
		return seqNode(t)
	case map[string]any:
		return stringMapNode(t)
	case map[any]any:
		return anyMapNode(t)
	}
	n := new(yaml.Node)
	if err := n.Encode(v); err != nil {
		return nil, err
	}
	return n, nil
}

// seqNode is the sequence s as a YAML node (see valueNode).
func seqNode(s []any) (*yaml.Node, error) {
	n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for _, e := range s {
		en, err := valueNode(e)
		if err != nil {
			return nil, err
		}
		n.Content = append(n.Content, en)
	}
	return n, nil
}

// stringMapNode is the mapping m as a YAML node, its keys sorted (see
// valueNode).
func stringMapNode(m map[string]any) (*yaml.Node, error) {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		en, err := valueNode(m[k])
		if err != nil {
			return nil, err
		}
		n.Content = append(n.Content, strNode(k), en)
	}
	return n, nil
}

// anyMapNode is the mapping m, whose keys are not all strings, as a YAML
// node, its keys sorted by tag then text (see valueNode).
func anyMapNode(m map[any]any) (*yaml.Node, error) {
	type pair struct{ k, v *yaml.Node }
	pairs := make([]pair, 0, len(m))
	for k, e := range m {
		kn, err := valueNode(k)
		if err != nil {
			return nil, err
		}
		en, err := valueNode(e)
		if err != nil {
			return nil, err
		}
		pairs = append(pairs, pair{kn, en})
	}
	slices.SortFunc(pairs, func(a, b pair) int {
		return cmp.Or(cmp.Compare(a.k.ShortTag(), b.k.ShortTag()), cmp.Compare(a.k.Value, b.k.Value))
	})
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for _, p := range pairs {
		n.Content = append(n.Content, p.k, p.v)
	}
	return n, nil
}

// floatNode is f as a YAML scalar that reads back as the float f (the
// encoder would write 1.0 as "1" and -0.0 as "-0", which read back as ints).
func floatNode(f float64) *yaml.Node {
	var s string
	switch {
	case math.IsNaN(f):
		s = ".nan"
	case math.IsInf(f, 1):
		s = ".inf"
	case math.IsInf(f, -1):
		s = "-.inf"
	default:
		s = strconv.FormatFloat(f, 'g', -1, 64)
		if !strings.ContainsAny(s, ".e") {
			s += ".0"
		}
	}
	return scalarNode("!!float", s)
}

// now is the clock used for new memories; tests replace it.
var now = func() time.Time { return time.Now().UTC().Truncate(time.Second) }
