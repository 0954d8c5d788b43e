package settings

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The package imports no provider module (and so no model SDK): only the
// standard library, the storage, capture and retrieval modules, and YAML.
func TestImports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	allowed := []string{
		"github.com/forgemem/forgemem/memcore",
		"github.com/forgemem/forgemem/memcore/atomicfile",
		"github.com/forgemem/forgemem/memcore/redact",
		"github.com/forgemem/forgemem/memcapture",
		"github.com/forgemem/forgemem/memretrieve",
		"go.yaml.in/yaml/v3",
	}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			first, _, _ := strings.Cut(path, "/")
			if !strings.Contains(first, ".") {
				continue // the standard library
			}
			ok := false
			for _, a := range allowed {
				ok = ok || path == a
			}
			if !ok {
				t.Errorf("%s imports %s; the settings module may import only the standard library and %v", file, path, allowed)
			}
		}
	}
}
