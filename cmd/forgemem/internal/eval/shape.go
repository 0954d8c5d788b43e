package eval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/jsonlines"
	"github.com/forgemem/forgemem/memcore"
)

// decodeLine decodes the JSON value on a line of a dataset or off-topic
// file into v as encoding/json does, unknown fields refused. A line that
// is not exactly one JSON value (a second value, or a "]" after it) is
// refused with an error wrapping jsonlines.ErrNotOneValue, followed by
// perLine, what a line should be. What is accepted is encoding/json's to
// say: s, the shape of v, only says why a value is refused, in the file's
// terms.
func decodeLine(l jsonlines.Line, v any, s *shape, perLine string) error {
	raw, err := l.Value()
	if err != nil {
		return fmt.Errorf("%w; %s", err, perLine)
	}
	strict := json.NewDecoder(bytes.NewReader(raw))
	strict.DisallowUnknownFields()
	if err := strict.Decode(v); err != nil {
		if p := s.problem(raw); p != "" {
			return errors.New(p)
		}
		return fmt.Errorf("want %s", s.want) // not reached: s finds what encoding/json refuses
	}
	return nil
}

// A shape is what a JSON object of a dataset may hold: the fields of one
// of its Go types, to say what is wrong with an object that does not
// decode as that type, in the file's terms.
type shape struct {
	// want is what the object is, after "want": "a JSON object with id
	// and content".
	want   string
	fields []field
}

// A field is a member of a [shape].
type field struct {
	// name is its json name.
	name string
	// kind is the [jsonlines.Kind] of its values, "a string" or "an
	// array"; null is always taken, as encoding/json takes it.
	kind string
	// want is what its value is, after "want".
	want string
	// each is the shape of each item of an array of objects, called item
	// ("memory") in errors; with each nil, the items are strings, and item
	// is what one is, after "want".
	each *shape
	item string
}

// problem says what is wrong with v, one JSON value, that encoding/json
// would not decode into the type of s: that it is not an object, a field
// unknown, or a value, at any depth, of the wrong kind. It returns "" when
// it finds nothing wrong.
func (s *shape) problem(v []byte) string {
	if k := jsonlines.Kind(v); k != "an object" {
		return fmt.Sprintf("want %s, got %s", s.want, k)
	}
	dec := json.NewDecoder(bytes.NewReader(v))
	if _, err := dec.Token(); err != nil { // {
		return ""
	}
	for dec.More() {
		t, err := dec.Token()
		name, _ := t.(string)
		var value json.RawMessage
		if err != nil || dec.Decode(&value) != nil {
			return ""
		}
		f := s.field(name)
		if f == nil {
			return fmt.Sprintf("unknown field %q; %s", jsonlines.Clip(name), s.names())
		}
		// Every member is looked at, a repeated one too, as encoding/json
		// decodes each.
		if p := f.problem(value); p != "" {
			return p
		}
	}
	return ""
}

// field returns the field that a member called name sets: the one of that
// name, or else of that name in another case, as encoding/json matches
// them; nil when there is none.
func (s *shape) field(name string) *field {
	for i := range s.fields {
		if s.fields[i].name == name {
			return &s.fields[i]
		}
	}
	for i := range s.fields {
		if strings.EqualFold(s.fields[i].name, name) {
			return &s.fields[i]
		}
	}
	return nil
}

// names says which fields s has.
func (s *shape) names() string {
	names := make([]string, len(s.fields))
	for i, f := range s.fields {
		names[i] = f.name
	}
	return "the fields are " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// problem says what is wrong with v, a value of f, or "".
func (f *field) problem(v json.RawMessage) string {
	if jsonlines.Absent(v) {
		return ""
	}
	if k := jsonlines.Kind(v); k != f.kind {
		return fmt.Sprintf("%s: want %s, got %s", f.name, f.want, k)
	}
	var items []json.RawMessage
	if f.kind != "an array" || json.Unmarshal(v, &items) != nil {
		return ""
	}
	for i, item := range items {
		switch {
		case jsonlines.Absent(item): // the item's zero value
		case f.each != nil:
			if p := f.each.problem(item); p != "" {
				return fmt.Sprintf("%s %d: %s", f.item, i+1, p)
			}
		case jsonlines.Kind(item) != "a string":
			return fmt.Sprintf("%s: item %d: want %s, got %s", f.name, i+1, f.item, jsonlines.Kind(item))
		}
	}
	return ""
}

// text is a field whose value is a string.
func text(name, want string) field {
	return field{name: name, kind: "a string", want: want}
}

// The shapes of a dataset's objects, those of [Collection], [Memory],
// [Query] and [Message], and of a line of an off-topic file, a [Query].
var (
	messageShape = &shape{want: "a JSON object with role and content", fields: []field{
		text("role", "a string (user or assistant)"),
		text("content", "a string"),
	}}
	queryShape = &shape{want: "a JSON object with id, text or messages, and relevant", fields: []field{
		text("id", "a string"),
		text("text", "a string"),
		{name: "messages", kind: "an array", want: "an array of message objects", each: messageShape, item: "message"},
		{name: "relevant", kind: "an array", want: "an array of memory ids", item: "a string (a memory id)"},
	}}
	memoryShape = &shape{want: "a JSON object with id and content", fields: []field{
		text("id", "a string"),
		text("content", "a string"),
		text("category", "a string ("+categories()+")"),
		text("scope", "a string (repo or user)"),
	}}
	collectionShape = &shape{want: "a JSON object with collection, memories and queries", fields: []field{
		text("collection", "a string (the collection's name)"),
		{name: "memories", kind: "an array", want: "an array of memory objects", each: memoryShape, item: "memory"},
		{name: "queries", kind: "an array", want: "an array of query objects", each: queryShape, item: "query"},
	}}
	offTopicShape = &shape{want: "a JSON object with id and text (or messages)", fields: queryShape.fields}
)

// What a line of each file is, for a line that is not JSON.
const (
	collectionLine = `want one {"collection": …, "memories": […], "queries": […]} object per line`
	offTopicLine   = `want one {"id": …, "text": …} object per line`
)

// categories lists memcore's categories, for errors: "a, b or c".
func categories() string {
	all := memcore.Categories()
	names := make([]string, len(all))
	for i, c := range all {
		names[i] = string(c)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
