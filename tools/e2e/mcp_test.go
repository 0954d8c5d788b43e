package e2e_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// requireMCPE2E names the environment variable that, set to a non-empty
// value, makes TestMCPWithTheTypeScriptClient fail rather than skip when
// node is missing. scripts/test sets it.
const requireMCPE2E = "REQUIRE_MCP_E2E"

// nodeDir holds the Node.js tests and their npm packages (npm ci in
// tools/e2e, which scripts/test runs): this package's folder.
const nodeDir = "."

// The built binary, driven by the official TypeScript MCP SDK client
// (Client and StdioClientTransport) as an agent drives it: tools/e2e's
// mcp.test.mjs lists the tools, remembers, searches, recalls, supersedes,
// reads the history, forgets, and checks that bad input is a tool error.
func TestMCPWithTheTypeScriptClient(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv(requireMCPE2E) == "" {
			t.Skipf("node is not installed (set %s=1 to make this a failure, as scripts/test does)", requireMCPE2E)
		}
		t.Fatalf("node is needed for the TypeScript client's test: %v", err)
	}
	// node is there, so npm ci can run: missing packages are a failure.
	if _, err := os.Stat(filepath.Join(nodeDir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		t.Fatalf("the TypeScript MCP SDK is not installed: run npm ci in tools/e2e (scripts/test does): %v", err)
	}
	cmd := exec.Command(node, "--test", "mcp.test.mjs")
	cmd.Dir = nodeDir
	cmd.Env = []string{"MCP_E2E_BINARY=" + binary, "PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	if err != nil {
		t.Fatalf("node --test mcp.test.mjs: %v\n%s", err, out.String())
	}
	// A run that tested nothing is no pass.
	if !regexp.MustCompile(`(?m)^# pass [1-9][0-9]*$`).Match(out.Bytes()) || !regexp.MustCompile(`(?m)^# fail 0$`).Match(out.Bytes()) {
		t.Fatalf("node --test ran no passing test:\n%s", out.String())
	}
}
