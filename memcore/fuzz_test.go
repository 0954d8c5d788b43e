package memcore

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// FuzzParse: Parse never panics; an error is ErrMalformed or
// ErrInvalidMemory; whatever parses serializes, reads back as the same
// memory, and serializes to the same bytes again; its TextProblems are
// what CheckText says of each field.
func FuzzParse(f *testing.F) {
	for _, in := range formatInputs(f) {
		raw, err := os.ReadFile(in)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
		golden, err := os.ReadFile(strings.TrimSuffix(in, ".md") + ".golden")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(golden)
	}
	for _, s := range []string{
		"", "---", "---\n---\n", "---\r\n...\r\n", bom + "---\nid: x\n---\n",
		front(validLines(map[string]string{"version": "abc"})...),
		front(validLines(map[string]string{"version": "2.0"})...),
		front(append(validLines(nil), "x: {1: a, 1.0: b, ~: c}", "y: [.nan, -.inf, -0.0, 1e300]", "z: !!binary /w==")...),
		front(append(validLines(nil), "<<: {foo: 1}", "a: &x [1]", "b: *x")...),
		front(append(validLines(nil), `session_id: "\e[2J"`, "retired: true", `retired_reason: "a\0b"`, `evidence: {quote: "\x9b"}`)...) + "\nIn \x00Go\x1b[31m.\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data)
		if err != nil {
			if m != nil {
				t.Errorf("Parse returned a memory and an error")
			}
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrInvalidMemory) {
				t.Errorf("Parse error %q is neither ErrMalformed nor ErrInvalidMemory", err)
			}
			return
		}
		checkTextProblems(t, m)
		out, err := Serialize(m)
		if err != nil {
			t.Fatalf("Serialize of a parsed memory: %v", err)
		}
		m2, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(Serialize(m)): %v\ninput:\n%q\nserialized:\n%q", err, data, out)
		}
		if !equalMemory(m, m2) {
			t.Fatalf("Parse(Serialize(m)) differs\nm:  %#v\nm2: %#v\nserialized:\n%q", m, m2, out)
		}
		out2, err := Serialize(m2)
		if err != nil {
			t.Fatalf("second Serialize: %v", err)
		}
		if !bytes.Equal(out, out2) {
			t.Fatalf("Serialize is not idempotent:\n%q\n%q", out, out2)
		}
	})
}

// FuzzRoundTrip: for arbitrary content, session id and an extra string
// key/value, a memory that passes Validate round-trips exactly; one that
// does not is refused by Serialize.
func FuzzRoundTrip(f *testing.F) {
	f.Add("Prefers table-driven tests.", "session-1", "note", "value", int64(0))
	f.Add("\n\n---\n...\n---\n\n", "---", "---", "...", int64(1))
	f.Add("a\r\nb\rc\r", "\r\n", "k\r", "v\r\n", int64(-1))
	f.Add(" \t leading\ntrailing \t ", " x ", " ", "  ", int64(1<<40))
	f.Add("ünïcödé 🦀\u2028\u0085\ufeff", "\ufeff\u0085", "#", "# comment", int64(123456789))
	f.Add("{a: b}", "[1, 2]", "<<", "&anchor", int64(-62135596800))
	f.Add("\x00\x01\x7f", "\x00", "\x00", "\x1b[31m", int64(253402300799))
	f.Add("\xff", "yes", "null", "~", int64(0))
	f.Fuzz(func(t *testing.T, content, session, key, value string, sec int64) {
		m := sample(idA)
		m.Content = content
		m.Meta.SessionID = session
		if key != "" {
			m.Meta.Extra = map[string]any{key: value}
		}
		// Any instant, to the nanosecond; Validate refuses years outside
		// 0000-9999, which RFC 3339 cannot write.
		m.Meta.UpdatedAt = time.Unix(sec, sec&0x3fffffff%1e9).UTC()
		checkTextProblems(t, m)
		data, err := Serialize(m)
		if m.Validate() != nil {
			if !errors.Is(err, ErrInvalidMemory) {
				t.Fatalf("Serialize of an invalid memory: %v", err)
			}
			return
		}
		if err != nil {
			t.Fatalf("Serialize of a valid memory: %v", err)
		}
		got, err := Parse(data)
		if err != nil {
			t.Fatalf("Parse(Serialize(m)): %v\n%q", err, data)
		}
		if !equalMemory(got, m) {
			t.Fatalf("round trip differs\ngot:  %#v\nwant: %#v\nfile: %q", got, m, data)
		}
	})
}
