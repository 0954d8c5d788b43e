package fakemodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/forgemem/forgemem/providers/fake"
)

// API names the wire format of a logged request.
type API string

// The APIs the server answers, and the two kinds of request it only logs.
const (
	// APIAnthropic is the Anthropic Messages API: POST /v1/messages
	// (and /v1/messages/count_tokens).
	APIAnthropic API = "anthropic-messages"
	// APIResponses is the OpenAI Responses API: POST /v1/responses.
	APIResponses API = "openai-responses"
	// APIGemini is the Gemini API: POST /{version}/models/{model}:generateContent,
	// :streamGenerateContent and :countTokens.
	APIGemini API = "gemini"
	// APIChat is OpenAI-compatible chat completions: POST /v1/chat/completions.
	APIChat API = "openai-chat"
	// APIEmbeddings is OpenAI-compatible embeddings: POST /v1/embeddings.
	APIEmbeddings API = "openai-embeddings"
	// APIOther is any other request to the server: logged and answered 404.
	APIOther API = "other"
	// APIProxy is a request for another host, made through the server as a
	// proxy (CONNECT, or an absolute URL): logged and refused with 403.
	APIProxy API = "proxy"
)

// Script decides the reply to one request of an API. It is called from the
// server's handlers, one call per request, possibly concurrently.
type Script func(req *Request) Reply

// Options are the scripts of the server, one per API; a nil script
// answers every request with the text "OK".
type Options struct {
	// Anthropic answers the Messages API (Claude Code).
	Anthropic Script
	// Responses answers the Responses API (Codex).
	Responses Script
	// Gemini answers the Gemini API (Gemini CLI).
	Gemini Script
	// Chat answers chat completions (forgemem's classifier and
	// hypothesis model).
	Chat Script
}

// Server is a running fake. Its methods are safe for concurrent use.
type Server struct {
	opts Options
	ln   net.Listener
	srv  *http.Server
	done chan struct{}
	emb  *fake.Embedder

	mu   sync.Mutex
	log  []*Request
	next int
}

// maxBody bounds a request body read; an agent's request with its tools
// and a long conversation is well below it.
const maxBody = 64 << 20

// Start starts a server on 127.0.0.1 with a port of the system's choosing.
// Close it.
func Start(opts Options) (*Server, error) {
	emb, err := fake.NewEmbedder(fake.EmbedderConfig{})
	if err != nil {
		return nil, fmt.Errorf("fakemodel: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fakemodel: %w", err)
	}
	s := &Server{opts: opts, ln: ln, emb: emb, done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", s.anthropic)
	mux.HandleFunc("POST /v1/messages/count_tokens", s.anthropicCountTokens)
	mux.HandleFunc("POST /v1/responses", s.responses)
	mux.HandleFunc("POST /{version}/models/{call}", s.gemini)
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("POST /v1/embeddings", s.embeddings)
	mux.HandleFunc("/", s.other)
	s.srv = &http.Server{Handler: s.proxyGuard(mux)}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln) // returns when Close closes the listener
	}()
	return s, nil
}

// URL is the server's root, http://127.0.0.1:PORT, with no path.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Close stops the server, ending the requests in flight.
func (s *Server) Close() {
	_ = s.srv.Close()
	<-s.done
}

// Requests returns the requests received so far, oldest first.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.log...)
}

// RequestsOf returns the requests of one API received so far that ask for
// a reply (token counts left out), oldest first.
func (s *Server) RequestsOf(api API) []*Request {
	var out []*Request
	for _, r := range s.Requests() {
		if r.API == api && !r.Counting {
			out = append(out, r)
		}
	}
	return out
}

// Reset forgets the requests received so far.
func (s *Server) Reset() {
	s.mu.Lock()
	s.log = nil
	s.mu.Unlock()
}

// record numbers the request, adds it to the log and returns it.
func (s *Server) record(req *Request) *Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	req.Seq = s.next
	s.log = append(s.log, req)
	return req
}

// newRequest reads the body of r into a Request of api (not yet logged).
func newRequest(api API, r *http.Request) (*Request, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		return nil, err
	}
	return &Request{
		API:      api,
		Method:   r.Method,
		Path:     r.URL.Path,
		RawQuery: r.URL.RawQuery,
		Header:   r.Header.Clone(),
		Body:     body,
	}, nil
}

// script returns the script of api, or one that says "OK".
func (s *Server) script(api API) Script {
	var sc Script
	switch api {
	case APIAnthropic:
		sc = s.opts.Anthropic
	case APIResponses:
		sc = s.opts.Responses
	case APIGemini:
		sc = s.opts.Gemini
	case APIChat:
		sc = s.opts.Chat
	}
	if sc == nil {
		return func(*Request) Reply { return Say("OK") }
	}
	return sc
}

// proxyGuard refuses, and logs, a request meant for another host: a
// CONNECT tunnel or an absolute URL, as a client sends them to a proxy.
func (s *Server) proxyGuard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect && !(r.URL.IsAbs() && r.URL.Host != s.ln.Addr().String()) {
			next.ServeHTTP(w, r)
			return
		}
		host := r.Host
		if r.URL.IsAbs() {
			host = r.URL.Host
		}
		s.record(&Request{API: APIProxy, Method: r.Method, Host: host, Path: r.URL.Path, Header: r.Header.Clone()})
		http.Error(w, "fakemodel: no network beyond 127.0.0.1 in this test", http.StatusForbidden)
	})
}

// other logs a request the server does not know and answers 404.
func (s *Server) other(w http.ResponseWriter, r *http.Request) {
	req, err := newRequest(APIOther, r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.record(req)
	writeError(w, http.StatusNotFound, fmt.Sprintf("fakemodel: no such endpoint: %s %s", r.Method, r.URL.Path))
}

// decode reads the request of api and decodes its JSON body into v; on
// failure it answers 400 and returns nil. The request is not yet logged.
func decode(w http.ResponseWriter, r *http.Request, api API, v any) *Request {
	req, err := newRequest(api, r)
	if err == nil {
		err = json.Unmarshal(req.Body, v)
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "fakemodel: "+err.Error())
		return nil
	}
	return req
}

// writeJSON answers 200 with v.
func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers with status and an error object every API's client
// reads: {"error": {"message", "type", "code", "status"}}.
func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]any{
		"message": msg, "type": "api_error", "code": status, "status": http.StatusText(status),
	}})
}

// tokens estimates the tokens of a body, for the usage figures replies
// carry (clients only show them).
func tokens(b []byte) int { return len(b)/4 + 1 }

// stream writes server-sent events and flushes each.
type stream struct {
	w http.ResponseWriter
	f http.Flusher
}

// newStream starts an event stream on w.
func newStream(w http.ResponseWriter) *stream {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &stream{w: w, f: f}
}

// event writes one event: "event: name" (when name is not empty) and its
// data as JSON.
func (s *stream) event(name string, data any) {
	var b bytes.Buffer
	if name != "" {
		fmt.Fprintf(&b, "event: %s\n", name)
	}
	j, err := json.Marshal(data)
	if err != nil {
		panic(err) // the server's own values
	}
	fmt.Fprintf(&b, "data: %s\n\n", j)
	_, _ = s.w.Write(b.Bytes())
	if s.f != nil {
		s.f.Flush()
	}
}

// modelOf is the model named in a Gemini path's last element,
// "gemini-x:streamGenerateContent", and the method after the colon.
func modelOf(call string) (model, method string) {
	model, method, _ = strings.Cut(call, ":")
	return model, method
}
