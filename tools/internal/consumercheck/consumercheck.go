// Package consumercheck checks that a workspace's modules work for someone
// who imports them: it publishes every library module from the working
// tree into a module proxy on disk (package modproxy), at the version the
// modules require of each other, then builds and runs small consumer
// programs outside the repository against that proxy — no workspace, no
// replace directives, an empty module cache — and checks their build lists
// (go list -m all) for modules they must not pull in.
//
// This is what `go get` of a tagged module does for a stranger, so it
// catches what the workspace hides: a requirement that only resolves
// through a replace directive or through another workspace module, and a
// module that drags a provider SDK into every build that imports it.
package consumercheck

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"

	"github.com/forgemem/forgemem/tools/internal/modproxy"
)

// Consumer is a program that imports some of the published modules.
type Consumer struct {
	// Name names the consumer's folder and the last element of its module
	// path, example.com/consumer/<Name>.
	Name string
	// Files holds the consumer's source files (a main package) at its
	// root. Run writes its go.mod.
	Files fs.FS
	// Requires lists the published modules the consumer requires, at the
	// release version.
	Requires []string
	// Forbid lists the modules that must not be in the consumer's build
	// list: a module path, or a path followed by "/..." for that path and
	// every module path under it.
	Forbid []string
}

// Config says what to publish and which consumers to build.
type Config struct {
	// Root is the workspace root, the folder holding go.work.
	Root string
	// Unpublished lists workspace modules that are not published (commands
	// and other modules nobody imports).
	Unpublished []string
	// Consumers are built, checked and run in order.
	Consumers []Consumer
	// Commands are installed, run and checked in order, after the
	// consumers.
	Commands []Command
	// Fallback is the rest of GOPROXY after the proxy of the published
	// modules, where third-party modules come from: a comma-separated list
	// of proxies, as in GOPROXY. Empty means "off".
	Fallback string
	// Go is the go command; empty means "go" from PATH.
	Go string
	// Log receives progress lines, and the build lists of the consumers
	// when Verbose is set. Nil discards them.
	Log io.Writer
	// Verbose logs every build list, not only those of failing consumers.
	Verbose bool
	// KeepDir, when set, is where the proxy, the module cache and the
	// consumers are made, and it is left in place; by default they go to a
	// temporary folder that is removed at the end.
	KeepDir string
}

// Result is what a successful Run checked.
type Result struct {
	// Version is the version the modules were published at.
	Version string
	// Published lists the published module paths.
	Published []string
	// BuildLists maps each consumer's name to its build list, one
	// "path version" line per module, the consumer itself first.
	BuildLists map[string][]string
	// Binaries maps each command's package to the modules built into it
	// (go version -m), one "path version" line each, its own module first.
	Binaries map[string][]string
}

// Command is a command of a published module, installed the way a
// stranger installs it: go install PACKAGE@VERSION.
type Command struct {
	// Package is the command's package path, for example
	// github.com/forgemem/forgemem/cmd/forgemem.
	Package string
	// Runs are the command lines the installed binary runs, each in a new
	// empty folder with HOME pointing at another; each must exit 0.
	Runs [][]string
	// Forbid lists the modules that must not be built into the binary (as
	// go version -m lists them): a module path, or a path followed by
	// "/..." for that path and every module path under it.
	Forbid []string
}

// Published is a module proxy on disk holding the workspace's published
// modules, as [Publish] made it.
type Published struct {
	// Dir is the proxy's root folder: GOPROXY=file://Dir serves it.
	Dir string
	// Version is the version every module was published at.
	Version string
	// Modules lists the published module paths.
	Modules []string
	// GoVersion is the highest go directive of the published modules.
	GoVersion string
}

