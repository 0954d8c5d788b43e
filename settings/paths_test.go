package settings_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/settings"
)

func TestFindRepoRoot(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	worktree := filepath.Join(root, "wt")
	inner := filepath.Join(repo, "vendor", "sub") // a nested repository
	plain := filepath.Join(root, "plain", "a", "b")
	mkdir(t, filepath.Join(repo, ".git", "objects"))
	mkdir(t, filepath.Join(repo, "a", "b", "c"))
	write(t, filepath.Join(worktree, ".git"), "gitdir: "+repo+"/.git/worktrees/wt\n")
	mkdir(t, filepath.Join(worktree, "deep"))
	mkdir(t, filepath.Join(inner, ".git"))
	mkdir(t, plain)

	tests := []struct {
		name, start, want string
	}{
		{"at the root", repo, repo},
		{"nested folders", filepath.Join(repo, "a", "b", "c"), repo},
		{"inside .git", filepath.Join(repo, ".git", "objects"), repo},
		{".git file of a worktree", filepath.Join(worktree, "deep"), worktree},
		{"the nearest repository wins", inner, inner},
		{"relative start", mustRel(t, filepath.Join(repo, "a")), repo},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := settings.FindRepoRoot(tt.start)
			if err != nil || got != tt.want {
				t.Errorf("FindRepoRoot(%s) = %q, %v; want %q", tt.start, got, err, tt.want)
			}
		})
	}
	t.Run("no repository", func(t *testing.T) {
		got, err := settings.FindRepoRoot(plain)
		if !errors.Is(err, settings.ErrNoRepository) || got != "" {
			t.Fatalf("FindRepoRoot outside a repository = %q, %v; want ErrNoRepository", got, err)
		}
		want := "not inside a git repository (no .git found above " + plain + "); run inside one or pass --repo-dir"
		if err.Error() != want {
			t.Errorf("message %q\nwant %q", err, want)
		}
	})
}

// mustRel returns path relative to the working directory.
func mustRel(t *testing.T, path string) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, path)
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

