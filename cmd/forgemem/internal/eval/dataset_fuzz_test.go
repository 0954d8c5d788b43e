package eval

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
)

// FuzzReadDataset checks that a dataset file, whatever it holds, is read
// without a panic into collections that each validate and have distinct
// names, or refused with an error wrapping ErrDataset that names the line
// and says what is wrong without Go's words for it; and that what is read
// writes back as a file that reads as the same.
func FuzzReadDataset(f *testing.F) {
	f.Add([]byte(`{"collection": "c", "memories": [{"id": "m1", "content": "Prefers tabs."}], "queries": [{"id": "q1", "text": "tabs or spaces?", "relevant": ["m1"]}]}`))
	f.Add([]byte(`{"collection": "c", "memories": [{"id": "m1", "content": "x", "category": "patterns", "scope": "repo"}], "queries": [{"id": "q1", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}], "relevant": []}]}` + "\n\n" +
		`{"collection": "d", "memories": [{"id": "m1", "content": "y"}], "queries": [{"id": "q1", "text": "t", "messages": [], "relevant": null}]}`))
	f.Add([]byte(`{"collection": "c", "memories": [], "queries": []} {}`))
	f.Add([]byte("{\"collection\": \"\xff\", \"memories\": [{\"id\": \"m\", \"content\": \"\\u0000\"}], \"queries\": [{\"id\": \"q\", \"text\": \"\\ud800\"}]}"))
	f.Add([]byte("\xef\xbb\xbf{\"Collection\": \"c\", \"MEMORIES\": [{\"id\": \"m1\", \"content\": \"x\"}], \"queries\": [{\"id\": \"q1\", \"text\": \"x\", \"relevant\": [\"m1\"]}]}\r\n"))
	f.Add([]byte(`[{"collection": "c"}]`))
	f.Add([]byte(`{"collection": "c", "memories": [{"id": 1, "content": ["x"]}, "m"], "queries": [{"id": "q", "messages": [{"role": 2}], "relevant": [3]}]}`))
	f.Add([]byte(`{"collection": "c", "collection": 5, "memories": [{"id": "m", "content": "x", "tags": []}], "extra": {}}`))
	f.Add([]byte(`{"collection": "c", "memories": [{"id": "m1", "content": "x"}], "queries": [{"id": "q1", "text": "x", "relevant": ["m1"]}]}` + "\n" +
		`{"collection": "d", "memories": [{"id": "m1", "content": "x"}], "queries": [{"id": "q1", "text": "x", "relevant": ["m1"]}]}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cols, err := ReadDataset(bytes.NewReader(data))
		if err != nil {
			checkReadError(t, err, collectionShape)
			return
		}
		checkOneValuePerLine(t, data)
		names := make(map[string]bool)
		for i := range cols {
			if err := cols[i].Validate(); err != nil {
				t.Fatalf("collection %d does not validate: %v", i, err)
			}
			if names[cols[i].Name] {
				t.Fatalf("collection %q read twice", cols[i].Name)
			}
			names[cols[i].Name] = true
		}
		var first bytes.Buffer
		if err := WriteDataset(&first, cols); err != nil {
			t.Fatal(err)
		}
		back, err := ReadDataset(bytes.NewReader(first.Bytes()))
		if err != nil {
			t.Fatalf("the file written does not read back: %v\n%s", err, first.Bytes())
		}
		var second bytes.Buffer
		if err := WriteDataset(&second, back); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first.Bytes(), second.Bytes()) {
			t.Fatalf("read back as something else:\n%s\nthen\n%s", first.Bytes(), second.Bytes())
		}
	})
}

// FuzzReadOffTopic checks that an off-topic file, whatever it holds, is
// read without a panic into queries with distinct ids, a text or a
// conversation, and no relevant memory, or refused as FuzzReadDataset
// checks.
func FuzzReadOffTopic(f *testing.F) {
	f.Add([]byte(`{"id": "off-1", "text": "banana bread?"}` + "\n" + `{"id": "off-2", "messages": [{"role": "user", "content": "hi"}], "relevant": []}`))
	f.Add([]byte(`{"id": "off-1", "text": "x", "relevant": ["m1"]}`))
	f.Add([]byte(`{"id": "a", "text": "x"}` + "\n" + `{"id": "a", "text": "y"}`))
	f.Add([]byte("\xef\xbb\xbf{\"ID\": \"off-1\", \"Text\": \"x\"}\r\n\n{\"id\": 2, \"messages\": [[]], \"query\": 1}"))
	f.Add([]byte(`"banana bread?"`))
	f.Add([]byte(`{"id":"a","text":"b"} {"id":"c","text":"d"}` + "\n" + `{"id":"e","text":"f"}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		qs, err := ReadOffTopic(bytes.NewReader(data))
		if err != nil {
			checkReadError(t, err, offTopicShape)
			return
		}
		checkOneValuePerLine(t, data)
		ids := make(map[string]bool)
		for _, q := range qs {
			switch {
			case q.ID == "" || ids[q.ID]:
				t.Fatalf("query id %q empty or repeated", q.ID)
			case !q.OffTopic() || q.Relevant == nil:
				t.Fatalf("query %q: relevant %v, want an empty list", q.ID, q.Relevant)
			case q.check(nil) != "":
				t.Fatalf("query %q: %s", q.ID, q.check(nil))
			}
			ids[q.ID] = true
		}
	})
}

// checkOneValuePerLine checks that each line of a file that was read is
// one JSON value, with space around it (a byte order mark before the
// first), or blank.
func checkOneValuePerLine(t *testing.T, data []byte) {
	t.Helper()
	for i, line := range bytes.Split(bytes.TrimPrefix(data, []byte("\ufeff")), []byte("\n")) {
		if line = bytes.TrimSpace(line); len(line) > 0 && !json.Valid(line) {
			t.Fatalf("line %d, %q, read though it is not one JSON value", i+1, line)
		}
	}
}

// lineError is how an error about a line of a file begins.
var lineError = regexp.MustCompile(`^(off-topic queries: )?line [1-9][0-9]*: `)

// checkReadError checks an error of ReadDataset or ReadOffTopic, whose
// lines are of shape s: it wraps ErrDataset, names the line unless the file
// has nothing, shows none of Go's words, and says what is wrong rather
// than only what s is (what it says when it cannot tell).
func checkReadError(t *testing.T, err error, s *shape) {
	t.Helper()
	msg := err.Error()
	switch {
	case !errors.Is(err, ErrDataset):
		t.Fatalf("error %v does not wrap ErrDataset", err)
	case !lineError.MatchString(msg) && !strings.HasSuffix(msg, ": no collection") && !strings.HasSuffix(msg, ": no query"):
		t.Fatalf("error %q names no line", msg)
	case goInternals.MatchString(msg):
		t.Fatalf("error %q shows Go's %q", msg, goInternals.FindString(msg))
	case strings.HasSuffix(msg, "dataset: want "+s.want):
		t.Fatalf("error %q does not say what is wrong", msg)
	}
}