// Publish writes every workspace module of root except the unpublished
// ones from the working tree into a module proxy at dir (replacing what
// dir held), at the version the modules require of each other.
func Publish(root, dir string, unpublished []string) (*Published, error) {
	mods, err := LoadWorkspace(root)
	if err != nil {
		return nil, err
	}
	version, err := ReleaseVersion(mods)
	if err != nil {
		return nil, err
	}
	for _, u := range unpublished {
		if !slices.ContainsFunc(mods, func(m WorkModule) bool { return m.Path == u }) {
			return nil, fmt.Errorf("unpublished module %s is not in %s/go.work", u, root)
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	pub := &Published{Dir: dir, Version: version}
	now := time.Now()
	for _, m := range mods {
		if slices.Contains(unpublished, m.Path) {
			continue
		}
		if err := modproxy.Write(dir, modproxy.Module{Path: m.Path, Version: version, Dir: m.Dir, Time: now}); err != nil {
			return nil, err
		}
		pub.Modules = append(pub.Modules, m.Path)
		if v, err := goDirective(m.Dir); err != nil {
			return nil, err
		} else if pub.GoVersion == "" || semver.Compare("v"+v, "v"+pub.GoVersion) > 0 {
			pub.GoVersion = v
		}
	}
	return pub, nil
}

// Run publishes the workspace's library modules and checks every consumer
// and command. The error lists every failing check, each with the
// consumer's build list or the command's modules.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	mods, err := LoadWorkspace(cfg.Root)
	if err != nil {
		return nil, err
	}
	work, cleanup, err := workDir(cfg.KeepDir)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	pub, err := Publish(cfg.Root, filepath.Join(work, "proxy"), cfg.Unpublished)
	if err != nil {
		return nil, err
	}
	r := &runner{ctx: ctx, cfg: cfg, goCmd: cmp.Or(cfg.Go, "go"), work: work, version: pub.Version, goVersion: pub.GoVersion,
		published: map[string]bool{}, res: &Result{Version: pub.Version, Published: pub.Modules, BuildLists: map[string][]string{}, Binaries: map[string][]string{}}}
	for _, m := range pub.Modules {
		r.published[m] = true
	}
	r.logf("published %d modules at %s from the working tree into %s", len(r.res.Published), r.version, pub.Dir)
	if r.known, err = knownSums(cfg.Root, mods); err != nil {
		return nil, err
	}
	// A fresh module cache for every run: a module of ours downloaded by an
	// earlier run at the same version (with other contents) is never used.
	// -modcacherw lets it be removed like any folder.
	modcache := filepath.Join(work, "modcache")
	if err := removeModCache(modcache); err != nil {
		return nil, err
	}
	r.env = Env(pub, cfg.Fallback, modcache)
	failures := append(r.checkConsumers(), r.checkCommands()...)
	if err := removeModCache(modcache); err != nil && len(failures) == 0 {
		return nil, err
	}
	if len(failures) > 0 {
		return r.res, errors.Join(failures...)
	}
	return r.res, nil
}

// workDir returns the absolute folder a run works in — keep, created if
// needed and left in place, or a new temporary folder — and the function
// that removes it at the end (nothing for keep).
func workDir(keep string) (dir string, cleanup func(), err error) {
	cleanup = func() {}
	if keep == "" {
		if keep, err = os.MkdirTemp("", "consumercheck-"); err != nil {
			return "", nil, err
		}
		tmp := keep
		cleanup = func() { os.RemoveAll(tmp) }
	} else if err := os.MkdirAll(keep, 0o755); err != nil {
		return "", nil, err
	}
	if dir, err = filepath.Abs(keep); err != nil {
		cleanup()
		return "", nil, err
	}
	return dir, cleanup, nil
}

// runner is one Run's state, once the modules are published.
type runner struct {
	ctx                context.Context
	cfg                Config
	goCmd              string
	work               string
	env                []string
	version, goVersion string
	published, known   map[string]bool
	res                *Result
}

// logf writes a progress line to the configured log, if any.
func (r *runner) logf(format string, args ...any) {
	if r.cfg.Log != nil {
		fmt.Fprintf(r.cfg.Log, format+"\n", args...)
	}
}

// checkConsumers builds, checks and runs every consumer, recording their
// build lists, and returns a failure per failing consumer.
func (r *runner) checkConsumers() []error {
	var failures []error
	for _, c := range r.cfg.Consumers {
		start := time.Now()
		list, err := checkConsumer(r.ctx, r.goCmd, r.env, filepath.Join(r.work, "consumers", c.Name), c, r.version, r.goVersion, r.published, r.known)
		if list != nil {
			r.res.BuildLists[c.Name] = list
		}
		if err != nil {
			failures = append(failures, fmt.Errorf("consumer %s: %w\n  build list (go list -m all):\n%s", c.Name, err, indent(list)))
			r.logf("%s: FAIL (%s)", c.Name, time.Since(start).Round(time.Millisecond))
			continue
		}
		r.logf("%s: builds, runs, and its %d-module build list has none of %s (%s)",
			c.Name, len(list), strings.Join(c.Forbid, ", "), time.Since(start).Round(time.Millisecond))
		if r.cfg.Verbose {
			r.logf("%s", indent(list))
		}
	}
	return failures
}

// checkCommands installs, checks and runs every command, recording the
// modules built into them, and returns a failure per failing command.
func (r *runner) checkCommands() []error {
	var failures []error
	for _, c := range r.cfg.Commands {
		start := time.Now()
		deps, err := checkCommand(r.ctx, r.goCmd, r.env, filepath.Join(r.work, "commands"), c, r.version, r.published)
		if deps != nil {
			r.res.Binaries[c.Package] = deps
		}
		if err != nil {
			failures = append(failures, fmt.Errorf("command %s: %w\n  modules built in (go version -m):\n%s", c.Package, err, indent(deps)))
			r.logf("%s: FAIL (%s)", c.Package, time.Since(start).Round(time.Millisecond))
			continue
		}
		r.logf("%s: installs with go install …@%s, runs %d command lines, and its %d modules have none of %s (%s)",
			c.Package, r.version, len(c.Runs), len(deps), strings.Join(c.Forbid, ", "), time.Since(start).Round(time.Millisecond))
		if r.cfg.Verbose {
			r.logf("%s", indent(deps))
		}
	}
	return failures
}

// Env returns the environment of a go command that builds against pub as a
// stranger would: module mode, no workspace, the module cache modcache, the
// published modules from pub's proxy and everything else from fallback (a
// GOPROXY list; empty means "off"), no checksum database and no toolchain
// download.
func Env(pub *Published, fallback, modcache string) []string {
	if fallback == "" {
		fallback = "off"
	}
	return append(os.Environ(),
		"GO111MODULE=on",
		"GOWORK=off", // outside the repository anyway; never a workspace
		"GOFLAGS=-mod=mod -modcacherw",
		"GOMODCACHE="+modcache,
		"GOPROXY=file://"+filepath.ToSlash(pub.Dir)+","+fallback,
		"GOPRIVATE=", "GONOPROXY=", "GOINSECURE=",
		// Our modules are not in the public checksum database (they are
		// not tagged yet, and these zips come from the working tree), and
		// a checksum database needs the network, which CI may not have.
		// So checksums are not looked up; instead every third-party line
		// a consumer's go.sum gets must already be in one of the
		// repository's go.sum files (checked by Run), which were verified
		// when they were written.
		"GOSUMDB=off", "GONOSUMDB=",
		"GOTOOLCHAIN=local", // never download another toolchain
	)
}

// run runs name with args in dir with env, and returns what it printed;
// its error, when it fails, quotes that output.
func run(ctx context.Context, dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s %s: %w\n%s", filepath.Base(name), strings.Join(args, " "), err, indent(strings.Split(strings.TrimRight(out.String(), "\n"), "\n")))
	}
	return out.String(), nil
}

