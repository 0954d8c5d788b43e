package eval

import (
	"errors"
	"io"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/jsonlines"
)

// goInternals are what an error about a line of a dataset or off-topic
// file must not show: encoding/json's words about Go's types.
var goInternals = regexp.MustCompile(`Go (value|struct)|json: |eval\.|memcore\.|\[\]string|cannot unmarshal`)

// TestReadDatasetSaysWhatIsWrong: a line that is not a collection is
// refused with an error that names the line, the field as the file names
// it and the memory, query or message by its place, says what was found
// and what is wanted, and shows none of Go's words.
func TestReadDatasetSaysWhatIsWrong(t *testing.T) {
	const (
		prefix  = "line 1: invalid evaluation dataset: "
		perLine = `; want one {"collection": …, "memories": […], "queries": […]} object per line`
		mems    = `"memories": [{"id": "m1", "content": "x"}]`
		queries = `"queries": [{"id": "q1", "text": "x", "relevant": ["m1"]}]`
	)
	good := `{"collection": "c", ` + mems + `, ` + queries + `}`
	// with is the good line with old replaced by new, once.
	with := func(old, new string) string {
		if !strings.Contains(good, old) {
			t.Fatalf("%q is not in the good line", old)
		}
		return strings.Replace(good, old, new, 1)
	}
	tests := []struct {
		name, in string
		want     string // the whole error
	}{
		{"an array", `[1, 2]`, prefix + "want a JSON object with collection, memories and queries, got an array"},
		{"a string", `"c"`, prefix + "want a JSON object with collection, memories and queries, got a string"},
		{"a name that is a number", with(`"c"`, `5`), prefix + "collection: want a string (the collection's name), got a number"},
		{"memories that are an object", with(mems, `"memories": {"id": "m1"}`), prefix + "memories: want an array of memory objects, got an object"},
		{"a memory that is a string", with(mems, `"memories": [{"id": "m1", "content": "x"}, "m2"]`), prefix + "memory 2: want a JSON object with id and content, got a string"},
		{"an id that is a number", with(`"id": "m1"`, `"id": 1`), prefix + "memory 1: id: want a string, got a number"},
		{"content that is an array", with(`"content": "x"`, `"content": ["x"]`), prefix + "memory 1: content: want a string, got an array"},
		{"a category that is a number", with(`"content": "x"`, `"content": "x", "category": 3`),
			prefix + "memory 1: category: want a string (coding-preferences, project-conventions, architectural-decisions, user-facts, corrections or patterns), got a number"},
		{"a scope that is true", with(`"content": "x"`, `"content": "x", "scope": true`), prefix + "memory 1: scope: want a string (repo or user), got true"},
		{"queries that are a string", with(queries, `"queries": "q1"`), prefix + "queries: want an array of query objects, got a string"},
		{"a query that is a number", with(queries, `"queries": [7]`), prefix + "query 1: want a JSON object with id, text or messages, and relevant, got a number"},
		{"a text that is an object", with(`"text": "x"`, `"text": {"en": "x"}`), prefix + "query 1: text: want a string, got an object"},
		{"messages that are a string", with(`"text": "x"`, `"messages": "hi"`), prefix + "query 1: messages: want an array of message objects, got a string"},
		{"a message that is an array", with(`"text": "x"`, `"messages": [{"role": "user", "content": "a"}, ["user", "b"]]`),
			prefix + "query 1: message 2: want a JSON object with role and content, got an array"},
		{"a role that is a number", with(`"text": "x"`, `"messages": [{"role": 1, "content": "a"}]`), prefix + "query 1: message 1: role: want a string (user or assistant), got a number"},
		{"message content that is an array", with(`"text": "x"`, `"messages": [{"role": "user", "content": [{"type": "text"}]}]`),
			prefix + "query 1: message 1: content: want a string, got an array"},
		{"relevant that is a string", with(`["m1"]`, `"m1"`), prefix + "query 1: relevant: want an array of memory ids, got a string"},
		{"a relevant id that is a number", with(`["m1"]`, `["m1", 2]`), prefix + "query 1: relevant: item 2: want a string (a memory id), got a number"},
		{"an unknown field", with(`"c", `, `"c", "name": "c", `), prefix + `unknown field "name"; the fields are collection, memories and queries`},
		{"an unknown memory field", with(`"content": "x"`, `"content": "x", "tags": []`), prefix + `memory 1: unknown field "tags"; the fields are id, content, category and scope`},
		{"an unknown query field", with(`"text": "x"`, `"text": "x", "Added": true`), prefix + `query 1: unknown field "Added"; the fields are id, text, messages and relevant`},
		{"an unknown message field", with(`"text": "x"`, `"messages": [{"role": "user", "content": "a", "at": "2026-01-01T00:00:00Z"}]`),
			prefix + `query 1: message 1: unknown field "at"; the fields are role and content`},
		{"a long unknown field, cut", with(`"c", `, `"c", "`+strings.Repeat("x", 100)+`": 1, `), prefix + `unknown field "` + strings.Repeat("x", 64) + `…"; the fields are collection, memories and queries`},
		{"a repeated field, the first of the wrong kind", with(`"c"`, `1, "collection": "c"`), prefix + "collection: want a string (the collection's name), got a number"},
		{"a field in another case, of the wrong kind", with(`"c", `, `"c", "Memories": 3, `), prefix + "memories: want an array of memory objects, got a number"},
		{"not JSON", `collection: c`, prefix + `not valid JSON: unexpected "c" at column 1` + perLine},
		{"not JSON, indented", "\t  collection: c", prefix + `not valid JSON: unexpected "c" at column 4` + perLine},
		{"not JSON after a non-ASCII letter", `{"collection": "é", x}`, prefix + `not valid JSON: unexpected "x" at column 21` + perLine},
		{"cut off", `{"collection": "c`, prefix + "not valid JSON: the line ends inside a value" + perLine},
		{"two objects on a line", good + ` {}`, prefix + "more than one JSON value on the line" + perLine},
		{"a byte order mark on line 2", good + "\n\ufeff" + strings.Replace(good, `"c"`, `"d"`, 1),
			`line 2: invalid evaluation dataset: not valid JSON: unexpected "\ufeff" at column 1` + perLine},
		// Read as before, then refused by the checks that follow.
		{"null", `null`, prefix + `a collection without a name ("collection")`},
		{"a null memory", with(mems, `"memories": [null]`), prefix + `collection "c": memory 1 has no id`},
		{"a null relevant id", with(`["m1"]`, `[null]`), prefix + `collection "c": query "q1": relevant memory "" is not in the collection`},
		{"an unknown category", with(`"content": "x"`, `"content": "x", "category": "trivia"`),
			prefix + `collection "c": memory "m1": unknown category "trivia" (want coding-preferences, project-conventions, architectural-decisions, user-facts, corrections or patterns)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cols, err := ReadDataset(strings.NewReader(tt.in))
			wantError(t, cols, err, tt.want)
		})
	}
}

// wantError checks that a file read as got was refused with an error that
// wraps ErrDataset, says want, and shows none of Go's words.
func wantError(t *testing.T, got any, err error, want string) {
	t.Helper()
	if !errors.Is(err, ErrDataset) {
		t.Fatalf("read %+v, %v; want an error wrapping ErrDataset", got, err)
	}
	if err.Error() != want {
		t.Errorf("error\n%s\nwant\n%s", err, want)
	}
	if m := goInternals.FindString(err.Error()); m != "" {
		t.Errorf("error %q shows Go's %q", err, m)
	}
}

// TestReadDatasetReadsWhatItDid: a byte order mark at the start is
// skipped; otherwise what is read is what encoding/json reads, field names
// in any case, the last of a repeated field, nulls as nothing.
func TestReadDatasetReadsWhatItDid(t *testing.T) {
	want := []Collection{{Name: "c", Memories: []Memory{{ID: "m1", Content: "x"}}, Queries: []Query{{ID: "q1", Text: "x", Relevant: []string{"m1"}}}}}
	tests := []struct{ name, in string }{
		{"a byte order mark first", "\ufeff" + `{"collection": "c", "memories": [{"id": "m1", "content": "x"}], "queries": [{"id": "q1", "text": "x", "relevant": ["m1"]}]}` + "\r\n"},
		{"a byte order mark, then a blank line", "\ufeff\n\n" + `{"collection": "c", "memories": [{"id": "m1", "content": "x"}], "queries": [{"id": "q1", "text": "x", "relevant": ["m1"]}]}`},
		{"fields named in another case", `{"Collection": "c", "MEMORIES": [{"Id": "m1", "content": "x"}], "queries": [{"ID": "q1", "Text": "x", "relevant": ["m1"]}]}`},
		{"a repeated field", `{"collection": "b", "collection": "c", "memories": [{"id": "m1", "content": "x"}], "queries": [{"id": "q1", "text": "x", "relevant": ["m1"]}]}`},
		{"nulls", `{"collection": "c", "memories": [{"id": "m1", "content": "x", "category": null}], "queries": [{"id": "q1", "text": "x", "messages": null, "relevant": ["m1"]}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cols, err := ReadDataset(strings.NewReader(tt.in))
			if err != nil || !reflect.DeepEqual(cols, want) {
				t.Errorf("ReadDataset = %+v, %v; want %+v", cols, err, want)
			}
		})
	}
	if cols, err := ReadDataset(strings.NewReader("\ufeff\n")); !errors.Is(err, ErrDataset) || err.Error() != "invalid evaluation dataset: no collection" {
		t.Errorf("a byte order mark alone: %+v, %v; want no collection", cols, err)
	}
}

// TestReadOffTopicSaysWhatIsWrong: as TestReadDatasetSaysWhatIsWrong, for
// a file of off-topic queries.
func TestReadOffTopicSaysWhatIsWrong(t *testing.T) {
	const (
		prefix  = "off-topic queries: line 1: invalid evaluation dataset: "
		perLine = `; want one {"id": …, "text": …} object per line`
	)
	tests := []struct {
		name, in string
		want     string // the whole error
	}{
		{"an array", `["off-1", "banana bread?"]`, prefix + "want a JSON object with id and text (or messages), got an array"},
		{"an id that is a number", `{"id": 1, "text": "x"}`, prefix + "id: want a string, got a number"},
		{"a text that is an array", `{"id": "a", "text": ["x"]}`, prefix + "text: want a string, got an array"},
		{"a message that is a string", `{"id": "a", "messages": ["hi"]}`, prefix + "message 1: want a JSON object with role and content, got a string"},
		{"a role that is null, then a number", `{"id": "a", "messages": [{"role": "user", "content": "a"}, {"role": null, "role": 2, "content": "b"}]}`,
			prefix + "message 2: role: want a string (user or assistant), got a number"},
		{"relevant that is an object", `{"id": "a", "text": "x", "relevant": {}}`, prefix + "relevant: want an array of memory ids, got an object"},
		{"an unknown field", `{"id": "a", "query": "x"}`, prefix + `unknown field "query"; the fields are id, text, messages and relevant`},
		{"not JSON", `banana bread?`, prefix + `not valid JSON: unexpected "b" at column 1` + perLine},
		{"cut off", `{"id": "a", "text": "x`, prefix + "not valid JSON: the line ends inside a value" + perLine},
		{"a byte order mark on line 2", `{"id": "a", "text": "x"}` + "\n\ufeff" + `{"id": "b", "text": "y"}`,
			`off-topic queries: line 2: invalid evaluation dataset: not valid JSON: unexpected "\ufeff" at column 1` + perLine},
		{"relevant memories", `{"id": "a", "text": "x", "relevant": ["m1"]}`, prefix + `query "a" lists relevant memories; an off-topic query has none`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			qs, err := ReadOffTopic(strings.NewReader(tt.in))
			wantError(t, qs, err, tt.want)
		})
	}
	qs, err := ReadOffTopic(strings.NewReader("\ufeff" + `{"id": "a", "text": "x"}` + "\r\n" + `{"ID": "b", "Text": "y", "relevant": null}`))
	if want := []Query{{ID: "a", Text: "x", Relevant: []string{}}, {ID: "b", Text: "y", Relevant: []string{}}}; err != nil || !reflect.DeepEqual(qs, want) {
		t.Errorf("a file with a byte order mark = %+v, %v; want %+v", qs, err, want)
	}
}