func TestPaths(t *testing.T) {
	f := newFixture(t)
	outside := filepath.Join(filepath.Dir(f.home), "scratch")
	mkdir(t, outside)
	repoMem := filepath.Join(f.repo, ".forge", "memory")
	userMem := filepath.Join(f.home, ".forge", "memory")
	trustFile := filepath.Join(f.home, ".forge", "trusted.json")
	write(t, filepath.Join(f.home, "env.yaml"), "")
	write(t, filepath.Join(f.home, "flag.yaml"), "")

	tests := []struct {
		name string
		opts settings.Options
		want settings.Paths
	}{
		{"in a repository", f.options(nil, nil), settings.Paths{
			WorkDir: f.work, RepoRoot: f.repo, RepoDir: repoMem, RepoConfig: f.repoFile(),
			UserDir: userMem, UserConfig: f.userFile(), TrustFile: trustFile,
		}},
		{"outside a repository", settings.Options{WorkDir: outside, Home: f.home}, settings.Paths{
			WorkDir: outside, UserDir: userMem, UserConfig: f.userFile(), TrustFile: trustFile,
		}},
		{"flags override the memory folders", settings.Options{WorkDir: f.work, Home: f.home, RepoDir: "~/r", UserDir: "rel/u"}, settings.Paths{
			WorkDir: f.work, RepoRoot: f.repo, RepoDir: filepath.Join(f.home, "r"), RepoConfig: f.repoFile(),
			UserDir: filepath.Join(f.work, "rel", "u"), UserConfig: f.userFile(), TrustFile: trustFile,
			RepoDirSource: settings.Source{Origin: settings.OriginFlag, Name: "repo-dir"},
			UserDirSource: settings.Source{Origin: settings.OriginFlag, Name: "user-dir"},
		}},
		{"variables override the memory folders", settings.Options{WorkDir: f.work, Home: f.home,
			Env: []string{"FORGEMEM_REPO_DIR=~/er", "FORGEMEM_USER_DIR=/abs/eu", "FORGEMEM_CONFIG=~/env.yaml"}}, settings.Paths{
			WorkDir: f.work, RepoRoot: f.repo, RepoDir: filepath.Join(f.home, "er"), RepoConfig: f.repoFile(),
			UserDir: "/abs/eu", UserConfig: f.userFile(), ExtraConfig: filepath.Join(f.home, "env.yaml"), TrustFile: trustFile,
			RepoDirSource: settings.Source{Origin: settings.OriginEnv, Name: "FORGEMEM_REPO_DIR"},
			UserDirSource: settings.Source{Origin: settings.OriginEnv, Name: "FORGEMEM_USER_DIR"},
		}},
		{"flags win over variables", settings.Options{WorkDir: f.work, Home: f.home, RepoDir: "/flag/r", ConfigFile: "~/flag.yaml",
			Env: []string{"FORGEMEM_REPO_DIR=/env/r", "FORGEMEM_CONFIG=/missing.yaml"}}, settings.Paths{
			WorkDir: f.work, RepoRoot: f.repo, RepoDir: "/flag/r", RepoConfig: f.repoFile(),
			UserDir: userMem, UserConfig: f.userFile(), ExtraConfig: filepath.Join(f.home, "flag.yaml"), TrustFile: trustFile,
			RepoDirSource: settings.Source{Origin: settings.OriginFlag, Name: "repo-dir"},
		}},
		{"--repo-dir turns the repository scope on outside one", settings.Options{WorkDir: outside, Home: f.home, RepoDir: "mem"}, settings.Paths{
			WorkDir: outside, RepoDir: filepath.Join(outside, "mem"), UserDir: userMem, UserConfig: f.userFile(), TrustFile: trustFile,
			RepoDirSource: settings.Source{Origin: settings.OriginFlag, Name: "repo-dir"},
		}},
		{"no home", settings.Options{WorkDir: f.work}, settings.Paths{
			WorkDir: f.work, RepoRoot: f.repo, RepoDir: repoMem, RepoConfig: f.repoFile(),
		}},
		{"no working directory", settings.Options{Home: f.home}, settings.Paths{UserDir: userMem, UserConfig: f.userFile(), TrustFile: trustFile}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustLoad(t, tt.opts).Paths
			if got != tt.want {
				t.Errorf("Paths =\n%+v\nwant\n%+v", got, tt.want)
			}
			if resolved, err := settings.ResolvePaths(tt.opts); err != nil || resolved != got {
				t.Errorf("ResolvePaths = %+v, %v; want Load's paths", resolved, err)
			}
			if (tt.want.RepoDir == "") != (got.RequireRepo() != nil) {
				t.Errorf("RequireRepo() = %v with RepoDir %q", got.RequireRepo(), got.RepoDir)
			}
		})
	}
}

func TestRequireRepoMessage(t *testing.T) {
	f := newFixture(t)
	outside := filepath.Join(filepath.Dir(f.home), "x", "y")
	mkdir(t, outside)
	s := mustLoad(t, settings.Options{WorkDir: outside, Home: f.home})
	err := s.Paths.RequireRepo()
	want := "not inside a git repository (no .git found above " + outside + "); run inside one or pass --repo-dir"
	if !errors.Is(err, settings.ErrNoRepository) || err.Error() != want {
		t.Errorf("RequireRepo() = %v\nwant %s", err, want)
	}
	// Outside a repository no repository file is read, and it is no error.
	if s.Paths.RepoConfig != "" || s.Paths.RepoRoot != "" {
		t.Errorf("repository paths outside one: %+v", s.Paths)
	}
}