// checkCommand installs c's package from the proxy into dir/bin, runs its
// command lines and checks the modules built into it. It returns those
// modules ("path version" lines) whenever go version -m could list them.
func checkCommand(ctx context.Context, goCmd string, env []string, dir string, c Command, version string, published map[string]bool) ([]string, error) {
	modPath := moduleOf(c.Package, published)
	if modPath == "" {
		return nil, fmt.Errorf("%s is in no published module of the workspace", c.Package)
	}
	bin := filepath.Join(dir, "bin")
	if err := freshDir(dir, bin); err != nil {
		return nil, err
	}
	// go install PACKAGE@VERSION refuses a module whose go.mod has replace
	// directives: this is where a published command proves it has none.
	installEnv := append(slices.Clone(env), "GOBIN="+bin)
	if _, err := run(ctx, dir, installEnv, goCmd, "install", c.Package+"@"+version); err != nil {
		return nil, err
	}
	exe := filepath.Join(bin, path.Base(c.Package))
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	out, err := run(ctx, dir, env, goCmd, "version", "-m", exe)
	if err != nil {
		return nil, err
	}
	deps, problems := builtIn(out, c.Forbid)
	if want := modPath + " " + version; !slices.Contains(deps, want) {
		problems = append(problems, fmt.Errorf("go version -m should list %q, as published", want))
	}
	if len(problems) > 0 {
		return deps, errors.Join(problems...)
	}
	return deps, runCommandLines(ctx, dir, env, exe, c.Runs)
}

