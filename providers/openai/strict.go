package openai

import "encoding/json"

// strictUnsupported are JSON Schema keywords OpenAI's strict structured
// outputs do not accept; a schema using any of them is sent with
// strict: false, which the API treats as guidance rather than a constraint.
var strictUnsupported = []string{
	"allOf", "oneOf", "not", "if", "then", "else",
	"dependentRequired", "dependentSchemas", "patternProperties",
	"unevaluatedProperties", "unevaluatedItems", "propertyNames",
}

// maxStrictDepth bounds the walk over a schema, which OpenAI bounds too
// (at most 10 levels of nesting); deeper schemas are sent non-strict.
const maxStrictDepth = 32

// strictCompatible reports whether the JSON Schema def meets the rules of
// OpenAI's strict mode, so that "strict": true can be sent with it: the
// root is an object schema; every object schema lists all its properties in
// "required" and sets "additionalProperties": false; no keyword of
// strictUnsupported appears. Sub-schemas are reached through properties,
// items, anyOf, $defs and definitions. A schema that fails these rules is
// still sent, with strict false.
func strictCompatible(def json.RawMessage) bool {
	var root map[string]json.RawMessage
	if err := json.Unmarshal(def, &root); err != nil || root == nil {
		return false
	}
	if typeOf(root) != "object" {
		return false
	}
	return strictNode(root, 0)
}

// typeOf returns the schema's "type" when it is a single string.
func typeOf(node map[string]json.RawMessage) string {
	var t string
	if raw, ok := node["type"]; ok {
		_ = json.Unmarshal(raw, &t)
	}
	return t
}

// strictNode checks one schema node and, through strictChild, every
// sub-schema it holds.
func strictNode(node map[string]json.RawMessage, depth int) bool {
	if depth > maxStrictDepth || usesUnsupported(node) {
		return false
	}
	if raw, ok := node["items"]; ok && !strictChild(raw, depth) {
		return false
	}
	return strictObject(node, depth) &&
		strictList(node["anyOf"], depth) &&
		strictMap(node["$defs"], depth) &&
		strictMap(node["definitions"], depth)
}

// usesUnsupported reports whether node uses a keyword of strictUnsupported.
func usesUnsupported(node map[string]json.RawMessage) bool {
	for _, k := range strictUnsupported {
		if _, ok := node[k]; ok {
			return true
		}
	}
	return false
}

// strictObject checks node as an object schema, when it is one (its type is
// "object" or it has properties): additionalProperties false, every
// property required, and every property's schema strict.
func strictObject(node map[string]json.RawMessage, depth int) bool {
	rawProps, hasProps := node["properties"]
	if typeOf(node) != "object" && !hasProps {
		return true
	}
	var additional bool
	raw, ok := node["additionalProperties"]
	if !ok || json.Unmarshal(raw, &additional) != nil || additional {
		return false
	}
	props := map[string]json.RawMessage{}
	if hasProps && json.Unmarshal(rawProps, &props) != nil {
		return false
	}
	var required []string
	if raw, ok := node["required"]; ok && json.Unmarshal(raw, &required) != nil {
		return false
	}
	listed := make(map[string]bool, len(required))
	for _, r := range required {
		listed[r] = true
	}
	for name, sub := range props {
		if !listed[name] || !strictChild(sub, depth) {
			return false
		}
	}
	return true
}

// strictList checks a list of sub-schemas (anyOf); nil, the keyword
// absent, is strict.
func strictList(raw json.RawMessage, depth int) bool {
	if raw == nil {
		return true
	}
	var subs []json.RawMessage
	if err := json.Unmarshal(raw, &subs); err != nil {
		return false
	}
	for _, sub := range subs {
		if !strictChild(sub, depth) {
			return false
		}
	}
	return true
}

// strictMap checks a map of named sub-schemas ($defs, definitions); nil,
// the keyword absent, is strict.
func strictMap(raw json.RawMessage, depth int) bool {
	if raw == nil {
		return true
	}
	var defs map[string]json.RawMessage
	if err := json.Unmarshal(raw, &defs); err != nil {
		return false
	}
	for _, sub := range defs {
		if !strictChild(sub, depth) {
			return false
		}
	}
	return true
}

// strictChild checks a sub-schema; a boolean schema (true/false) is not
// allowed in strict mode.
func strictChild(raw json.RawMessage, depth int) bool {
	var node map[string]json.RawMessage
	if err := json.Unmarshal(raw, &node); err != nil || node == nil {
		return false
	}
	return strictNode(node, depth+1)
}
