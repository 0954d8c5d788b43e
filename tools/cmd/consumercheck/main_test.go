package main

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestConsumersShipTheirSources(t *testing.T) {
	cs, err := consumers()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cs {
		names = append(names, c.Name)
		src, err := fs.ReadFile(c.Files, "main.go")
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		// Every required module is imported, so the consumer really uses it.
		for _, r := range c.Requires {
			if !strings.Contains(string(src), `"`+r+`"`) {
				t.Errorf("%s requires %s but its main.go does not import it", c.Name, r)
			}
		}
	}
	if want := []string{"memcore-only", "retrieve-openai"}; !slices.Equal(names, want) {
		t.Errorf("consumers = %q, want %q", names, want)
	}
}

func TestFindRoot(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "tools", "cmd")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "go.work"), []byte("go 1.24\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := findRoot(sub); err != nil || got != root {
		t.Errorf("findRoot(%q) = %q, %v; want %q", sub, got, err, root)
	}
	if _, err := findRoot(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no go.work") {
		t.Errorf("findRoot outside a workspace = %v, want an error saying there is no go.work", err)
	}
}

func TestRunRejectsArguments(t *testing.T) {
	err := run([]string{"extra"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "usage: consumercheck") {
		t.Fatalf("run(extra) = %v, want an error with the usage", err)
	}
}
