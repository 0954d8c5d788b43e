// Package e2e holds the end-to-end tests that drive the built forgemem
// command with the clients people use, installed from npm (package.json
// and package-lock.json in this folder; scripts/test runs npm ci here):
// the official TypeScript MCP SDK client, and the agents Claude Code,
// Codex and Gemini CLI, run headless with the set-up of
// docs/INTEGRATIONS.md against a fake of each one's model API
// (tools/internal/fakemodel) on 127.0.0.1, with no other network. Its
// tests build the command once from cmd/forgemem of this checkout.
package e2e
