package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// frameError is the JSON-RPC error answering a line that is not a message
// to serve.
type frameError struct {
	// id is the message's id when it could be read (a JSON string or
	// integer), nil otherwise: the answer's id is then null.
	id      json.RawMessage
	code    int64
	message string
}

func parseError(msg string) *frameError {
	return &frameError{code: jsonrpc.CodeParseError, message: "Parse error: " + msg}
}

func invalidRequest(id json.RawMessage, msg string) *frameError {
	return &frameError{id: id, code: jsonrpc.CodeInvalidRequest, message: "Invalid Request: " + msg}
}

// response is the answer's line, without its newline.
func (e *frameError) response() ([]byte, error) {
	id := e.id
	if id == nil {
		id = json.RawMessage("null")
	}
	type wireError struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}
	return json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   wireError       `json:"error"`
	}{"2.0", id, wireError{e.code, e.message}})
}

// envelope is a JSON-RPC message's members, undecoded.
type envelope struct {
	JSONRPC json.RawMessage `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// parseFrame decodes one line as one JSON-RPC 2.0 message: a request, a
// notification or a response. Anything else is a frameError: a parse error
// for what is not UTF-8 JSON, an invalid request for JSON that is not one
// message object of the right shape (batches are refused: MCP dropped
// them).
func parseFrame(line []byte) (jsonrpc.Message, *frameError) {
	switch {
	case !utf8.Valid(line):
		return nil, parseError("the message is not valid UTF-8")
	case len(bytes.TrimSpace(line)) == 0:
		return nil, parseError("an empty line; send one JSON-RPC message per line")
	case !json.Valid(line):
		return nil, parseError(syntaxError(line))
	}
	switch bytes.TrimSpace(line)[0] {
	case '{':
	case '[':
		return nil, invalidRequest(nil, "batches are not supported; send one message per line")
	default:
		return nil, invalidRequest(nil, "the message is not a JSON object")
	}
	var env envelope
	if err := json.Unmarshal(line, &env); err != nil {
		return nil, invalidRequest(nil, err.Error())
	}
	id, bad := checkID(env.ID)
	if bad != "" {
		return nil, invalidRequest(nil, bad)
	}
	if bad := checkShape(&env, id); bad != "" {
		return nil, invalidRequest(id, bad)
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return nil, invalidRequest(id, err.Error())
	}
	return msg, nil
}

// syntaxError says where line stops being JSON.
func syntaxError(line []byte) string {
	if err := json.Unmarshal(line, new(struct{})); err != nil {
		return "the message is not JSON: " + err.Error()
	}
	return "the message is not JSON"
}

// checkID returns the id to answer with — nil for an absent or null id —
// or why the id is not a string or an integer.
func checkID(raw json.RawMessage) (json.RawMessage, string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, ""
	}
	switch raw[0] {
	case '"':
		return raw, ""
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		if integral(string(raw)) {
			return raw, ""
		}
		return nil, "the id is a number with a fraction or out of range; use a string or an integer"
	}
	return nil, "the id is not a string, an integer or null"
}

// integral reports whether the JSON number n is an integer that a float64
// holds exactly, as the SDK reads ids.
func integral(n string) bool {
	const exact = 1 << 53
	if i, err := strconv.ParseInt(n, 10, 64); err == nil {
		return -exact <= i && i <= exact
	}
	f, err := strconv.ParseFloat(n, 64)
	return err == nil && f == math.Trunc(f) && math.Abs(f) <= exact
}

// checkShape says why env is neither a request or notification (a method
// and maybe params) nor a response (an id and a result or an error), or
// returns "".
func checkShape(env *envelope, id json.RawMessage) string {
	if string(bytes.TrimSpace(env.JSONRPC)) != `"2.0"` {
		return `"jsonrpc" must be "2.0"`
	}
	if env.Method != nil {
		return checkRequest(env)
	}
	switch {
	case id == nil:
		return "a message without a method must be a response, with an id"
	case (env.Result == nil) == (env.Error == nil):
		return "a response has either a result or an error"
	}
	return ""
}

// checkRequest checks a request's or notification's members.
func checkRequest(env *envelope) string {
	var method string
	if err := json.Unmarshal(env.Method, &method); err != nil || method == "" {
		return `"method" must be a non-empty string`
	}
	if env.Result != nil || env.Error != nil {
		return "a request has no result or error"
	}
	if p := bytes.TrimSpace(env.Params); len(p) > 0 && p[0] != '{' && p[0] != '[' && string(p) != "null" {
		return fmt.Sprintf("the params of %q must be an object", method)
	}
	return ""
}

// rawID is id as JSON, for an answer.
func rawID(id jsonrpc.ID) json.RawMessage {
	data, err := json.Marshal(id.Raw())
	if err != nil {
		return nil
	}
	return data
}
