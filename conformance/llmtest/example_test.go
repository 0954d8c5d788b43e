package llmtest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/forgemem/forgemem/conformance/llmtest"
	"github.com/forgemem/forgemem/memcore"
)

// echoProvider stands in for the provider under test. A real provider sends
// the request to an API; in the harness of a real provider the API is an
// httptest server that decodes the request and answers with llmtest.Respond.
type echoProvider struct {
	failWith error // when set, every call fails with it
}

// echoAPIError stands in for the native error type of the provider's SDK.
type echoAPIError struct{ StatusCode int }

func (e *echoAPIError) Error() string { return fmt.Sprintf("echo api: status %d", e.StatusCode) }

func (p *echoProvider) Complete(ctx context.Context, req memcore.CompletionRequest) (*memcore.CompletionResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if p.failWith != nil {
		return nil, p.failWith
	}
	text, err := llmtest.Respond(req) // the "model"
	if err != nil {
		return nil, fmt.Errorf("echo: %w: %w", memcore.ErrInvalidRequest, &echoAPIError{http.StatusBadRequest})
	}
	return &memcore.CompletionResponse{Text: text, Usage: memcore.Usage{InputTokens: 1, OutputTokens: 1}}, nil
}

// echoHarness is what a provider module writes to run the suite.
type echoHarness struct{}

// newEchoHarness is the llmtest.HarnessMaker; Run calls it for every subtest.
func newEchoHarness(ctx context.Context, t *testing.T) (llmtest.Harness, error) {
	return echoHarness{}, nil
}

func (echoHarness) NewProvider(ctx context.Context) (memcore.LLMProvider, error) {
	return &echoProvider{}, nil
}

// NewFailingProvider makes the API fail the way it does for kind. Here the
// provider maps status codes to the taxonomy itself; with a real provider,
// the httptest server answers with the status code and error body instead.
func (echoHarness) NewFailingProvider(ctx context.Context, kind error) (memcore.LLMProvider, error) {
	status := map[error]int{
		memcore.ErrRateLimited:     http.StatusTooManyRequests,
		memcore.ErrUnauthenticated: http.StatusUnauthorized,
		memcore.ErrUnavailable:     http.StatusServiceUnavailable,
		memcore.ErrInputTooLarge:   http.StatusRequestEntityTooLarge,
		memcore.ErrInvalidRequest:  http.StatusBadRequest,
	}[kind]
	if status == 0 {
		return nil, fmt.Errorf("%w: the echo API never answers malformed replies", errors.ErrUnsupported)
	}
	return &echoProvider{failWith: fmt.Errorf("echo: %w: %w", kind, &echoAPIError{status})}, nil
}

// Capabilities: the zero value claims full support. A provider without
// structured output would say why, e.g. {NoJSONSchema: "the API has no JSON mode"}.
func (echoHarness) Capabilities() llmtest.Capabilities { return llmtest.Capabilities{} }

func (echoHarness) Close() {}

// AsNative implements llmtest.NativeErrorHarness.
func (echoHarness) AsNative(err error) bool {
	var apiErr *echoAPIError
	return errors.As(err, &apiErr)
}

// A provider module runs the suite from a test of its own:
//
//	func TestConformance(t *testing.T) {
//		llmtest.Run(t, newEchoHarness, llmtest.Config{})
//	}
//
// Below, the harness's provider answers one of the suite's prompts: the
// model must see the system prompt to know the codeword.
func Example() {
	var h echoHarness
	p, err := h.NewProvider(context.Background())
	if err != nil {
		panic(err)
	}
	resp, err := p.Complete(context.Background(), memcore.CompletionRequest{
		System:   "The codeword is CEDAR-4821. When asked for the codeword, reply with the codeword only.",
		Messages: []memcore.Message{{Role: memcore.RoleUser, Content: "What is the codeword?"}},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.Text)
	// Output: CEDAR-4821
}
