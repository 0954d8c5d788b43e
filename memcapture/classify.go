package memcapture

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/forgemem/forgemem/memcore"
	"github.com/rs/zerolog"
)

// maxEchoRunes bounds the unreadable reply echoed back when asking again.
const maxEchoRunes = 4000

// classify calls the classifier and returns the elements of its list of
// memories. An unreadable reply is asked for once more, with the reply and
// a reminder of the format; a second unreadable reply is an error wrapping
// errUnparseable. Provider errors are returned as they are.
func (p *Pipeline) classify(ctx context.Context, req memcore.CompletionRequest, log zerolog.Logger) ([]json.RawMessage, error) {
	reply, err := p.complete(ctx, req)
	if err != nil {
		return nil, err
	}
	els, perr := parseReply(reply)
	if perr == nil {
		return els, nil
	}
	log.Debug().Err(redactErr(perr)).Msg("memcapture: classifier reply unreadable, asking once more")
	again := req
	again.Messages = append(slices.Clone(req.Messages),
		memcore.Message{Role: memcore.RoleAssistant, Content: clipRunes(reply, maxEchoRunes)},
		memcore.Message{Role: memcore.RoleUser, Content: retryReminder})
	reply, err = p.complete(ctx, again)
	if err != nil {
		return nil, err
	}
	els, perr = parseReply(reply)
	if perr != nil {
		return nil, fmt.Errorf("second reply: %w", perr)
	}
	return els, nil
}

// complete makes one classifier call, retrying transient errors within ctx,
// and counts the tokens it used. A call still running when ctx ends is
// abandoned (see callWithin).
func (p *Pipeline) complete(ctx context.Context, req memcore.CompletionRequest) (string, error) {
	var text string
	err := memcore.Retry(ctx, p.cfg.retry, func(ctx context.Context) error {
		resp, err := callWithin(ctx, &p.stats.stalled, func(ctx context.Context) (*memcore.CompletionResponse, error) {
			return p.classifier.Complete(ctx, req)
		})
		if err != nil {
			return err
		}
		if resp == nil {
			return fmt.Errorf("classifier returned no response: %w", memcore.ErrInvalidResponse)
		}
		if n := resp.Usage.Total(); n > 0 {
			p.stats.tokens.Add(uint64(n))
		}
		text = resp.Text
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("classifier: %w", err)
	}
	return text, nil
}
