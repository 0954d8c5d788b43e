package claudecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"

	"github.com/forgemem/forgemem/memcore"
)

// HookTimeout is the timeout, in seconds, Claude Code gives forgemem's
// hooks: past it Claude Code kills the hook. A prompt's recall answers
// within memory.retrieval_timeout, and Stop and PreCompact return at once;
// whatever happens, the hook's process ends by HookDeadline.
const HookTimeout = 10

// HookDeadline is how long a run of forgemem's hook may last, counted
// from the start of its process: two seconds below HookTimeout. When it
// is reached the hook says so in its one line on stderr and exits 0,
// whatever its work is waiting on (a stuck read, a model that does not
// answer): the agent's turn goes on without memory.
const HookDeadline = 8 * time.Second

// The hook events forgemem handles.
const (
	// EventUserPromptSubmit fires when the user submits a prompt, before
	// the model sees it: forgemem recalls memories for it.
	EventUserPromptSubmit = "UserPromptSubmit"
	// EventStop fires when the agent has finished its turn: a capture
	// trigger of the turn (memcore.TriggerCadence).
	EventStop = "Stop"
	// EventPreCompact fires before Claude Code compacts (summarises) its
	// context: a capture trigger of the compaction
	// (memcore.TriggerCompaction).
	EventPreCompact = "PreCompact"
)

// Events are the hook events forgemem handles, in the order the installer
// lists them.
func Events() []string { return []string{EventUserPromptSubmit, EventStop, EventPreCompact} }

// HookInput is the JSON object Claude Code writes to a hook command's
// standard input. Fields of other events and fields added by later
// versions of Claude Code are ignored.
type HookInput struct {
	// Common to every event.
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	CWD            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	PermissionMode string `json:"permission_mode,omitempty"`

	// Prompt is the user's prompt (UserPromptSubmit).
	Prompt string `json:"prompt,omitempty"`
	// StopHookActive is true when the agent continues because a Stop hook
	// asked it to (Stop).
	StopHookActive bool `json:"stop_hook_active,omitempty"`
	// LastAssistantMessage is the agent's last reply, in newer versions
	// (Stop). Claude Code runs the Stop hooks before it writes the reply's
	// line to the transcript, so this is often the only place the reply
	// is; see [WithLastReply].
	LastAssistantMessage string `json:"last_assistant_message,omitempty"`
	// Trigger is "manual" (/compact) or "auto" (PreCompact).
	Trigger string `json:"trigger,omitempty"`
	// CustomInstructions are the instructions given to /compact
	// (PreCompact).
	CustomInstructions string `json:"custom_instructions,omitempty"`
}

// MaxHookInputBytes bounds the hook input read: a prompt may hold a pasted
// log, never this much.
const MaxHookInputBytes = 32 << 20

// ErrHookInput: the hook's standard input is not a hook event's JSON.
var ErrHookInput = errors.New("not a Claude Code hook input")

// ReadHookInput reads the hook input JSON from r. Unknown fields are
// ignored; input that is not one JSON object, that names no event, or
// that is larger than MaxHookInputBytes is an error wrapping ErrHookInput.
func ReadHookInput(r io.Reader) (*HookInput, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxHookInputBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the hook input: %w", err)
	}
	if len(data) > MaxHookInputBytes {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrHookInput, MaxHookInputBytes)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%w: nothing on standard input; want the hook event's JSON object", ErrHookInput)
	}
	var in HookInput
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrHookInput, jsonProblem(err))
	}
	if in.HookEventName == "" {
		return nil, fmt.Errorf("%w: no hook_event_name", ErrHookInput)
	}
	return &in, nil
}

// jsonProblem says what is wrong with a hook input that encoding/json
// could not read into a HookInput, in the input's terms rather than Go's.
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("not valid JSON (at byte %d); want the hook event's JSON object", syn.Offset)
	case errors.As(err, &typ) && typ.Field == "":
		return fmt.Sprintf("want the hook event's JSON object, got %s", article(typ.Value))
	case errors.As(err, &typ):
		return fmt.Sprintf("%s: want %s, got %s", typ.Field, jsonKindOf(typ.Type), article(typ.Value))
	}
	return "not the hook event's JSON object"
}

// jsonKindOf names the JSON a Go type is read from.
func jsonKindOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}

// article puts "a" or "an" before the JSON kind encoding/json names
// ("array", "number", "string", "object", "bool").
func article(kind string) string {
	switch kind {
	case "array", "object":
		return "an " + kind
	case "bool":
		return "true or false"
	}
	return "a " + kind
}

// PromptOutput is the JSON a UserPromptSubmit hook prints to add context
// to the prompt, or to warn the user. Claude Code refuses unknown keys, so
// it has exactly these.
type PromptOutput struct {
	// HookSpecificOutput is the context added to the prompt, nil for none.
	HookSpecificOutput *PromptContext `json:"hookSpecificOutput,omitempty"`
	// SystemMessage is a warning Claude Code shows the user, not the
	// model; "" for none.
	SystemMessage string `json:"systemMessage,omitempty"`
}

// PromptContext is the hook-specific part of [PromptOutput].
type PromptContext struct {
	// HookEventName is always "UserPromptSubmit".
	HookEventName string `json:"hookEventName"`
	// AdditionalContext is added to the model's context with the prompt.
	AdditionalContext string `json:"additionalContext"`
}

// WritePromptContext writes the UserPromptSubmit output that adds text to
// the prompt's context, as one line of JSON.
func WritePromptContext(w io.Writer, text string) error { return WritePromptOutput(w, text, "") }

// WritePromptOutput writes the UserPromptSubmit output that adds text to
// the prompt's context and shows warning to the user, as one line of
// JSON; either may be "", and with both "" it writes nothing.
func WritePromptOutput(w io.Writer, text, warning string) error {
	out := PromptOutput{SystemMessage: warning}
	if text != "" {
		out.HookSpecificOutput = &PromptContext{HookEventName: EventUserPromptSubmit, AdditionalContext: text}
	}
	if out == (PromptOutput{}) {
		return nil
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// WithLastReply returns window, read from a session's transcript, with the
// agent's reply to the turn that just ended when the transcript does not
// hold it yet: Claude Code runs Stop hooks before it writes the reply's
// line, and gives the reply in the hook's payload (last_assistant_message).
// A window that ends with the user's message gets the reply as a new
// message; one whose last assistant message does not hold the reply (an
// earlier text of the same turn, before its tool calls) gets it joined to
// that message, as adjacent messages of one role are joined. A window that
// holds the reply (white space aside), an empty reply or an empty window
// (nothing of the user's to go with it) is returned as it is. Nothing is
// replaced: a correction keeps the answer it corrects.
func WithLastReply(window []memcore.Message, reply string) []memcore.Message {
	reply = strings.TrimSpace(reply)
	n := len(window)
	if reply == "" || n == 0 {
		return window
	}
	last := window[n-1]
	if last.Role != memcore.RoleAssistant {
		return append(window[:n:n], memcore.Message{Role: memcore.RoleAssistant, Content: reply})
	}
	if strings.Contains(collapseSpace(last.Content), collapseSpace(reply)) {
		return window
	}
	out := append([]memcore.Message(nil), window...)
	out[n-1].Content += "\n\n" + reply
	return out
}

// collapseSpace replaces each run of white space in s by one space.
func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }
