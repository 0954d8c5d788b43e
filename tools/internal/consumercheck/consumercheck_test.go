package consumercheck

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"golang.org/x/mod/sumdb/dirhash"

	"github.com/forgemem/forgemem/tools/internal/modproxy"
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

// A workspace like the repository's, in miniature: a core module, a heavy
// module built on it, and a command module that is not published. Module
// paths have upper-case letters, so the proxy's path escaping is exercised
// through the go command.
const (
	corePath  = "example.com/FM/core"
	heavyPath = "example.com/FM/heavy"
	cmdPath   = "example.com/FM/cmd"
)

func miniWorkspace(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"go.work": "go 1.24\n\nuse (\n\t./core\n\t./heavy\n\t./cmd\n)\n",

		"core/go.mod":  "module " + corePath + "\n\ngo 1.24\n",
		"core/core.go": "package core\n\n// Answer is the answer.\nfunc Answer() int { return 42 }\n",

		"heavy/go.mod": "module " + heavyPath + "\n\ngo 1.24\n\nrequire " + corePath + " v0.3.0\n\nreplace " + corePath + " => ../core\n",
		"heavy/heavy.go": "package heavy\n\nimport \"" + corePath + "\"\n\n" +
			"// Double doubles the answer.\nfunc Double() int { return 2 * core.Answer() }\n",

		"cmd/go.mod": "module " + cmdPath + "\n\ngo 1.24\n\nrequire (\n\t" + corePath + " v0.3.0\n\t" + heavyPath + " v0.3.0\n)\n\n" +
			"replace (\n\t" + corePath + " => ../core\n\t" + heavyPath + " => ../heavy\n)\n",
		"cmd/main.go": "package main\n\nimport \"" + heavyPath + "\"\n\nfunc main() { println(heavy.Double()) }\n",
	})
	return root
}

func mainFile(body string, imports ...string) fstest.MapFS {
	var b strings.Builder
	b.WriteString("package main\n\nimport (\n\t\"os\"\n")
	for _, imp := range imports {
		b.WriteString("\t\"" + imp + "\"\n")
	}
	b.WriteString(")\n\nfunc main() {\n" + body + "\n\tos.Exit(0)\n}\n")
	return fstest.MapFS{"main.go": {Data: []byte(b.String())}}
}

func TestRunChecksBuildListsAndRunsConsumers(t *testing.T) {
	root := miniWorkspace(t)
	var log strings.Builder
	res, err := Run(context.Background(), Config{
		Root:        root,
		Unpublished: []string{cmdPath},
		Consumers: []Consumer{
			{
				Name:     "core-only",
				Files:    mainFile("if core.Answer() != 42 { os.Exit(1) }", corePath),
				Requires: []string{corePath},
				Forbid:   []string{"example.com/FM/heavy/...", "example.com/FM/cmd"},
			},
			{
				Name:     "uses-heavy",
				Files:    mainFile("if heavy.Double() != 84 { os.Exit(1) }", heavyPath),
				Requires: []string{heavyPath},
				Forbid:   []string{heavyPath},
			},
			{
				Name:     "fails-at-run",
				Files:    mainFile("if core.Answer() == 42 { os.Exit(3) }", corePath),
				Requires: []string{corePath},
			},
		},
		Log: &log,
	})
	if err == nil {
		t.Fatalf("Run passed; want uses-heavy and fails-at-run to fail\nlog:\n%s", log.String())
	}
	msg := err.Error()
	for _, want := range []string{
		"consumer uses-heavy: its build list has example.com/FM/heavy, which it must not pull in (forbidden: example.com/FM/heavy)",
		"    example.com/consumer/uses-heavy\n    example.com/FM/core v0.3.0\n    example.com/FM/heavy v0.3.0",
		"consumer fails-at-run: ",
		"exit status 3",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error does not contain %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "consumer core-only") {
		t.Errorf("core-only failed:\n%s", msg)
	}
	if res.Version != "v0.3.0" {
		t.Errorf("Version = %q, want v0.3.0, the version the modules require of each other", res.Version)
	}
	if want := []string{corePath, heavyPath}; !slices.Equal(res.Published, want) {
		t.Errorf("Published = %q, want %q (cmd is unpublished)", res.Published, want)
	}
	if got, want := res.BuildLists["core-only"], []string{"example.com/consumer/core-only", corePath + " v0.3.0"}; !slices.Equal(got, want) {
		t.Errorf("core-only build list = %q, want %q", got, want)
	}
	if !strings.Contains(log.String(), "core-only: builds, runs") {
		t.Errorf("log does not report core-only passing:\n%s", log.String())
	}
}

func TestRunReportsAModuleThatOnlyBuildsThroughReplace(t *testing.T) {
	root := miniWorkspace(t)
	// heavy now needs cmd, which is not published: the workspace and
	// heavy's replace directives hide it, a consumer's build cannot.
	writeTree(t, root, map[string]string{
		"heavy/go.mod": "module " + heavyPath + "\n\ngo 1.24\n\nrequire (\n\t" + corePath + " v0.3.0\n\t" + cmdPath + " v0.3.0\n)\n\n" +
			"replace (\n\t" + corePath + " => ../core\n\t" + cmdPath + " => ../cmd\n)\n",
	})
	_, err := Run(context.Background(), Config{
		Root:        root,
		Unpublished: []string{cmdPath},
		Fallback:    "file://" + filepath.ToSlash(t.TempDir()), // an empty proxy
		Consumers: []Consumer{{
			Name:     "uses-heavy",
			Files:    mainFile("_ = heavy.Double()", heavyPath),
			Requires: []string{heavyPath},
		}},
	})
	if err == nil || !strings.Contains(err.Error(), "consumer uses-heavy: ") || !strings.Contains(err.Error(), "example.com/FM/cmd@v0.3.0: ") {
		t.Fatalf("Run = %v, want uses-heavy to fail on the unpublished example.com/FM/cmd", err)
	}
}

// A third-party module, served by a fallback proxy, must come with go.sum
// lines the repository already has: with GOSUMDB off, that is what vouches
// for its contents.
func TestRunVerifiesThirdPartySumsAgainstTheRepository(t *testing.T) {
	const third = "example.org/third"
	src := t.TempDir()
	writeTree(t, src, map[string]string{
		"go.mod":   "module " + third + "\n\ngo 1.22\n",
		"third.go": "package third\n\n// Name names it.\nconst Name = \"third\"\n",
	})
	fallback := t.TempDir()
	if err := modproxy.Write(fallback, modproxy.Module{Path: third, Version: "v1.2.3", Dir: src}); err != nil {
		t.Fatal(err)
	}
	zipHash, err := dirhash.HashZip(filepath.Join(fallback, third, "@v", "v1.2.3.zip"), dirhash.Hash1)
	if err != nil {
		t.Fatal(err)
	}
	modHash, err := dirhash.Hash1([]string{"go.mod"}, func(string) (io.ReadCloser, error) {
		return os.Open(filepath.Join(fallback, third, "@v", "v1.2.3.mod"))
	})
	if err != nil {
		t.Fatal(err)
	}
	goodSum := third + " v1.2.3 " + zipHash + "\n" + third + " v1.2.3/go.mod " + modHash + "\n"

	for _, tc := range []struct {
		name, sum, wantErr string
	}{
		{"sums in the repository", goodSum, ""},
		{"sums missing", "", `go.sum line "example.org/third v1.2.3 h1:`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := miniWorkspace(t)
			writeTree(t, root, map[string]string{
				"core/go.mod":  "module " + corePath + "\n\ngo 1.24\n\nrequire " + third + " v1.2.3\n",
				"core/go.sum":  tc.sum,
				"core/core.go": "package core\n\nimport \"" + third + "\"\n\n// Answer is the answer.\nfunc Answer() int { return 39 + len(third.Name) }\n",
			})
			_, err := Run(context.Background(), Config{
				Root:        root,
				Unpublished: []string{cmdPath},
				Fallback:    "file://" + filepath.ToSlash(fallback) + ",off",
				Consumers: []Consumer{{
					Name:     "core-only",
					Files:    mainFile("if core.Answer() != 44 { os.Exit(1) }", corePath),
					Requires: []string{corePath},
				}},
			})
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Run: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("Run = %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestRunKeepsItsFilesOnlyWhenAsked(t *testing.T) {
	root := miniWorkspace(t)
	keep := filepath.Join(t.TempDir(), "kept")
	cfg := Config{
		Root:        root,
		Unpublished: []string{cmdPath},
		KeepDir:     keep,
		Consumers: []Consumer{{
			Name:     "core-only",
			Files:    mainFile("_ = core.Answer()", corePath),
			Requires: []string{corePath},
		}},
	}
	start := time.Now()
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{
		"proxy/example.com/!f!m/core/@v/v0.3.0.zip",
		"proxy/example.com/!f!m/heavy/@v/list",
		"consumers/core-only/go.mod",
	} {
		if _, err := os.Stat(filepath.Join(keep, filepath.FromSlash(p))); err != nil {
			t.Errorf("kept folder lacks %s: %v", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(keep, "proxy/example.com/!f!m/cmd")); err == nil {
		t.Error("the unpublished cmd module is in the proxy")
	}
	// The module cache is fresh on every run, and removed at the end.
	if _, err := os.Stat(filepath.Join(keep, "modcache")); err == nil {
		t.Error("the module cache was left behind")
	}
	t.Logf("one consumer in %s", time.Since(start).Round(time.Millisecond))
}

func TestRunRejectsAConsumerOfAnUnpublishedModule(t *testing.T) {
	root := miniWorkspace(t)
	_, err := Run(context.Background(), Config{
		Root:        root,
		Unpublished: []string{cmdPath},
		Consumers:   []Consumer{{Name: "c", Files: mainFile(""), Requires: []string{cmdPath}}},
	})
	if err == nil || !strings.Contains(err.Error(), "it requires example.com/FM/cmd, which is not a published module") {
		t.Fatalf("Run = %v, want an error naming the unpublished requirement", err)
	}
}

func TestMatches(t *testing.T) {
	for _, tc := range []struct {
		pattern, path string
		want          bool
	}{
		{"google.golang.org/genai", "google.golang.org/genai", true},
		{"google.golang.org/genai", "google.golang.org/genai2", false},
		{"google.golang.org/genai", "google.golang.org/genai/x", false},
		{"github.com/forgemem/forgemem/providers/...", "github.com/forgemem/forgemem/providers/openai", true},
		{"github.com/forgemem/forgemem/providers/...", "github.com/forgemem/forgemem/providers", true},
		{"github.com/forgemem/forgemem/providers/...", "github.com/forgemem/forgemem/providersx", false},
		{"github.com/forgemem/forgemem/providers/...", "github.com/forgemem/forgemem/memcore", false},
	} {
		if got := matches(tc.pattern, tc.path); got != tc.want {
			t.Errorf("matches(%q, %q) = %v, want %v", tc.pattern, tc.path, got, tc.want)
		}
	}
}

func TestRunRejectsAnUnknownUnpublishedModule(t *testing.T) {
	root := miniWorkspace(t)
	_, err := Run(context.Background(), Config{Root: root, Unpublished: []string{"example.com/FM/tools"}})
	if err == nil || !strings.Contains(err.Error(), "unpublished module example.com/FM/tools is not in") {
		t.Fatalf("Run = %v, want an error naming the unknown unpublished module", err)
	}
}

// A command module published beside the library modules installs with go
// install …@VERSION and runs; one with replace directives does not (go
// install refuses it), and a forbidden module built into the binary fails
// the check with the binary's module list.
func TestRunInstallsCommands(t *testing.T) {
	root := miniWorkspace(t)
	const toolPath = "example.com/FM/tool"
	writeTree(t, root, map[string]string{
		"go.work":     "go 1.24\n\nuse (\n\t./core\n\t./heavy\n\t./cmd\n\t./tool\n)\n",
		"tool/go.mod": "module " + toolPath + "\n\ngo 1.24\n\nrequire " + heavyPath + " v0.3.0\n",
		"tool/main.go": "package main\n\nimport (\n\t\"os\"\n\n\t\"" + heavyPath + "\"\n)\n\n" +
			"func main() {\n\tif len(os.Args) > 1 && os.Args[1] == \"fail\" {\n\t\tos.Exit(4)\n\t}\n\tprintln(heavy.Double())\n}\n",
	})
	tests := []struct {
		name    string
		command Command
		errs    []string // empty: it passes
	}{
		{"installs and runs", Command{Package: toolPath, Runs: [][]string{{}, {"twice"}}, Forbid: []string{"example.com/FM/cmd"}}, nil},
		{"a run fails", Command{Package: toolPath, Runs: [][]string{{"fail"}}}, []string{"command example.com/FM/tool: ", "exit status 4"}},
		{"a forbidden module is built in", Command{Package: toolPath, Forbid: []string{corePath}},
			[]string{"it has example.com/FM/core built in, which it must not (forbidden: example.com/FM/core)", "    example.com/FM/tool v0.3.0\n    example.com/FM/core v0.3.0"}},
		{"replace directives", Command{Package: cmdPath}, []string{"command example.com/FM/cmd: ", "replace directives"}},
		{"not published", Command{Package: "example.com/other/x"}, []string{"example.com/other/x is in no published module"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Run(context.Background(), Config{Root: root, Commands: []Command{tt.command}})
			if len(tt.errs) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if got := res.Binaries[toolPath]; len(got) < 3 || got[0] != toolPath+" v0.3.0" {
					t.Errorf("Binaries[tool] = %q, want the tool's module first, then its dependencies", got)
				}
				return
			}
			if err == nil {
				t.Fatal("Run passed")
			}
			for _, want := range tt.errs {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error does not contain %q:\n%v", want, err)
				}
			}
		})
	}
}

// Publish writes the modules into a proxy the go command can read, at the
// release version, and nothing of an unpublished module.
func TestPublish(t *testing.T) {
	root := miniWorkspace(t)
	dir := filepath.Join(t.TempDir(), "proxy")
	pub, err := Publish(root, dir, []string{cmdPath})
	if err != nil {
		t.Fatal(err)
	}
	if pub.Version != "v0.3.0" || pub.GoVersion != "1.24" || !slices.Equal(pub.Modules, []string{corePath, heavyPath}) {
		t.Errorf("Publish = %+v", pub)
	}
	for _, p := range []string{corePath, heavyPath} {
		vdir, err := modproxy.VersionDir(dir, p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(vdir, "v0.3.0.zip")); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	vdir, err := modproxy.VersionDir(dir, cmdPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(vdir); err == nil {
		t.Errorf("the unpublished %s is in the proxy", cmdPath)
	}
}
