package memcapture

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// errUnparseable: a classifier reply holds no list of memories.
var errUnparseable = errors.New("classifier reply holds no JSON list of memories")

// maxCandidates bounds how many '{' and '[' positions of a prose reply are
// tried as the start of the JSON value.
const maxCandidates = 64

// maxWrapDepth bounds how deep wrapping objects are searched for the list.
const maxWrapDepth = 3

// parseReply finds the list of memories in a classifier reply and returns
// its elements, undecoded. It accepts, in this order: the reply as one JSON
// value; the body of a ``` fence (with or without a language tag); the first
// JSON value embedded in prose. The value may be the object
// {"memories": [...]}, a bare array, an object wrapping the array under
// another key (at most three levels deep), or a single memory object.
// An empty list (and "memories": null) means nothing is worth keeping.
func parseReply(reply string) ([]json.RawMessage, error) {
	s := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(reply), "\ufeff"))
	if s == "" {
		return nil, fmt.Errorf("%w: the reply is empty", errUnparseable)
	}
	if els, ok := listIn([]byte(s)); ok {
		return els, nil
	}
	for _, body := range fences(s) {
		if els, ok := listIn([]byte(body)); ok {
			return els, nil
		}
	}
	tried := 0
	for i := 0; i < len(s) && tried < maxCandidates; i++ {
		if s[i] != '{' && s[i] != '[' {
			continue
		}
		tried++
		var raw json.RawMessage
		if err := json.NewDecoder(strings.NewReader(s[i:])).Decode(&raw); err != nil {
			continue
		}
		if els, ok := fromValue(raw, 0); ok {
			return els, nil
		}
	}
	return nil, errUnparseable
}

// fences returns the bodies of the ``` blocks of s; an unclosed block runs
// to the end.
func fences(s string) []string {
	var out []string
	for {
		i := strings.Index(s, "```")
		if i < 0 {
			return out
		}
		s = s[i+3:]
		// Skip the language tag: the rest of the opening line.
		if nl := strings.IndexByte(s, '\n'); nl >= 0 && !strings.ContainsAny(s[:nl], "{[") {
			s = s[nl+1:]
		}
		end := strings.Index(s, "```")
		if end < 0 {
			return append(out, s)
		}
		out = append(out, s[:end])
		s = s[end+3:]
	}
}

// listIn parses b as exactly one JSON value holding the list.
func listIn(b []byte) ([]json.RawMessage, bool) {
	b = bytes.TrimSpace(b)
	if !json.Valid(b) {
		return nil, false
	}
	return fromValue(b, 0)
}

// fromValue finds the list of memories in a JSON value.
func fromValue(raw json.RawMessage, depth int) ([]json.RawMessage, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, false
	}
	switch raw[0] {
	case '[':
		var arr []json.RawMessage
		if json.Unmarshal(raw, &arr) != nil || !listOfObjects(arr) {
			return nil, false
		}
		return arr, true
	case '{':
		return fromObject(raw, depth)
	}
	return nil, false
}

// fromObject finds the list of memories in a JSON object: its "memories"
// key (in any case), the object itself when it is one memory (it has
// "content"), or a list or object it wraps.
func fromObject(raw json.RawMessage, depth int) ([]json.RawMessage, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return nil, false
	}
	keys := slices.Sorted(maps.Keys(obj))
	for _, k := range keys {
		if strings.EqualFold(k, "memories") {
			v := bytes.TrimSpace(obj[k])
			if string(v) == "null" {
				return nil, true
			}
			return fromValue(v, depth+1)
		}
	}
	if _, ok := obj["content"]; ok {
		return []json.RawMessage{raw}, true
	}
	if depth >= maxWrapDepth {
		return nil, false
	}
	return fromWrapper(obj, keys, depth)
}

// fromWrapper finds the list of memories in the values of a wrapping
// object, keys sorted: a non-empty list first, then an empty one, then a
// nested object holding one.
func fromWrapper(obj map[string]json.RawMessage, keys []string, depth int) ([]json.RawMessage, bool) {
	empty := false
	for _, v := range valuesStarting(obj, keys, '[') {
		if els, ok := fromValue(v, depth+1); ok {
			if len(els) > 0 {
				return els, true
			}
			empty = true
		}
	}
	if empty {
		return nil, true
	}
	for _, v := range valuesStarting(obj, keys, '{') {
		if els, ok := fromValue(v, depth+1); ok {
			return els, true
		}
	}
	return nil, false
}

// valuesStarting returns the values of obj, in the order of keys, that
// start with the byte open ('[' or '{') once trimmed.
func valuesStarting(obj map[string]json.RawMessage, keys []string, open byte) []json.RawMessage {
	var out []json.RawMessage
	for _, k := range keys {
		if v := bytes.TrimSpace(obj[k]); len(v) > 0 && v[0] == open {
			out = append(out, v)
		}
	}
	return out
}

// listOfObjects reports whether arr can be the list of memories: empty, or
// holding at least one object (other elements are skipped item by item).
// It tells the list from prose brackets such as "[1]".
func listOfObjects(arr []json.RawMessage) bool {
	if len(arr) == 0 {
		return true
	}
	for _, e := range arr {
		if e = bytes.TrimSpace(e); len(e) > 0 && e[0] == '{' {
			return true
		}
	}
	return false
}
