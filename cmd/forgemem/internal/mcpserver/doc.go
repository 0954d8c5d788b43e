// Package mcpserver is forgemem's Model Context Protocol server, on the
// official Go SDK (github.com/modelcontextprotocol/go-sdk): the tools an
// agent that speaks MCP — Claude Code, Cursor, Cline, Codex, Gemini CLI —
// calls to recall, search, remember, show, forget and list memories. Each
// tool calls the workspace operation of the same purpose (package
// workspace), so the server and the forgemem command behave alike.
//
// [New] makes the server over an open workspace; run it on a [Transport]
// over stdin and stdout (`forgemem mcp`), or on the SDK's in-memory
// transports in tests:
//
//	srv := mcpserver.New(ws, mcpserver.Options{})
//	err := srv.Run(ctx, &mcpserver.Transport{In: os.Stdin, Out: os.Stdout})
//
// The tools are the SDK's typed tools (mcp.AddTool): their input schemas
// are inferred from argument structs (descriptions from jsonschema tags,
// enums for scopes and categories and bounds on limits and lengths from
// the schemas of the argument types), the SDK checks and decodes the
// arguments, and their output schemas are inferred from result structs.
// Names, titles and descriptions are written for how a user asks ("what
// do you remember about…", "forget that…", "remember that…") and how a
// model searches for a tool among many (Claude Code offers MCP tools
// through a keyword search).
//
// What the server guarantees a client, however it behaves:
//
//   - Bad arguments — an unknown category or id, empty text, a wrong type,
//     arguments that are not an object — are a tool result with IsError
//     set and a message the model can act on (what was wrong and what the
//     tool takes), never a protocol error; so is every failure of a tool.
//     The SDK answers arguments that do not fit the schema with a protocol
//     error, which a middleware turns into such a result. Failure messages
//     are bounded and redacted (package memcore/redact).
//   - At most 8 tool calls run at once and 32 wait for a turn; a call
//     beyond those is refused at once with a "busy" tool error.
//   - Results are bounded: memory_list and memory_search at 64 KiB of text,
//     with a note saying how many were left out and how to page (offset)
//     or narrow; memory_show cuts a memory at 32 KiB and names its file. The
//     structured content holds the same as the text, notes included, since
//     some clients hand a model only that.
//   - On a [Transport], a line that is not one JSON-RPC message — or one
//     longer than 1 MiB, which is discarded as it streams — is answered
//     with a JSON-RPC error and the next line is served.
//
// A memory whose code moved or went away (its anchors, package
// memcore/anchor) is said to be possibly outdated, and why, by
// memory_recall, memory_search and memory_show; memory_remember takes the
// agent's anchors, kept when the repository has them.
//
// In a git repository, memory_remember and memory_forget name the files
// of a repo memory for the user to commit, as the command does: its new
// file and those of the earlier versions of its chain that git neither
// tracks nor ignores ([Options].ToCommit asks git).
package mcpserver
