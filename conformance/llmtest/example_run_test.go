package llmtest_test

import (
	"testing"

	"github.com/forgemem/forgemem/conformance/llmtest"
)

// TestConformance runs the suite against the example's harness, as the
// example's doc comment shows. It lives in its own file because go doc
// shows example_test.go as a whole-file example only while that file has no
// test functions.
func TestConformance(t *testing.T) {
	llmtest.Run(t, newEchoHarness, llmtest.Config{})
}
