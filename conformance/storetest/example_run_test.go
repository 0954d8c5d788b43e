package storetest_test

import (
	"os"
	"testing"
	"time"

	"github.com/forgemem/forgemem/conformance/storetest"
)

var (
	tempDir     string
	exampleTime = time.Date(2025, 1, 15, 10, 30, 0, 0, time.UTC)
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "storetest-example-")
	if err != nil {
		panic(err)
	}
	tempDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestExampleHarness is the test the Example describes: the suite run with
// the example's harness, which is how memcore.FileStore is checked.
func TestExampleHarness(t *testing.T) {
	storetest.Run(t, newDirHarness, storetest.Config{})
}
