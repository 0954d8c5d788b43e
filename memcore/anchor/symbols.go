package anchor

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"strings"
)

// isGo reports whether the file rel is Go source, whose symbols are its
// declarations; in any other file a symbol is a word of its text.
func isGo(rel string) bool { return strings.HasSuffix(rel, ".go") }

// declSet holds the names a Go file declares, in every form a memory may
// write them: Name; Type.Name for a method, a struct field or an interface
// method; a method's bare Name too; and each of these prefixed by the
// package name (pkg.Name, pkg.Type.Name).
type declSet map[string]struct{}

func (d declSet) has(name string) bool { _, ok := d[name]; return ok }

// goDecls returns the declarations of the Go source src. A file that does
// not parse in full gives what was parsed before the error.
func goDecls(src []byte) declSet {
	f, _ := parser.ParseFile(token.NewFileSet(), "", src, parser.SkipObjectResolution)
	d := declSet{}
	if f == nil {
		return d
	}
	pkg := ""
	if f.Name != nil {
		pkg = f.Name.Name
	}
	add := func(name string) {
		if name == "" || name == "_" {
			return
		}
		d[name] = struct{}{}
		if pkg != "" {
			d[pkg+"."+name] = struct{}{}
		}
	}
	for _, decl := range f.Decls {
		switch x := decl.(type) {
		case *ast.FuncDecl:
			if x.Recv != nil && len(x.Recv.List) > 0 {
				if recv := typeName(x.Recv.List[0].Type); recv != "" {
					add(recv + "." + x.Name.Name)
				}
			}
			add(x.Name.Name)
		case *ast.GenDecl:
			for _, spec := range x.Specs {
				specDecls(spec, add)
			}
		}
	}
	return d
}

// specDecls adds the names one type, constant or variable specification
// declares: the name, and for a struct or an interface its fields and
// methods as Type.Name.
func specDecls(spec ast.Spec, add func(string)) {
	switch s := spec.(type) {
	case *ast.TypeSpec:
		add(s.Name.Name)
		var fields *ast.FieldList
		switch t := s.Type.(type) {
		case *ast.StructType:
			fields = t.Fields
		case *ast.InterfaceType:
			fields = t.Methods
		}
		if fields == nil {
			return
		}
		for _, fl := range fields.List {
			for _, n := range fl.Names {
				add(s.Name.Name + "." + n.Name)
			}
			if len(fl.Names) == 0 { // an embedded type is a field by its name
				if n := typeName(fl.Type); n != "" {
					add(s.Name.Name + "." + n)
				}
			}
		}
	case *ast.ValueSpec:
		for _, n := range s.Names {
			add(n.Name)
		}
	}
}

// typeName is the name of a receiver or embedded type: T of T, *T, T[K],
// pkg.T.
func typeName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.Ident:
			return t.Name
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.SelectorExpr:
			return t.Sel.Name
		case *ast.ParenExpr:
			e = t.X
		default:
			return ""
		}
	}
}

// hasWord reports whether text holds word with no identifier character
// (letter, digit, underscore) right before or after it. A dotted word
// (memory.retrieval_top_k) is also found by its last part, as a nested
// key of a configuration file writes it.
func hasWord(text []byte, word string) bool {
	if word == "" {
		return false
	}
	if containsWord(text, word) {
		return true
	}
	if i := strings.LastIndexByte(word, '.'); i >= 0 && i < len(word)-1 {
		return containsWord(text, word[i+1:])
	}
	return false
}

// containsWord reports whether word occurs in text between non-identifier
// characters.
func containsWord(text []byte, word string) bool {
	w := []byte(word)
	for off := 0; off <= len(text)-len(w); {
		i := bytes.Index(text[off:], w)
		if i < 0 {
			return false
		}
		at := off + i
		end := at + len(w)
		before := at == 0 || !isWordByte(text[at-1])
		after := end == len(text) || !isWordByte(text[end])
		if before && after {
			return true
		}
		off = at + 1
	}
	return false
}

// sameKind reports whether two files are searched for a symbol the same
// way: both Go, or neither and with the same extension. A symbol that left
// its file is looked for in the files of its kind in the same folder (its
// package).
func sameKind(a, b string) bool {
	if isGo(a) || isGo(b) {
		return isGo(a) && isGo(b)
	}
	return path.Ext(a) == path.Ext(b)
}
