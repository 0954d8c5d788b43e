// Package fakeopenai is a local HTTP server that speaks the OpenAI wire
// format, for tests of programs that reach a model through
// providers/openai (the forgemem command with memory.base_url pointing at
// it): chat completions are answered by a function of the request, and
// embeddings by providers/fake's deterministic hashing embedder. Every
// request is recorded.
package fakeopenai
