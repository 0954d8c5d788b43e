// Package fakemodel is a scripted fake of the model APIs that coding
// agents and forgemem call, for end-to-end tests that run the real agents
// with no network and no API key: the Anthropic Messages API (Claude
// Code), the OpenAI Responses API (Codex), the Gemini API (Gemini CLI),
// and OpenAI-compatible chat completions and embeddings (forgemem's own
// classifier and embedder).
//
// A [Server] listens on 127.0.0.1 and logs every request it gets, parsed
// into one shape for every API ([Request]: the system text, the messages
// with their tool calls and tool results, the tools offered), so that a
// test can check what an agent sent its model. A [Script] per API decides
// each reply ([Reply]: a text, or tool calls), written in that API's wire
// format, streamed (server-sent events) when the request asks for it.
//
// The server is also an HTTP proxy that refuses every request: an agent
// started with HTTPS_PROXY and HTTP_PROXY pointing at it (and NO_PROXY
// naming 127.0.0.1) reaches nothing outside the machine, and each host it
// tried is in the log ([APIProxy]).
package fakemodel