// A home folder that is itself a git repository (dotfiles) is the user
// scope, not a repository scope: the two would be one folder.
func TestHomeIsARepository(t *testing.T) {
	f := newFixture(t)
	mkdir(t, filepath.Join(f.home, ".git"))
	notes := filepath.Join(f.home, "notes")
	mkdir(t, notes)
	write(t, f.userFile(), "memory:\n  cadence_turns: 2\n")
	s := mustLoad(t, settings.Options{WorkDir: notes, Home: f.home})
	if s.Paths.RepoDir != "" || s.Paths.RepoRoot != "" || !errors.Is(s.Paths.RequireRepo(), settings.ErrNoRepository) {
		t.Errorf("Paths = %+v; want the repository scope off", s.Paths)
	}
	// The error says why, not that no .git was found.
	if err := s.Paths.RequireRepo(); !strings.Contains(err.Error(), f.home+", is the home folder") || strings.Contains(err.Error(), "no .git found") {
		t.Errorf("RequireRepo() = %v; want it to name the home folder's repository", err)
	}
	if src, _ := s.Source("memory.cadence_turns"); s.CadenceTurns != 2 || src.Origin != settings.OriginUserFile {
		t.Errorf("the home file counts as the user's: %d from %v", s.CadenceTurns, src)
	}
}

func TestTildeExpansion(t *testing.T) {
	f := newFixture(t)
	write(t, filepath.Join(f.home, "team.yaml"), "memory:\n  retrieval_top_k: 7\n")
	for name, opts := range map[string]settings.Options{
		"flag":     {WorkDir: f.work, Home: f.home, ConfigFile: "~/team.yaml"},
		"variable": {WorkDir: f.work, Home: f.home, Env: []string{"FORGEMEM_CONFIG=~/team.yaml"}},
		"just ~":   {WorkDir: f.work, Home: f.home, ConfigFile: "~/./team.yaml"},
	} {
		t.Run(name, func(t *testing.T) {
			s := mustLoad(t, opts)
			src, _ := s.Source("memory.retrieval_top_k")
			if s.RetrievalTopK != 7 || src.Origin != settings.OriginConfigFile || src.Name != filepath.Join(f.home, "team.yaml") {
				t.Errorf("top k %d from %+v; want 7 from the --config file", s.RetrievalTopK, src)
			}
		})
	}
	// ~ with no home folder, and ~user, are errors naming the flag or variable.
	tests := []struct {
		opts settings.Options
		want string
	}{
		{settings.Options{WorkDir: f.work, RepoDir: "~/mem"}, "flag --repo-dir is ~/mem, want a path (~ cannot be expanded: no home folder is known)"},
		{settings.Options{WorkDir: f.work, Home: f.home, Env: []string{"FORGEMEM_USER_DIR=~bob/mem"}}, "environment variable FORGEMEM_USER_DIR is ~bob/mem, want a path (~user is not expanded: write the full path)"},
		// One folder for both scopes, named against what made it so.
		{settings.Options{WorkDir: f.work, Home: f.home, UserDir: filepath.Join(f.repo, ".forge", "memory")},
			"flag --user-dir is " + filepath.Join(f.repo, ".forge", "memory") + ", want a folder of its own: it is also the repository's memory folder, and each scope needs one"},
		{settings.Options{WorkDir: f.work, Home: f.home, RepoDir: "~/.forge/memory"},
			"flag --repo-dir is ~/.forge/memory, want a folder of its own: it is also the user's memory folder, and each scope needs one"},
		{settings.Options{WorkDir: f.work, Home: f.home, Env: []string{"FORGEMEM_REPO_DIR=" + filepath.Join(f.home, ".forge", "memory")}},
			"environment variable FORGEMEM_REPO_DIR is " + filepath.Join(f.home, ".forge", "memory") + ", want a folder of its own: it is also the user's memory folder, and each scope needs one"},
	}
	for _, tt := range tests {
		e := oneErr(t, tt.opts)
		if !errors.Is(e, settings.ErrInvalidValue) || e.Error() != tt.want {
			t.Errorf("got %q\nwant %q", e, tt.want)
		}
	}
}

func TestOSOptions(t *testing.T) {
	t.Setenv("FORGEMEM_PROVIDER", "gemini")
	t.Setenv("HOME", t.TempDir())
	opts, err := settings.OSOptions()
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if opts.WorkDir != wd || opts.Home != os.Getenv("HOME") {
		t.Errorf("OSOptions = %+v; want the working directory %s and HOME", opts, wd)
	}
	found := false
	for _, e := range opts.Env {
		found = found || e == "FORGEMEM_PROVIDER=gemini"
	}
	if !found {
		t.Error("OSOptions().Env lacks the process's FORGEMEM_PROVIDER")
	}
}
