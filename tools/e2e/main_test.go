package e2e_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// binary is the forgemem command of this checkout, built once by TestMain.
var binary string

// TestMain builds cmd/forgemem through the repository's go.work, also when
// this module is tested alone (GOWORK=off): the command's module requires
// the library modules at their release version, which only the workspace
// (or a module proxy) resolves.
func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dir, err := os.MkdirTemp("", "forgemem-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "forgemem")
	build := exec.Command("go", "build", "-o", binary, "./cmd/forgemem")
	build.Dir = root
	build.Env = append(os.Environ(), "GOWORK="+filepath.Join(root, "go.work"))
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building forgemem: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}
