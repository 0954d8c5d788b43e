package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"google.golang.org/genai"

	"github.com/forgemem/forgemem/memcore"
)

// maxTemperature is the top of the Gemini API's temperature range.
const maxTemperature = 2.0

// Complete implements [memcore.LLMProvider] with one generateContent call
// to req.Model or, when that is empty, the configured Model.
//
// req.System, and the content of any system message in req.Messages
// (appended in order, separated by a blank line), become the system
// instruction. User messages are sent with role "user", assistant messages
// with role "model"; consecutive messages of the same role are sent as one
// turn of several parts. Tool messages are refused (they carry no
// function-call structure Gemini could accept). MaxTokens becomes
// maxOutputTokens, Temperature (0–2) temperature. With a ResponseSchema the
// request asks for responseMimeType "application/json" and sends the schema
// as responseJsonSchema (the API's JSON Schema field); the schema's
// Description is added to it when it has none.
//
// The reply is the text of the first candidate's non-thought parts. Usage
// counts prompt tokens as input and candidate plus thinking tokens as
// output. A blocked prompt, no candidate, or a candidate without text is
// [memcore.ErrInvalidResponse]; a bad request is refused with
// [memcore.ErrInvalidRequest] before anything is sent.
func (c *Client) Complete(ctx context.Context, req memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("gemini: complete: %w", err)
	}
	model := req.Model
	if model == "" {
		model = c.model
	} else if err := checkModel(model, kindCompletion, c.defaultHost); err != nil {
		return nil, fmt.Errorf("gemini: complete: %w: %w", memcore.ErrInvalidRequest, err)
	}
	contents, cfg, err := buildGenerateRequest(req)
	if err != nil {
		return nil, fmt.Errorf("gemini: complete: %w: %w", memcore.ErrInvalidRequest, err)
	}
	resp, err := guard("complete", func() (*genai.GenerateContentResponse, error) {
		resp, err := c.genai.Models.GenerateContent(ctx, model, contents, cfg)
		if err != nil {
			return nil, wrapError(ctx, "complete", err)
		}
		return resp, nil
	})
	if err != nil {
		return nil, err
	}
	text, err := replyText(resp)
	if err != nil {
		return nil, fmt.Errorf("gemini: complete: %w: %w", memcore.ErrInvalidResponse, err)
	}
	out := &memcore.CompletionResponse{Text: text, Model: resp.ModelVersion}
	if out.Model == "" {
		out.Model = baseModelName(model)
	}
	if u := resp.UsageMetadata; u != nil {
		out.Usage = memcore.Usage{
			InputTokens:  int(u.PromptTokenCount),
			OutputTokens: int(u.CandidatesTokenCount) + int(u.ThoughtsTokenCount),
		}
	}
	return out, nil
}

// buildGenerateRequest turns req into the SDK's contents and config.
func buildGenerateRequest(req memcore.CompletionRequest) ([]*genai.Content, *genai.GenerateContentConfig, error) {
	contents, system, err := buildContents(req)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := generateConfig(req)
	if err != nil {
		return nil, nil, err
	}
	if len(system) > 0 {
		cfg.SystemInstruction = &genai.Content{
			Role:  genai.RoleUser,
			Parts: []*genai.Part{{Text: strings.Join(system, "\n\n")}},
		}
	}
	return contents, cfg, nil
}

// buildContents turns req's messages into the SDK's contents, consecutive
// messages of one role joined into one content, and returns the system
// texts (req.System, then each system message) apart.
func buildContents(req memcore.CompletionRequest) (contents []*genai.Content, system []string, err error) {
	if req.System != "" {
		system = append(system, req.System)
	}
	for i, m := range req.Messages {
		if m.Role == memcore.RoleSystem {
			if m.Content != "" {
				system = append(system, m.Content)
			}
			continue
		}
		role, err := contentRole(i, m)
		if err != nil {
			return nil, nil, err
		}
		part := &genai.Part{Text: m.Content}
		if n := len(contents); n > 0 && contents[n-1].Role == role {
			contents[n-1].Parts = append(contents[n-1].Parts, part)
			continue
		}
		contents = append(contents, &genai.Content{Role: role, Parts: []*genai.Part{part}})
	}
	if len(contents) == 0 {
		return nil, nil, errors.New("no user or assistant message to answer")
	}
	return contents, system, nil
}

