package modproxy

import (
	"archive/zip"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// writeTree creates the files of tree (slash-separated name → content) under
// dir.
func writeTree(t *testing.T, dir string, tree map[string]string) {
	t.Helper()
	for name, content := range tree {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func zipNames(t *testing.T, name string) []string {
	t.Helper()
	r, err := zip.OpenReader(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var names []string
	for _, f := range r.File {
		names = append(names, f.Name)
	}
	slices.Sort(names)
	return names
}

func TestVersionDirEscapesUpperCase(t *testing.T) {
	root := t.TempDir()
	for path, want := range map[string]string{
		"github.com/Foo":                   "github.com/!foo/@v",
		"github.com/BurntSushi/TOML":       "github.com/!burnt!sushi/!t!o!m!l/@v",
		"github.com/forgemem/forgemem/x":   "github.com/forgemem/forgemem/x/@v",
		"example.com/providers/openai/v2":  "example.com/providers/openai/v2/@v",
		"github.com/forgemem/forgemem/Mem": "github.com/forgemem/forgemem/!mem/@v",
	} {
		got, err := VersionDir(root, path)
		if err != nil {
			t.Fatalf("VersionDir(%q): %v", path, err)
		}
		if want := filepath.Join(root, filepath.FromSlash(want)); got != want {
			t.Errorf("VersionDir(%q) = %q, want %q", path, got, want)
		}
	}
	if _, err := VersionDir(root, "not a path!"); err == nil {
		t.Error("VersionDir accepted an invalid module path")
	}
}

func TestWriteLaysOutOneVersion(t *testing.T) {
	src := t.TempDir()
	gomod := "module example.com/Lib\n\ngo 1.24\n"
	writeTree(t, src, map[string]string{
		"go.mod":                 gomod,
		"lib.go":                 "package lib\n",
		"internal/x/x.go":        "package x\n",
		"testdata/case.txt":      "data\n",
		"nested/go.mod":          "module example.com/Lib/nested\n",
		"nested/nested.go":       "package nested\n",
		"vendor/modules.txt":     "# vendored\n",
		".git/HEAD":              "ref: refs/heads/main\n",
		"sub/deeper/go.mod":      "module example.com/Lib/sub/deeper\n",
		"sub/deeper/deeper.go":   "package deeper\n",
		"sub/kept.go":            "package sub\n",
		"docs/README.md":         "# lib\n",
		"internal/x/x_test.go":   "package x\n",
		"internal/x/testdata/in": "in\n",
	})
	root := t.TempDir()
	when := time.Date(2025, 1, 15, 10, 30, 0, 0, time.FixedZone("x", 3600))
	if err := Write(root, Module{Path: "example.com/Lib", Version: "v0.1.0", Dir: src, Time: when}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "example.com", "!lib", "@v")

	got := zipNames(t, filepath.Join(dir, "v0.1.0.zip"))
	want := []string{
		"example.com/!lib@v0.1.0/docs/README.md",
		"example.com/!lib@v0.1.0/go.mod",
		"example.com/!lib@v0.1.0/internal/x/testdata/in",
		"example.com/!lib@v0.1.0/internal/x/x.go",
		"example.com/!lib@v0.1.0/internal/x/x_test.go",
		"example.com/!lib@v0.1.0/lib.go",
		"example.com/!lib@v0.1.0/sub/kept.go",
		"example.com/!lib@v0.1.0/testdata/case.txt",
	}
	// Zip entries use the module path as written, not escaped.
	for i := range want {
		want[i] = strings.Replace(want[i], "!lib", "Lib", 1)
	}
	if !slices.Equal(got, want) {
		t.Errorf("zip holds\n  %s\nwant (no nested module, vendor or .git)\n  %s",
			strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}

	mod, err := os.ReadFile(filepath.Join(dir, "v0.1.0.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if string(mod) != gomod {
		t.Errorf(".mod = %q, want the module's go.mod %q", mod, gomod)
	}

	var info struct {
		Version string
		Time    time.Time
	}
	raw, err := os.ReadFile(filepath.Join(dir, "v0.1.0.info"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &info); err != nil {
		t.Fatalf(".info %q: %v", raw, err)
	}
	if info.Version != "v0.1.0" || !info.Time.Equal(when) || info.Time.Location() != time.UTC {
		t.Errorf(".info = %s, want version v0.1.0 and time %s in UTC", raw, when.UTC())
	}

	list, err := os.ReadFile(filepath.Join(dir, "list"))
	if err != nil {
		t.Fatal(err)
	}
	if string(list) != "v0.1.0\n" {
		t.Errorf("list = %q, want %q", list, "v0.1.0\n")
	}
}

func TestWriteKeepsTheListSortedAndUnique(t *testing.T) {
	src := t.TempDir()
	writeTree(t, src, map[string]string{"go.mod": "module example.com/lib\n", "lib.go": "package lib\n"})
	root := t.TempDir()
	for _, v := range []string{"v0.10.0", "v0.2.0", "v0.2.0", "v0.9.1", "v1.0.0-rc.1"} {
		if err := Write(root, Module{Path: "example.com/lib", Version: v, Dir: src}); err != nil {
			t.Fatalf("Write %s: %v", v, err)
		}
	}
	list, err := os.ReadFile(filepath.Join(root, "example.com", "lib", "@v", "list"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "v0.2.0\nv0.9.1\nv0.10.0\nv1.0.0-rc.1\n"; string(list) != want {
		t.Errorf("list = %q, want %q", list, want)
	}
}

func TestWriteRejectsBadInput(t *testing.T) {
	src := t.TempDir()
	writeTree(t, src, map[string]string{"go.mod": "module example.com/lib\n", "lib.go": "package lib\n"})
	for _, tc := range []struct {
		name string
		m    Module
		want string
	}{
		{"other module path", Module{Path: "example.com/other", Version: "v0.1.0", Dir: src}, `declares module "example.com/lib"`},
		{"short version", Module{Path: "example.com/lib", Version: "v0.1", Dir: src}, "not canonical"},
		{"not a version", Module{Path: "example.com/lib", Version: "latest", Dir: src}, "latest"},
		{"major version without suffix", Module{Path: "example.com/lib", Version: "v2.0.0", Dir: src}, "v2"},
		{"no go.mod", Module{Path: "example.com/lib", Version: "v0.1.0", Dir: t.TempDir()}, "go.mod"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			err := Write(root, tc.m)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Write(%+v) = %v, want an error mentioning %q", tc.m, err, tc.want)
			}
		})
	}
}
