package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// doer is the goopenai.HTTPDoer this package hands to go-openai. It adds
// the configured headers, writes "temperature": 0 into chat requests that
// ask for it (go-openai's float32 field with omitempty cannot express 0),
// and marks failures to read a response body so that a connection cut
// short is told apart from a malformed body.
type doer struct {
	client  *http.Client
	headers http.Header
}

// zeroTemperatureKey marks a context whose chat request must carry
// "temperature": 0.
type zeroTemperatureKey struct{}

// withZeroTemperature returns ctx marked so that the request sent with it
// carries "temperature": 0.
func withZeroTemperature(ctx context.Context) context.Context {
	return context.WithValue(ctx, zeroTemperatureKey{}, true)
}

// Do implements goopenai.HTTPDoer.
func (d *doer) Do(req *http.Request) (*http.Response, error) {
	if len(d.headers) > 0 || req.Context().Value(zeroTemperatureKey{}) != nil {
		req = req.Clone(req.Context())
		for name, values := range d.headers {
			for _, v := range values {
				req.Header.Add(name, v)
			}
		}
		if req.Context().Value(zeroTemperatureKey{}) != nil {
			if err := setZeroTemperature(req); err != nil {
				return nil, err
			}
		}
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &markedBody{ReadCloser: resp.Body}
	return resp, nil
}

// setZeroTemperature replaces req's JSON object body with one that also
// carries "temperature": 0. The body must not have a temperature already.
func setZeroTemperature(req *http.Request) error {
	if req.Body == nil {
		return fmt.Errorf("%w: temperature 0 requested for a request without a body", errLocal)
	}
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return fmt.Errorf("%w: reading request body: %w", errLocal, err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return fmt.Errorf("%w: request body is not a JSON object: %w", errLocal, err)
	}
	if _, ok := fields["temperature"]; ok {
		return fmt.Errorf("%w: request body already carries a temperature", errLocal)
	}
	end := bytes.LastIndexByte(body, '}')
	sep := ","
	if len(fields) == 0 {
		sep = ""
	}
	out := make([]byte, 0, len(body)+20)
	out = append(out, body[:end]...)
	out = append(out, sep+`"temperature":0`...)
	out = append(out, body[end:]...)

	req.Body = io.NopCloser(bytes.NewReader(out))
	req.ContentLength = int64(len(out))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(out)), nil }
	return nil
}

// markedBody wraps a response body so that read failures (other than the
// io.EOF that ends it) come out as *bodyReadError.
type markedBody struct{ io.ReadCloser }

func (b *markedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		err = &bodyReadError{err: err}
	}
	return n, err
}