// contentRole returns the Gemini role of message i, m, which is not a
// system message, or why it cannot be sent.
func contentRole(i int, m memcore.Message) (string, error) {
	var role string
	switch m.Role {
	case memcore.RoleUser:
		role = genai.RoleUser
	case memcore.RoleAssistant:
		role = genai.RoleModel
	case memcore.RoleTool:
		return "", fmt.Errorf("message %d has role %q, which Gemini cannot take as plain text; drop it (memcore.StripToolContent) or send its text as a user message", i, m.Role)
	default:
		return "", fmt.Errorf("message %d has unknown role %q", i, m.Role)
	}
	if m.Content == "" {
		return "", fmt.Errorf("message %d (%s) is empty", i, m.Role)
	}
	return role, nil
}

// generateConfig returns the generation settings of req: its reply limit,
// temperature and response schema.
func generateConfig(req memcore.CompletionRequest) (*genai.GenerateContentConfig, error) {
	cfg := &genai.GenerateContentConfig{}
	switch {
	case req.MaxTokens < 0:
		return nil, fmt.Errorf("MaxTokens %d is negative", req.MaxTokens)
	case req.MaxTokens > math.MaxInt32:
		return nil, fmt.Errorf("MaxTokens %d is too large", req.MaxTokens)
	case req.MaxTokens > 0:
		cfg.MaxOutputTokens = int32(req.MaxTokens)
	}
	if t := req.Temperature; t != nil {
		if math.IsNaN(*t) || *t < 0 || *t > maxTemperature {
			return nil, fmt.Errorf("the Temperature %v is outside 0–%v", *t, maxTemperature)
		}
		t32 := float32(*t)
		cfg.Temperature = &t32
	}
	if s := req.ResponseSchema; s != nil {
		schema, err := jsonSchema(s)
		if err != nil {
			return nil, err
		}
		cfg.ResponseMIMEType = "application/json"
		cfg.ResponseJsonSchema = schema
	}
	return cfg, nil
}

// jsonSchema decodes the schema's definition, which must be a JSON object,
// and adds its description when the definition has none.
func jsonSchema(s *memcore.Schema) (map[string]any, error) {
	name := s.Name
	if name == "" {
		name = "(unnamed)"
	}
	if len(s.Definition) == 0 {
		return nil, fmt.Errorf("response schema %s has an empty definition", name)
	}
	var def map[string]any
	if err := json.Unmarshal(s.Definition, &def); err != nil {
		return nil, fmt.Errorf("response schema %s is not a JSON object: %w", name, err)
	}
	if def == nil {
		return nil, fmt.Errorf("response schema %s is not a JSON object", name)
	}
	if _, ok := def["description"]; !ok && s.Description != "" {
		def["description"] = s.Description
	}
	return def, nil
}

// replyText is the text of the first candidate, thought parts left out.
func replyText(resp *genai.GenerateContentResponse) (string, error) {
	if resp == nil {
		return "", errors.New("no response")
	}
	if len(resp.Candidates) == 0 {
		if pf := resp.PromptFeedback; pf != nil && pf.BlockReason != "" {
			msg := fmt.Sprintf("prompt blocked (%s)", pf.BlockReason)
			if pf.BlockReasonMessage != "" {
				msg += ": " + pf.BlockReasonMessage
			}
			return "", errors.New(msg)
		}
		return "", errors.New("no candidates in the reply")
	}
	cand := resp.Candidates[0]
	var b strings.Builder
	if cand != nil && cand.Content != nil {
		for _, p := range cand.Content.Parts {
			if p != nil && !p.Thought {
				b.WriteString(p.Text)
			}
		}
	}
	if b.Len() == 0 {
		reason := "none"
		if cand != nil && cand.FinishReason != "" {
			reason = string(cand.FinishReason)
		}
		return "", fmt.Errorf("the reply has no text (finish reason %s)", reason)
	}
	return b.String(), nil
}
