// Package modproxy writes Go modules from a working tree into a module proxy
// laid out on disk, so that the go command can download them with
// GOPROXY=file://DIR as if they had been tagged and published.
//
// The layout is the one of the GOPROXY protocol (go help goproxy): for a
// module path P and version V,
//
//	DIR/<escaped P>/@v/list              the known versions, one a line
//	DIR/<escaped P>/@v/<escaped V>.info  {"Version": V, "Time": …}
//	DIR/<escaped P>/@v/<escaped V>.mod   the module's go.mod
//	DIR/<escaped P>/@v/<escaped V>.zip   the module's files
//
// where escaping replaces every upper-case letter by '!' and its lower-case
// form (module.EscapePath), so that the layout works on case-insensitive
// file systems. Zips are made by golang.org/x/mod/zip.CreateFromDir, the
// code the go command itself uses: they hold the files of the module's
// folder under "P@V/", without nested modules (subfolders with their own
// go.mod), vendor folders or version-control folders.
package modproxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	modzip "golang.org/x/mod/zip"
)

// Module is one version of a module to publish from a folder.
type Module struct {
	// Path is the module path; it must be the one declared by Dir/go.mod.
	Path string
	// Version is a canonical semantic version such as "v0.1.0".
	Version string
	// Dir is the module's root folder, the one holding its go.mod.
	Dir string
	// Time is the version's time in its .info file; the zero time means
	// now.
	Time time.Time
}

// VersionDir returns the folder of root that holds the @v files of the
// module path: root/<escaped path>/@v.
func VersionDir(root, path string) (string, error) {
	escaped, err := module.EscapePath(path)
	if err != nil {
		return "", err
	}
	return filepath.Join(root, filepath.FromSlash(escaped), "@v"), nil
}

// Write publishes m in the proxy rooted at root: its .zip, .mod and .info
// files, and its version in the module's list. Publishing the same version
// again replaces its files. The list is written last, so a version is never
// listed before its files are complete.
func Write(root string, m Module) error {
	if err := module.Check(m.Path, m.Version); err != nil {
		return err
	}
	if m.Version != semver.Canonical(m.Version) {
		return fmt.Errorf("module %s: version %q is not canonical (want %q)", m.Path, m.Version, semver.Canonical(m.Version))
	}
	gomod, err := os.ReadFile(filepath.Join(m.Dir, "go.mod"))
	if err != nil {
		return fmt.Errorf("module %s: %w", m.Path, err)
	}
	if declared := modfile.ModulePath(gomod); declared != m.Path {
		return fmt.Errorf("module %s: %s/go.mod declares module %q", m.Path, m.Dir, declared)
	}
	dir, err := VersionDir(root, m.Path)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	escVersion, err := module.EscapeVersion(m.Version)
	if err != nil {
		return err
	}
	base := filepath.Join(dir, escVersion)

	if err := writeZip(base+".zip", module.Version{Path: m.Path, Version: m.Version}, m.Dir); err != nil {
		return fmt.Errorf("module %s: zip: %w", m.Path, err)
	}
	if err := os.WriteFile(base+".mod", gomod, 0o644); err != nil {
		return err
	}
	t := m.Time
	if t.IsZero() {
		t = time.Now()
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{m.Version, t.UTC().Truncate(time.Second)})
	if err != nil {
		return err
	}
	if err := os.WriteFile(base+".info", append(info, '\n'), 0o644); err != nil {
		return err
	}
	return addToList(filepath.Join(dir, "list"), m.Version)
}

func writeZip(name string, mv module.Version, dir string) (err error) {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	return modzip.CreateFromDir(f, mv, dir)
}

// addToList adds version to the list file, keeping its versions sorted and
// unique.
func addToList(name, version string) error {
	var versions []string
	data, err := os.ReadFile(name)
	switch {
	case err == nil:
		versions = strings.Fields(string(data))
	case !errors.Is(err, os.ErrNotExist):
		return err
	}
	for _, v := range versions {
		if v == version {
			return nil
		}
	}
	versions = append(versions, version)
	semver.Sort(versions)
	return os.WriteFile(name, []byte(strings.Join(versions, "\n")+"\n"), 0o644)
}