// moduleOf returns the published module holding pkg (the longest module
// path that is pkg or a prefix of it), or "".
func moduleOf(pkg string, published map[string]bool) string {
	modPath := ""
	for m := range published {
		if (pkg == m || strings.HasPrefix(pkg, m+"/")) && len(m) > len(modPath) {
			modPath = m
		}
	}
	return modPath
}

// freshDir removes dir and creates it again, empty, with sub, a folder
// inside it.
func freshDir(dir, sub string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.MkdirAll(sub, 0o755)
}

// builtIn reads the output of go version -m: the modules built into the
// binary ("path version" lines), and what is wrong with them — a
// replacement, or a module matching a pattern of forbid.
func builtIn(versionOut string, forbid []string) (deps []string, problems []error) {
	for _, line := range strings.Split(versionOut, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 3 || (fields[0] != "dep" && fields[0] != "mod" && fields[0] != "=>") {
			continue
		}
		deps = append(deps, fields[1]+" "+fields[2])
		if fields[0] == "=>" {
			problems = append(problems, fmt.Errorf("it was built with a replacement: %s", strings.TrimSpace(line)))
		}
		for _, f := range forbid {
			if matches(f, fields[1]) {
				problems = append(problems, fmt.Errorf("it has %s built in, which it must not (forbidden: %s)", fields[1], f))
			}
		}
	}
	return deps, problems
}

// runCommandLines runs exe once per command line of runs, each in a new
// folder of dir with HOME pointing at another.
func runCommandLines(ctx context.Context, dir string, env []string, exe string, runs [][]string) error {
	for i, args := range runs {
		runDir := filepath.Join(dir, fmt.Sprintf("run-%d", i+1))
		home := filepath.Join(dir, fmt.Sprintf("home-%d", i+1))
		for _, d := range []string{runDir, home} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		if _, err := run(ctx, runDir, append(slices.Clone(env), "HOME="+home), exe, args...); err != nil {
			return err
		}
	}
	return nil
}

// checkConsumer builds, lists and runs one consumer in dir. It returns the
// build list whenever go list could make one.
func checkConsumer(ctx context.Context, goCmd string, env []string, dir string, c Consumer, version, goVersion string, published map[string]bool, known map[string]bool) ([]string, error) {
	if err := writeConsumer(dir, c, version, goVersion, published); err != nil {
		return nil, err
	}
	// No -trimpath: it would rebuild the standard library once per build
	// cache (a minute on a fresh machine), while without it only the
	// modules from the new module cache are compiled (seconds).
	bin := filepath.Join(dir, "consumer")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	_, buildErr := run(ctx, dir, env, goCmd, "build", "-o", bin, ".")
	out, err := run(ctx, dir, env, goCmd, "list", "-m", "all")
	if err != nil {
		return nil, errors.Join(buildErr, err)
	}
	list := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if buildErr != nil {
		return list, buildErr
	}
	problems := buildListProblems(list, c, version)
	sumProblems, err := unknownSums(dir, published, known)
	if err != nil {
		return list, err
	}
	if problems = append(problems, sumProblems...); len(problems) > 0 {
		return list, errors.Join(problems...)
	}
	if _, err := run(ctx, dir, env, bin); err != nil {
		return list, err
	}
	return list, nil
}