// TestShapesAreTheTypes: the fields each shape names, which explain why a
// line does not decode, are those of the Go type it decodes into.
func TestShapesAreTheTypes(t *testing.T) {
	for _, tt := range []struct {
		s   *shape
		typ any
	}{{collectionShape, Collection{}}, {memoryShape, Memory{}}, {queryShape, Query{}}, {offTopicShape, Query{}}, {messageShape, Message{}}} {
		var tags, names []string
		typ := reflect.TypeOf(tt.typ)
		for i := range typ.NumField() {
			if tag, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ","); tag != "-" {
				tags = append(tags, tag)
			}
		}
		for _, f := range tt.s.fields {
			names = append(names, f.name)
		}
		if !slices.Equal(names, tags) {
			t.Errorf("the shape of %s names %v, want its fields %v", typ.Name(), names, tags)
		}
	}
}

// TestReadersWantOneValuePerLine: a line of a dataset or off-topic file
// is one JSON value, with space around it; a second value after it, the
// "]" or "," of an array cut into lines by hand, or anything else, is
// refused with an error that names the file's line, says what follows the
// value and at which column, and wraps ErrDataset and
// jsonlines.ErrNotOneValue (a *jsonlines.NotOneValueError).
func TestReadersWantOneValuePerLine(t *testing.T) {
	readers := []struct {
		name         string
		first, line  string // two good lines, the second of which is followed by what a test adds
		prefix, want string // the error's start, of line 3, and end
		read         func(io.Reader) (int, error)
	}{
		{"dataset",
			`{"collection": "b", "memories": [{"id": "m1", "content": "x"}], "queries": [{"id": "q1", "text": "x", "relevant": ["m1"]}]}`,
			`{"collection": "c", "memories": [{"id": "m1", "content": "x"}], "queries": [{"id": "q1", "text": "x", "relevant": ["m1"]}]}`,
			"line 3: invalid evaluation dataset: ", `; want one {"collection": …, "memories": […], "queries": […]} object per line`,
			func(r io.Reader) (int, error) { cols, err := ReadDataset(r); return len(cols), err }},
		{"off-topic queries", `{"id": "z", "text": "y"}`, `{"id":"a","text":"b"}`,
			"off-topic queries: line 3: invalid evaluation dataset: ", `; want one {"id": …, "text": …} object per line`,
			func(r io.Reader) (int, error) { qs, err := ReadOffTopic(r); return len(qs), err }},
	}
	tests := []struct {
		name, after string
		at          int    // the column of what is refused, counted from the line's end
		want        string // what is wrong, with %d for the column; "" when the line is read
	}{
		{"trailing whitespace", " \t\u00a0 ", 0, ""},
		{"a valid line", "", 0, ""},
		{"a trailing second value", ` {"id":"c","text":"d"}`, 2, "more than one JSON value on the line"},
		{"a trailing ]", "]", 1, `not valid JSON: unexpected "]" at column %d, after the object`},
		{"a trailing ] after space", "  ]  ", 3, `not valid JSON: unexpected "]" at column %d, after the object`},
		{"a trailing comma", ",", 1, `not valid JSON: unexpected "," at column %d, after the object`},
		{"trailing garbage", " xyz", 2, `not valid JSON: unexpected "x" at column %d, after the object`},
		{"a second value cut off", ` {"id":`, 2, `not valid JSON: unexpected "{" at column %d, after the object`},
	}
	for _, r := range readers {
		for _, tt := range tests {
			t.Run(r.name+"/"+tt.name, func(t *testing.T) {
				n, err := r.read(strings.NewReader("\ufeff" + r.first + "\r\n\n" + r.line + tt.after + "\n"))
				if tt.want == "" {
					if err != nil || n != 2 {
						t.Fatalf("read %d, %v; want 2 read", n, err)
					}
					return
				}
				column := len(r.line) + tt.at
				wantError(t, n, err, r.prefix+strings.ReplaceAll(tt.want, "%d", strconv.Itoa(column))+r.want)
				var one *jsonlines.NotOneValueError
				if !errors.Is(err, jsonlines.ErrNotOneValue) || !errors.As(err, &one) || one.N != 3 || one.Column != column {
					t.Errorf("error %v: want a *jsonlines.NotOneValueError of line 3, column %d", err, column)
				}
			})
		}
	}
}
