package demo_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/demo"
)

// The forgemem command's demo runs Run with standard output (here a
// buffer, so the example can show its first line) and a context cancelled
// on interrupt. With no Dir the memory files go to a temporary folder,
// removed when Run returns.
func ExampleRun() {
	ctx := context.Background() // the command: signal.NotifyContext(ctx, os.Interrupt)
	var out strings.Builder     // the command: os.Stdout
	if err := demo.Run(ctx, &out, demo.Options{}); err != nil {
		fmt.Println("forgemem demo:", err) // the command: to standard error, exit status 1
		return
	}
	first, _, _ := strings.Cut(out.String(), "\n")
	fmt.Println(first)
	// Output:
	// forgemem demo: four sessions of a coding agent with long-term memory, over two weeks. They run
}

// Given a folder, Run keeps the memory files there: repo/ stands for the
// repository's .forge/memory/ and user/ for ~/.forge/memory/.
func ExampleRun_dir() {
	dir, err := os.MkdirTemp("", "forgemem-demo-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	if err := demo.Run(context.Background(), io.Discard, demo.Options{Dir: dir}); err != nil {
		panic(err)
	}
	for _, scope := range []string{"repo", "user"} {
		files, _ := filepath.Glob(filepath.Join(dir, scope, "mem_*.md"))
		fmt.Printf("%s/: %d memory files\n", scope, len(files))
	}
	// Output:
	// repo/: 4 memory files
	// user/: 3 memory files
}
