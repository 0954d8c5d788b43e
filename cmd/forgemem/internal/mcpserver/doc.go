// Package mcpserver is forgemem's Model Context Protocol server, on the
// official Go SDK (github.com/modelcontextprotocol/go-sdk): the tools an
// agent that speaks MCP — Claude Code, Cursor, Cline, Codex, Gemini CLI —
// calls to recall, search, remember, show, forget and list memories. Each
// tool calls the workspace operation of the same purpose (package
// workspace), so the server and the forgemem command behave alike.
//
// [New] makes the server over an open workspace; run it on a transport
// (stdio for `forgemem mcp`, in-memory transports in tests):
//
//	srv := mcpserver.New(ws, mcpserver.Options{})
//	err := srv.Run(ctx, &mcp.StdioTransport{})
//
// Every tool has an input schema (inferred from its argument struct, with
// enums for scopes and categories and bounds for limits) and a description
// written for a model: when to call it and what it returns. Arguments are
// checked against the schema by the server itself, so that bad input —
// an unknown category, an unknown or ambiguous id, empty text, a wrong
// type — is a tool result with IsError set and a message the model can
// act on, never a protocol error. Results are text for the model and the
// operation's result as structured content. A memory whose code moved or
// went away (its anchors, package memcore/anchor) is said to be possibly
// outdated, and why, by memory_recall, memory_search and memory_show;
// memory_remember takes the agent's anchors, kept when the repository has
// them.
package mcpserver
