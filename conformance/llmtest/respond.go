package llmtest

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/forgemem/forgemem/memcore"
)

// The suite's prompts are written so that a real model answers them
// correctly, and so that Respond, reading the same text, can too:
//
//   - A codeword has the shape WORD-1234. Asked for "the codeword", the
//     model answers with the last codeword stated anywhere in what it
//     received — system prompt or messages. A codeword the provider failed
//     to send is one the model cannot know.
//   - A JSON value is stated as `"name" is value`, with value a JSON
//     literal. Asked for an object under a response schema, the model fills
//     in each property of the schema from those statements. Without a
//     schema it chats, wrapping the object in prose and a code fence.

var (
	codewordPattern = regexp.MustCompile(`\b[A-Z]{3,}-[0-9]{4}\b`)
	fieldPattern    = regexp.MustCompile(`"([A-Za-z_][A-Za-z0-9_]*)" is ("(?:[^"\\]|\\.)*"|-?[0-9]+(?:\.[0-9]+)?|true|false|null)`)
)

// Replies of Respond to prompts it has no answer for.
const (
	unknownCodewordReply = "I do not know the codeword."
	greetingReply        = "Hello! How can I help you today?"
)

// Respond is the reference model of the suite: it returns the reply a
// capable model gives to req, for every request the suite sends. An offline
// harness uses it to play the model — in a scripted provider's reply
// function, or in an httptest server that decodes the provider's wire
// request into a [memcore.CompletionRequest] and encodes the reply in the
// vendor's format. Whatever the provider fails to send, Respond cannot see,
// so the suite catches it offline just as it would against a live model.
//
// Respond answers from what req contains:
//   - with a ResponseSchema, the JSON object (compact, keys sorted) whose
//     properties are the schema's, each with the value the conversation
//     states for it as `"name" is value`;
//   - asked for JSON without a schema, a chatty reply around a fenced
//     object, as models without structured output tend to give;
//   - asked for "the codeword", the last codeword (like AMBER-1234) stated in
//     the system prompt or the messages, or a reply saying it does not know;
//   - otherwise, a short greeting.
//
// It fails with an error wrapping [memcore.ErrInvalidRequest] when req has
// no messages, when its last message is not the user's, or when its schema
// is not a JSON object schema whose properties the conversation gives values
// for.
func Respond(req memcore.CompletionRequest) (string, error) {
	if len(req.Messages) == 0 {
		return "", fmt.Errorf("llmtest: respond: %w: the request has no messages", memcore.ErrInvalidRequest)
	}
	last := req.Messages[len(req.Messages)-1]
	if last.Role != memcore.RoleUser {
		return "", fmt.Errorf("llmtest: respond: %w: the last message is the %s's, not the user's",
			memcore.ErrInvalidRequest, last.Role)
	}
	texts := []string{req.System}
	for _, m := range req.Messages {
		texts = append(texts, m.Content)
	}
	conversation := strings.Join(texts, "\n")
	question := strings.ToLower(last.Content)

	switch {
	case req.ResponseSchema != nil:
		return objectForSchema(req.ResponseSchema, conversation)
	case strings.Contains(question, "json"):
		object, err := json.Marshal(statedValues(conversation))
		if err != nil {
			return "", fmt.Errorf("llmtest: respond: %w: %w", memcore.ErrInvalidRequest, err)
		}
		return "Sure! Here is the JSON object you asked for:\n\n```json\n" + string(object) + "\n```", nil
	case strings.Contains(question, "codeword"):
		codewords := codewordPattern.FindAllString(conversation, -1)
		if len(codewords) == 0 {
			return unknownCodewordReply, nil
		}
		return codewords[len(codewords)-1], nil
	default:
		return greetingReply, nil
	}
}

// statedValues collects the `"name" is value` statements of text; a later
// statement of a name wins.
func statedValues(text string) map[string]json.RawMessage {
	values := make(map[string]json.RawMessage)
	for _, m := range fieldPattern.FindAllStringSubmatch(text, -1) {
		values[m[1]] = json.RawMessage(m[2])
	}
	return values
}

func objectForSchema(schema *memcore.Schema, conversation string) (string, error) {
	var def struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(schema.Definition, &def); err != nil {
		return "", fmt.Errorf("llmtest: respond: %w: schema %q is not valid JSON: %w", memcore.ErrInvalidRequest, schema.Name, err)
	}
	if def.Type != "object" || len(def.Properties) == 0 {
		return "", fmt.Errorf("llmtest: respond: %w: schema %q is not an object schema with properties",
			memcore.ErrInvalidRequest, schema.Name)
	}
	stated := statedValues(conversation)
	object := make(map[string]json.RawMessage, len(def.Properties))
	for _, name := range slices.Sorted(maps.Keys(def.Properties)) {
		v, ok := stated[name]
		if !ok || !json.Valid(v) {
			return "", fmt.Errorf("llmtest: respond: %w: the conversation states no value for property %q of schema %q",
				memcore.ErrInvalidRequest, name, schema.Name)
		}
		object[name] = v
	}
	out, err := json.Marshal(object)
	if err != nil {
		return "", fmt.Errorf("llmtest: respond: %w: %w", memcore.ErrInvalidRequest, err)
	}
	return string(out), nil
}
