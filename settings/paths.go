package settings

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The layout of a scope: <root>/.forge/memory/ holds the memories and
// <root>/.forge/config.yaml the settings, where root is the repository or
// the user's home folder.
const (
	// ForgeDir is the folder, in a repository or the home folder, that
	// holds forgemem's files.
	ForgeDir = ".forge"
	// MemoryDir is the memory folder inside ForgeDir.
	MemoryDir = "memory"
	// ConfigFile is the settings file inside ForgeDir.
	ConfigFile = "config.yaml"
)

// ErrNoRepository is returned, wrapped with the folder searched, by
// [Paths.RequireRepo] and [FindRepoRoot] when the working directory is not
// inside a git repository.
var ErrNoRepository = errors.New("not inside a git repository")

// Paths are the memory folders and settings files of both scopes.
//
// The repository is the nearest ancestor of the working directory (itself
// included) holding a .git directory or file (a git worktree or submodule
// has a .git file). Outside a repository the repository scope is off:
// RepoRoot, RepoConfig and RepoDir are empty, unless --repo-dir or
// FORGEMEM_REPO_DIR names a memory folder. A repository at the home folder
// itself (a dotfiles repository) counts as none: its .forge folder is the
// user scope's.
type Paths struct {
	// WorkDir is the folder where the repository search started.
	WorkDir string
	// RepoRoot is the repository's top folder, or "" outside one.
	RepoRoot string
	// RepoDir is the repository scope's memory folder,
	// <RepoRoot>/.forge/memory unless overridden by --repo-dir or
	// FORGEMEM_REPO_DIR; "" when the repository scope is off.
	RepoDir string
	// RepoConfig is <RepoRoot>/.forge/config.yaml, or "" outside a
	// repository. It is read even when RepoDir is overridden.
	RepoConfig string
	// UserDir is the user scope's memory folder, ~/.forge/memory unless
	// overridden by --user-dir or FORGEMEM_USER_DIR; "" when there is no
	// home folder and no override.
	UserDir string
	// RepoDirSource and UserDirSource say what named RepoDir and UserDir:
	// the flag (--repo-dir, --user-dir) or the variable
	// (FORGEMEM_REPO_DIR, FORGEMEM_USER_DIR); the zero Source (origin
	// default) for a folder in its default place.
	RepoDirSource, UserDirSource Source
	// UserConfig is ~/.forge/config.yaml, or "" with no home folder.
	UserConfig string
	// ExtraConfig is the file named by --config or FORGEMEM_CONFIG, read
	// after RepoConfig; "" when none is named.
	ExtraConfig string
	// TrustFile is ~/.forge/trusted.json, the user's record of the
	// repository settings files they trust (see [TrustStore]), or "" with
	// no home folder, when no file is trusted.
	TrustFile string

	// homeRepo is the home folder when the nearest repository was the
	// home folder itself, which is no repository scope (see above).
	homeRepo string
}

// RequireRepo returns nil when the repository scope is on (RepoDir is
// set), and otherwise an error wrapping [ErrNoRepository] that says where
// the search started and what to do:
//
//	not inside a git repository (no .git found above /x/y); run inside one or pass --repo-dir
//
// or, when the nearest repository is the home folder itself:
//
//	not inside a git repository (the nearest, /home/u, is the home folder, whose .forge is the user scope's); run inside a project's repository or pass --repo-dir
//
// Commands that need the repository scope return it.
func (p Paths) RequireRepo() error {
	if p.RepoDir != "" {
		return nil
	}
	if p.homeRepo != "" {
		return fmt.Errorf("%w (the nearest, %s, is the home folder, whose .forge is the user scope's); run inside a project's repository or pass --repo-dir",
			ErrNoRepository, p.homeRepo)
	}
	return noRepository(p.WorkDir)
}

func noRepository(start string) error {
	if start == "" {
		return fmt.Errorf("%w (no working directory was given); run inside one or pass --repo-dir", ErrNoRepository)
	}
	return fmt.Errorf("%w (no .git found above %s); run inside one or pass --repo-dir", ErrNoRepository, start)
}

// FindRepoRoot returns the nearest ancestor of dir (dir included) that
// holds a .git directory or file. dir is made absolute first. Outside a
// repository the error wraps [ErrNoRepository].
func FindRepoRoot(dir string) (string, error) {
	if dir == "" {
		return "", noRepository("")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("settings: finding the repository from %s: %w", dir, err)
	}
	for d := abs; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", noRepository(abs)
		}
		d = parent
	}
}

// expandPath expands a leading ~ to home and makes a relative path
// absolute against base (when base is set). what names the path for the
// error ("flag --repo-dir").
func expandPath(p, home, base string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") || strings.HasPrefix(p, "~"+string(filepath.Separator)) {
		if home == "" {
			return "", errors.New("~ cannot be expanded: no home folder is known")
		}
		p = filepath.Join(home, p[1:])
	} else if strings.HasPrefix(p, "~") {
		return "", errors.New("~user is not expanded: write the full path")
	}
	if !filepath.IsAbs(p) && base != "" {
		p = filepath.Join(base, p)
	}
	return filepath.Clean(p), nil
}

// scopeFiles returns a scope root's memory folder and settings file.
func scopeFiles(root string) (dir, config string) {
	return filepath.Join(root, ForgeDir, MemoryDir), filepath.Join(root, ForgeDir, ConfigFile)
}
