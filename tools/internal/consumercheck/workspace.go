package consumercheck

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
)

// WorkModule is one module of a go.work workspace.
type WorkModule struct {
	// Path is the module path and Dir its root folder.
	Path, Dir string
	// Siblings maps the path of every other workspace module this one
	// requires to the required version.
	Siblings map[string]string
}

// LoadWorkspace reads root/go.work and the go.mod of every module it uses.
func LoadWorkspace(root string) ([]WorkModule, error) {
	name := filepath.Join(root, "go.work")
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	wf, err := modfile.ParseWork(name, data, nil)
	if err != nil {
		return nil, err
	}
	if len(wf.Use) == 0 {
		return nil, fmt.Errorf("%s uses no module", name)
	}
	var mods []WorkModule
	var files []*modfile.File
	for _, u := range wf.Use {
		dir := filepath.Join(root, filepath.FromSlash(u.Path))
		gomod := filepath.Join(dir, "go.mod")
		data, err := os.ReadFile(gomod)
		if err != nil {
			return nil, err
		}
		f, err := modfile.ParseLax(gomod, data, nil)
		if err != nil {
			return nil, err
		}
		if f.Module == nil {
			return nil, fmt.Errorf("%s has no module line", gomod)
		}
		mods = append(mods, WorkModule{Path: f.Module.Mod.Path, Dir: dir, Siblings: map[string]string{}})
		files = append(files, f)
	}
	for i, f := range files {
		for _, r := range f.Require {
			if slices.ContainsFunc(mods, func(m WorkModule) bool { return m.Path == r.Mod.Path }) {
				mods[i].Siblings[r.Mod.Path] = r.Mod.Version
			}
		}
	}
	return mods, nil
}

// ReleaseVersion returns the one version at which the modules require each
// other: the version they are published at together. It is an error if they
// require siblings at different versions, at a pseudo-version (which no tag
// makes resolvable), or not at all.
func ReleaseVersion(mods []WorkModule) (string, error) {
	uses := map[string][]string{} // version → "module requires sibling"
	for _, m := range mods {
		for sib, v := range m.Siblings {
			uses[v] = append(uses[v], m.Path+" requires "+sib)
		}
	}
	switch len(uses) {
	case 0:
		return "", fmt.Errorf("no workspace module requires another, so no release version can be read from the go.mod files")
	case 1:
		for v, who := range uses {
			if semver.Canonical(v) != v || module.IsPseudoVersion(v) {
				return "", fmt.Errorf("modules require their siblings at %s, which is not a release version (%s); run scripts/release VERSION", v, who[0])
			}
			return v, nil
		}
	}
	var lines []string
	for v, who := range uses {
		slices.Sort(who)
		lines = append(lines, fmt.Sprintf("  %s: %s", v, strings.Join(who, ", ")))
	}
	slices.Sort(lines)
	return "", fmt.Errorf("modules require their siblings at different versions; they are released together, so make them agree (scripts/release VERSION does):\n%s", strings.Join(lines, "\n"))
}
