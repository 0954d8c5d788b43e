package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/claudecode"
)

// localSettings are the files hook install writes in a repository that
// hold this machine's path to forgemem: .claude/settings.local.json and
// the backup of its previous version, relative to the repository's top
// folder, as git names them.
var localSettings = []string{
	".claude/" + claudecode.LocalSettingsFile,
	".claude/" + claudecode.LocalSettingsFile + ".bak",
}

// excludeComment comes before the lines hook install adds to
// .git/info/exclude, to say where they come from.
const excludeComment = "# forgemem hook install: this machine's Claude Code settings, which hold its path to forgemem"

// keepLocalSettingsOutOfGit makes git ignore the files of localSettings
// in the repository at root, as Claude Code does for settings.local.json
// when it creates it: those git does not ignore yet are added to the
// repository's .git/info/exclude, which is this clone's own and never
// committed, rather than to a .gitignore the team shares. It returns the
// line to say about it, or "" when there is nothing to say: git is not
// installed, root is not the top of a git work tree, or git ignores the
// files already (a rule of the user's, or the one Claude Code writes).
func (a *app) keepLocalSettingsOutOfGit(ctx context.Context, root string) (string, error) {
	git := a.gitIn(ctx, root)
	if git == nil {
		return "", nil
	}
	out, err := git("rev-parse", "--is-inside-work-tree", "--git-path", "info/exclude")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if err != nil || len(lines) != 2 || lines[0] != "true" {
		return "", nil // not a work tree git knows here
	}
	exclude := lines[1]
	if !filepath.IsAbs(exclude) {
		exclude = filepath.Join(root, exclude)
	}
	// check-ignore prints the paths git ignores, and exits 1 when it
	// ignores none of them.
	out, err = git(append([]string{"check-ignore", "--"}, localSettings...)...)
	var exit *exec.ExitError
	if err != nil && (!errors.As(err, &exit) || exit.ExitCode() != 1) {
		return "", fmt.Errorf("asking git whether it ignores %s: %w", localSettings[0], err)
	}
	ignored := strings.Fields(out)
	var add []string
	for _, f := range localSettings {
		if !slices.Contains(ignored, f) {
			add = append(add, f)
		}
	}
	if len(add) == 0 {
		return "", nil
	}
	added, err := addExcludes(exclude, add)
	if err != nil {
		return "", fmt.Errorf("adding %s to %s: %w", strings.Join(add, " and "), exclude, err)
	}
	shown := exclude
	if rel, err := filepath.Rel(root, exclude); err == nil && !strings.HasPrefix(rel, "..") {
		shown = rel
	}
	// A tracked file is not ignored, whatever the rules say.
	if tracked, err := git("ls-files", "--", localSettings[0]); err == nil && strings.TrimSpace(tracked) != "" {
		return fmt.Sprintf("%s is tracked by git, with this machine's path: git rm --cached %s stops committing it (%s ignores it then).",
			localSettings[0], localSettings[0], shown), nil
	}
	if len(added) == 0 {
		return "", nil // the lines are there, and a rule of the repository's undoes them
	}
	what := strings.Join(added, " and ")
	if len(added) == len(localSettings) {
		what = localSettings[0] + " and its backup"
	}
	return fmt.Sprintf("Added %s to %s so that git does not commit this machine's settings; .gitignore is unchanged.", what, shown), nil
}

// gitTimeout bounds each git command the command runs to tell the user
// what git makes of a memory folder.
const gitTimeout = 5 * time.Second

// gitIn returns a function that runs git with its arguments in the
// repository at root (see gitEnv), within gitTimeout, and returns what it
// printed; its error quotes the first line git wrote to stderr. It returns
// nil when git is not installed.
func (a *app) gitIn(ctx context.Context, root string) func(args ...string) (string, error) {
	gitPath := lookPath("git", a.env.Settings.Env)
	if gitPath == "" {
		return nil
	}
	return func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(ctx, gitTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, gitPath, args...)
		cmd.Dir = root
		cmd.Env = gitEnv(a.env.Settings.Env, root)
		cmd.WaitDelay = time.Second
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		if said, _, _ := strings.Cut(strings.TrimSpace(errOut.String()), "\n"); err != nil && said != "" {
			err = fmt.Errorf("%s (%w)", said, err)
		}
		return out.String(), err
	}
}

// gitEnv is the environment of the git commands run in the repository at
// root: env without the variables that would point git at another
// repository (a git hook running forgemem sets GIT_DIR), and git stopped
// from looking above root for one.
func gitEnv(env []string, root string) []string {
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE", "GIT_CEILING_DIRECTORIES":
			return true
		}
		return false
	})
	return append(out, "GIT_CEILING_DIRECTORIES="+filepath.Dir(root))
}

// addExcludes adds a line for each of files, paths from the top of the
// work tree, to the git exclude file at path, after excludeComment,
// unless the file has the line already; it returns the files whose line
// it added.
func addExcludes(path string, files []string) ([]string, error) {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	have := make(map[string]bool)
	for _, l := range strings.Split(string(old), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	var b strings.Builder
	var added []string
	for _, f := range files {
		if !have["/"+f] {
			added = append(added, f)
			b.WriteString("/" + f + "\n")
		}
	}
	if len(added) == 0 {
		return nil, nil
	}
	text := excludeComment + "\n" + b.String()
	if len(old) > 0 && !bytes.HasSuffix(old, []byte("\n")) {
		text = "\n" + text
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return nil, err
	}
	return added, f.Close()
}
