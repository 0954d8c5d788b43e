package claudecode

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

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
	// (Stop).
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
	var in HookInput
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrHookInput, err)
	}
	if in.HookEventName == "" {
		return nil, fmt.Errorf("%w: no hook_event_name", ErrHookInput)
	}
	return &in, nil
}

// PromptOutput is the JSON a UserPromptSubmit hook prints to add context
// to the prompt. Claude Code refuses unknown keys, so it has exactly
// these.
type PromptOutput struct {
	HookSpecificOutput PromptContext `json:"hookSpecificOutput"`
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
func WritePromptContext(w io.Writer, text string) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(PromptOutput{HookSpecificOutput: PromptContext{HookEventName: EventUserPromptSubmit, AdditionalContext: text}})
}
