package memcore

import (
	"context"
	"encoding/json"
	"time"
)

// Role is the author of a [Message].
type Role string

// The roles a [Message] can have. Only user and assistant text is ever
// captured or used for retrieval; system and tool messages are dropped by
// [StripToolContent].
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one entry of a conversation: the type shared by LLM requests,
// capture windows and retrieval windows.
type Message struct {
	Role    Role
	Content string
	// At is when the message was written, when the host knows it (a
	// transcript's timestamp); the zero time otherwise. Capture records it
	// as the time of a memory's evidence; providers ignore it.
	At time.Time
}

// LLMProvider completes a conversation. Implementations must be safe for
// concurrent use, honour ctx, and report failures through the error taxonomy
// ([ErrRateLimited], [ErrUnauthenticated], …) wrapped around their native error
// so that both errors.Is and errors.As work.
type LLMProvider interface {
	Complete(ctx context.Context, req CompletionRequest) (*CompletionResponse, error)
}

// CompletionRequest is one call to an [LLMProvider].
type CompletionRequest struct {
	// Model names the model; empty means the provider's configured default.
	Model string
	// System is the system prompt (instructions); empty means none.
	System string
	// Messages is the conversation, oldest first.
	Messages []Message
	// MaxTokens caps the reply; 0 means the provider's default.
	MaxTokens int
	// Temperature is the sampling temperature; nil means the provider's
	// default. A pointer, so that 0 (deterministic) can be asked for.
	Temperature *float64
	// ResponseSchema, when set, asks for a JSON reply that satisfies it.
	// Providers use native structured output where the API has it.
	ResponseSchema *Schema
}

// Schema is a JSON Schema the reply of a completion must satisfy.
type Schema struct {
	// Name identifies the schema; some APIs require it (letters, digits,
	// '_' and '-', at most 64 characters).
	Name string
	// Description optionally tells the model what the object is for.
	Description string
	// Definition is the JSON Schema document itself.
	Definition json.RawMessage
}

// CompletionResponse is the reply of an [LLMProvider].
type CompletionResponse struct {
	// Text is the reply; with a ResponseSchema, the JSON document.
	Text string
	// Model is the model that answered, when the provider reports it.
	Model string
	// Usage is the token count the provider reported (zero when it did not).
	Usage Usage
}

// Usage counts the tokens of one call.
type Usage struct {
	InputTokens  int
	OutputTokens int
}

// Total is InputTokens + OutputTokens.
func (u Usage) Total() int { return u.InputTokens + u.OutputTokens }

// Embedder turns texts into vectors. Implementations must be safe for
// concurrent use, honour ctx, split inputs larger than their batch limit
// themselves, and report failures through the error taxonomy.
type Embedder interface {
	// Embed returns one vector per input, in input order. Zero inputs give
	// zero vectors and make no call.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Model identifies the vectors produced, for keying cached vectors: two
	// embedders with the same Model must produce interchangeable vectors, so
	// it includes the dimension when that is configurable.
	Model() string
}
