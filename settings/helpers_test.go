package settings_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/forgemem/forgemem/settings"
)

// fixture is a fake home folder and a repository with a nested working
// directory, all in a temporary folder.
type fixture struct {
	home string // the fake home folder
	repo string // a repository (it holds .git/)
	work string // repo/src/pkg, the working directory
}

func newFixture(t testing.TB) fixture {
	t.Helper()
	root := t.TempDir()
	f := fixture{
		home: filepath.Join(root, "home", "u"),
		repo: filepath.Join(root, "code", "proj"),
	}
	f.work = filepath.Join(f.repo, "src", "pkg")
	mkdir(t, f.home)
	mkdir(t, filepath.Join(f.repo, ".git"))
	mkdir(t, f.work)
	return f
}

// userFile and repoFile are the two scopes' settings files.
func (f fixture) userFile() string { return filepath.Join(f.home, ".forge", "config.yaml") }
func (f fixture) repoFile() string { return filepath.Join(f.repo, ".forge", "config.yaml") }

// trustFile is the fixture's ~/.forge/trusted.json.
func (f fixture) trustFile() string { return filepath.Join(f.home, ".forge", "trusted.json") }

// trust records path as trusted, as forgemem trust does.
func (f fixture) trust(t *testing.T, path string) {
	t.Helper()
	if _, _, err := (settings.TrustStore{Path: f.trustFile()}).Trust(path, time.Date(2025, 3, 10, 9, 30, 0, 0, time.UTC)); err != nil {
		t.Fatalf("Trust(%s): %v", path, err)
	}
}

// options returns Load options for the fixture with env and flags.
func (f fixture) options(env []string, flags map[string]string) settings.Options {
	return settings.Options{WorkDir: f.work, Home: f.home, Env: env, Flags: flags}
}

func mkdir(t testing.TB, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
}

// write creates path (and its folder) holding content.
func write(t testing.TB, path, content string) {
	t.Helper()
	mkdir(t, filepath.Dir(path))
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// mustLoad loads and fails the test on error.
func mustLoad(t *testing.T, opts settings.Options) *settings.Settings {
	t.Helper()
	s, err := settings.Load(opts)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return s
}

// loadErr loads expecting failure and returns the problems.
func loadErr(t *testing.T, opts settings.Options) settings.Errors {
	t.Helper()
	s, err := settings.Load(opts)
	if err == nil {
		t.Fatalf("Load succeeded (%v); want an error", s)
	}
	if s != nil {
		t.Errorf("Load returned settings with its error")
	}
	var errs settings.Errors
	if !errors.As(err, &errs) || len(errs) == 0 {
		t.Fatalf("Load error %T %v is not a non-empty settings.Errors", err, err)
	}
	return errs
}

// oneErr loads expecting exactly one problem.
func oneErr(t *testing.T, opts settings.Options) *settings.Error {
	t.Helper()
	errs := loadErr(t, opts)
	if len(errs) != 1 {
		t.Fatalf("got %d problems, want 1:\n%v", len(errs), errs)
	}
	return errs[0]
}