// writeConsumer writes c's files and a go.mod requiring the published
// modules it names, at version, into dir, emptied first.
func writeConsumer(dir string, c Consumer, version, goVersion string, published map[string]bool) error {
	if err := freshDir(dir, dir); err != nil {
		return err
	}
	if err := os.CopyFS(dir, c.Files); err != nil {
		return fmt.Errorf("writing its files: %w", err)
	}
	var gomod strings.Builder
	fmt.Fprintf(&gomod, "module example.com/consumer/%s\n\ngo %s\n\nrequire (\n", c.Name, goVersion)
	for _, r := range c.Requires {
		if !published[r] {
			return fmt.Errorf("it requires %s, which is not a published module of the workspace", r)
		}
		fmt.Fprintf(&gomod, "\t%s %s\n", r, version)
	}
	gomod.WriteString(")\n")
	return os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod.String()), 0o644)
}

// buildListProblems says what is wrong with a consumer's build list: a
// forbidden module, or a required one missing at version.
func buildListProblems(list []string, c Consumer, version string) []error {
	var problems []error
	for _, line := range list[1:] { // list[0] is the consumer itself
		path := strings.Fields(line)[0]
		for _, f := range c.Forbid {
			if matches(f, path) {
				problems = append(problems, fmt.Errorf("its build list has %s, which it must not pull in (forbidden: %s)", path, f))
			}
		}
	}
	for _, r := range c.Requires {
		if want := r + " " + version; !slices.Contains(list, want) {
			problems = append(problems, fmt.Errorf("its build list should have %q, as published, with no replacement", want))
		}
	}
	return problems
}

// unknownSums reports every third-party line of the go.sum in dir that no
// go.sum of the repository holds (known).
func unknownSums(dir string, published, known map[string]bool) ([]error, error) {
	sums, err := os.ReadFile(filepath.Join(dir, "go.sum"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var problems []error
	for _, line := range strings.Split(string(sums), "\n") {
		fields := strings.Fields(line)
		if len(fields) != 3 || published[fields[0]] || known[line] {
			continue
		}
		problems = append(problems, fmt.Errorf("go.sum line %q is in no go.sum of the repository: the consumer got a third-party module version or content the repository never verified (run go mod tidy in the module that requires %s)", line, fields[0]))
	}
	return problems, nil
}

// matches reports whether a module path matches a Forbid pattern.
func matches(pattern, path string) bool {
	if prefix, ok := strings.CutSuffix(pattern, "/..."); ok {
		return path == prefix || strings.HasPrefix(path, prefix+"/")
	}
	return path == pattern
}

// goDirective returns the go version declared by dir/go.mod.
func goDirective(dir string) (string, error) {
	name := filepath.Join(dir, "go.mod")
	data, err := os.ReadFile(name)
	if err != nil {
		return "", err
	}
	f, err := modfile.ParseLax(name, data, nil)
	if err != nil {
		return "", err
	}
	if f.Go == nil {
		return "", fmt.Errorf("%s has no go directive", name)
	}
	return f.Go.Version, nil
}

// knownSums returns every line of the workspace's go.sum files and of
// go.work.sum.
func knownSums(root string, mods []WorkModule) (map[string]bool, error) {
	files := []string{filepath.Join(root, "go.work.sum")}
	for _, m := range mods {
		files = append(files, filepath.Join(m.Dir, "go.sum"))
	}
	known := map[string]bool{}
	for _, name := range files {
		f, err := os.Open(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			known[strings.TrimSpace(sc.Text())] = true
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return known, nil
}

// removeModCache removes a module cache made with -modcacherw. Files an
// interrupted run left read-only are made writable first.
func removeModCache(dir string) error {
	err := os.RemoveAll(dir)
	if err == nil {
		return nil
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
	return os.RemoveAll(dir)
}

func indent(lines []string) string {
	if len(lines) == 0 {
		return "    (none)"
	}
	return "    " + strings.Join(lines, "\n    ")
}
