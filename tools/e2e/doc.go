// Package e2e holds the end-to-end tests that drive the built forgemem
// command with the clients people use, installed from npm (package.json
// and package-lock.json in this folder; scripts/test runs npm ci here):
// the official TypeScript MCP SDK client. Its tests build the command once
// from cmd/forgemem of this checkout.
package e2e
