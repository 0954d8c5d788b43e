package settings

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/forgemem/forgemem/memcore/redact"
	"go.yaml.in/yaml/v3"
)

// Options are the inputs of [Load]. Nothing is read from the process: the
// working directory, the home folder and the environment are given here
// ([OSOptions] fills them in from the process for the usual case), so
// tests and embedding hosts control everything.
type Options struct {
	// WorkDir is where the repository search starts (usually the process's
	// working directory); relative paths in flags and variables are taken
	// relative to it. Empty: no repository search, and relative paths are
	// kept as given.
	WorkDir string
	// Home is the user's home folder: the user scope is Home/.forge, and
	// ~ expands to it. Empty: there is no user settings file, UserDir is
	// empty unless overridden, and a path starting with ~ is an error.
	Home string
	// Env is the environment, as os.Environ returns it ("NAME=value").
	// When a name appears twice, the first wins, as with os.Getenv.
	Env []string
	// Flags holds the settings flags the user set on the command line,
	// keyed by [Key].Flag ("cadence-turns"; "--cadence-turns" is accepted
	// too), with the text the user wrote. Only keys of [Keys] belong here;
	// the location flags have fields of their own below.
	Flags map[string]string
	// ConfigFile is --config: an extra settings file read after the
	// repository's. It wins over FORGEMEM_CONFIG. A missing file named
	// here or there is an error. The user named it, so it is trusted, even
	// when it is the repository's own file.
	ConfigFile string
	// RepoDir is --repo-dir: the repository scope's memory folder. It wins
	// over FORGEMEM_REPO_DIR.
	RepoDir string
	// UserDir is --user-dir: the user scope's memory folder. It wins over
	// FORGEMEM_USER_DIR.
	UserDir string
	// TrustCommand is what a [Warning] tells the user to run to trust a
	// repository's settings file; empty means [DefaultTrustCommand],
	// "forgemem trust". A host with its own command names it here.
	TrustCommand string
}

// OSOptions returns [Options] for this process: its working directory,
// the home folder of os.UserHomeDir (empty when it cannot be found, for
// example with HOME unset) and os.Environ. It is the only function of this
// package that reads the process's environment. The caller adds the flags.
func OSOptions() (Options, error) {
	wd, err := os.Getwd()
	if err != nil {
		return Options{}, fmt.Errorf("settings: the working directory: %w", err)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = ""
	}
	return Options{WorkDir: wd, Home: home, Env: os.Environ()}, nil
}

// Load finds the memory folders and reads the settings from every source,
// later sources winning over earlier ones:
//
//  1. the defaults (see [Keys]);
//  2. the user's file, ~/.forge/config.yaml;
//  3. the repository's file, <repo>/.forge/config.yaml;
//  4. the file named by --config or FORGEMEM_CONFIG;
//  5. the environment: FORGEMEM_<KEY> for every key, OPENAI_API_KEY,
//     GEMINI_API_KEY, and OPENAI_BASE_URL (with the openai provider only,
//     below FORGEMEM_BASE_URL);
//  6. the flags.
//
// A missing user or repository file is skipped; an empty file, or a
// memory: section with no keys, sets nothing. Top-level keys other than
// memory belong to the host agent and are ignored, but for one named as a
// forgemem key (retrieval_top_k; not the common enabled, provider and
// base_url) and one edit away from memory (memroy, Memory), which are
// errors with a suggestion. An empty environment variable counts as unset. API keys are read from the
// environment only.
//
// The repository's file is someone else's input (see [Trust]): until the
// user trusts it (the [TrustStore] of [Paths].TrustFile), the values in it
// that need trust are ignored, each with a [Warning] in
// [Settings.Warnings]. Every file is read as a regular file only, never
// waiting on a FIFO or a device, and at most [MaxFileSize] bytes; the
// repository's is never read through a symbolic link.
//
// Load checks everything before it returns: on any problem it returns nil
// and [Errors], listing every problem of every source, each an *[Error]
// naming the file and line, variable or flag, the key, the value and what
// is accepted. Values are never clamped.
func Load(opts Options) (*Settings, error) {
	l := &loader{opts: opts, env: environ(opts.Env), read: map[string]bool{}}
	s := Default()
	s.Paths = l.paths()
	l.file(s, s.Paths.UserConfig, OriginUserFile, false)
	if s.Paths.RepoConfig != s.Paths.ExtraConfig {
		// Named by --config or FORGEMEM_CONFIG, the file is the user's
		// choice: it is read below, trusted.
		l.file(s, s.Paths.RepoConfig, OriginRepoFile, false)
	}
	l.file(s, s.Paths.ExtraConfig, OriginConfigFile, true)
	l.environment(s)
	l.flags(s)
	l.openAIBaseURL(s)
	if len(l.errs) > 0 {
		return nil, l.errs
	}
	return s, nil
}

// ResolvePaths finds the memory folders and settings files as [Load] does,
// without reading any settings: for a command, such as forgemem trust,
// that needs the files even when they do not load. A bad location flag or
// variable is an [Errors].
func ResolvePaths(opts Options) (Paths, error) {
	l := &loader{opts: opts, env: environ(opts.Env), read: map[string]bool{}}
	p := l.paths()
	if len(l.errs) > 0 {
		return Paths{}, l.errs
	}
	return p, nil
}

// loader collects the problems of one Load.
type loader struct {
	opts Options
	env  map[string]string
	read map[string]bool // files already read, by path
	errs Errors
}

// environ turns "NAME=value" lines into a map, the first of a name
// winning; lines without "=" are ignored.
func environ(lines []string) map[string]string {
	env := make(map[string]string, len(lines))
	for _, line := range lines {
		name, value, ok := strings.Cut(line, "=")
		if !ok || name == "" {
			continue
		}
		if _, seen := env[name]; !seen {
			env[name] = value
		}
	}
	return env
}

// paths resolves the folders and files of both scopes.
func (l *loader) paths() Paths {
	var p Paths
	home := l.opts.Home
	if home != "" {
		home = filepath.Clean(home)
	}
	if l.opts.WorkDir != "" {
		if abs, err := filepath.Abs(l.opts.WorkDir); err == nil {
			p.WorkDir = abs
		} else {
			p.WorkDir = filepath.Clean(l.opts.WorkDir)
		}
		// A repository at the home folder itself (a dotfiles repository)
		// would make both scopes one folder: its .forge is the user's.
		if root, err := FindRepoRoot(p.WorkDir); err == nil && root != home {
			p.RepoRoot = root
			p.RepoDir, p.RepoConfig = scopeFiles(root)
		} else if err == nil {
			p.homeRepo = root
		}
	}
	if home != "" {
		p.UserDir, p.UserConfig = scopeFiles(home)
		p.TrustFile = filepath.Join(home, ForgeDir, TrustFile)
	}
	if dir, src, ok := l.location(l.opts.RepoDir, "repo-dir", EnvRepoDir); ok {
		p.RepoDir, p.RepoDirSource = dir, src
	}
	if dir, src, ok := l.location(l.opts.UserDir, "user-dir", EnvUserDir); ok {
		p.UserDir, p.UserDirSource = dir, src
	}
	if p.RepoDir != "" && p.RepoDir == p.UserDir {
		l.sameFolders()
	}
	if file, _, ok := l.location(l.opts.ConfigFile, "config", EnvConfig); ok {
		p.ExtraConfig = file
	}
	return p
}

// sameFolders records that the two scopes' memory folders are one,
// against the location that made them so: --user-dir, --repo-dir, or
// their variables, in that order.
func (l *loader) sameFolders() {
	for _, c := range []struct {
		src          Source
		value, other string
	}{
		{Source{Origin: OriginFlag, Name: "user-dir"}, l.opts.UserDir, "the repository's"},
		{Source{Origin: OriginFlag, Name: "repo-dir"}, l.opts.RepoDir, "the user's"},
		{Source{Origin: OriginEnv, Name: EnvUserDir}, l.env[EnvUserDir], "the repository's"},
		{Source{Origin: OriginEnv, Name: EnvRepoDir}, l.env[EnvRepoDir], "the user's"},
	} {
		if c.value != "" {
			l.errs = append(l.errs, &Error{Kind: ErrInvalidValue, Source: c.src, Value: c.value,
				Want: "a folder of its own: it is also " + c.other + " memory folder, and each scope needs one"})
			return
		}
	}
}

// location returns the path given by a location flag or, failing that,
// its variable, with ~ expanded and made absolute against the working
// directory; ok is false when neither is set or the path is bad (which is
// recorded).
func (l *loader) location(flagValue, flagName, envName string) (string, Source, bool) {
	src := Source{Origin: OriginFlag, Name: flagName}
	value := flagValue
	if value == "" {
		src = Source{Origin: OriginEnv, Name: envName}
		value = l.env[envName]
	}
	if value == "" {
		return "", Source{}, false
	}
	path, err := expandPath(value, l.opts.Home, l.opts.WorkDir)
	if err != nil {
		l.errs = append(l.errs, &Error{Kind: ErrInvalidValue, Source: src, Value: value, Want: "a path (" + err.Error() + ")"})
		return "", Source{}, false
	}
	return path, src, true
}

// file reads one settings file into s. A missing file is skipped unless
// mustExist; a file already read (the same path in two roles) is read
// once. The repository's file goes through a repoGate.
func (l *loader) file(s *Settings, path string, origin Origin, mustExist bool) {
	if path == "" || l.read[path] {
		return
	}
	l.read[path] = true
	src := Source{Origin: origin, Name: path}
	data, err := readFile(path, origin != OriginRepoFile)
	if err != nil {
		if !mustExist && errors.Is(err, fs.ErrNotExist) {
			return
		}
		l.errs = append(l.errs, &Error{Kind: ErrUnreadableFile, Source: src, Err: explainRead(err, origin)})
		return
	}
	var gate *repoGate
	if origin == OriginRepoFile {
		gate = l.gate(s, path, data)
	}
	l.errs = append(l.errs, parseFile(s, data, src, gate)...)
	if gate != nil && gate.err != nil {
		e := &Error{Kind: ErrUnreadableFile, Source: Source{Origin: OriginUserFile, Name: s.Paths.TrustFile}, Err: gate.err}
		var te *trustRecordsError
		if errors.As(gate.err, &te) {
			e.Err = fmt.Errorf("%w: %w", ErrTrustRecords, te.err)
		}
		l.errs = append(l.errs, e)
	}
}

// gate is the repoGate of the repository's file path holding data.
func (l *loader) gate(s *Settings, path string, data []byte) *repoGate {
	command := l.opts.TrustCommand
	if command == "" {
		command = DefaultTrustCommand
	}
	store := TrustStore{Path: s.Paths.TrustFile}
	return &repoGate{command: command, state: func() (TrustState, error) {
		canonical, err := canonicalPath(path)
		if err != nil {
			return Untrusted, err
		}
		return store.state(canonical, digest(data))
	}}
}

// maxDetailed is how many problems of one file get the work of a
// suggestion; past it, a file of thousands of unknown keys is reported in
// linear time (and Errors lists only the first maxListed anyway).
const maxDetailed = maxListed

// fileParser applies one settings file to a Settings.
type fileParser struct {
	s    *Settings
	src  Source
	gate *repoGate // nil: the file is trusted
	errs Errors
	// memory is the memory: section, and memoryLine the line of its key.
	memory     *yaml.Node
	memoryLine int
}

// parseFile applies the memory: section of a settings file to s and
// returns its problems. src names the file; lines are filled in. With a
// gate, the values that need trust are held back unless it allows them.
func parseFile(s *Settings, data []byte, src Source, gate *repoGate) Errors {
	p := &fileParser{s: s, src: src, gate: gate}
	if !p.documents(data) || p.memory == nil {
		return p.errs
	}
	p.section(resolveAlias(p.memory))
	return p.errs
}

// at is the file's source at line.
func (p *fileParser) at(line int) Source {
	src := p.src
	src.Line = line
	return src
}

func (p *fileParser) add(e *Error) { p.errs = append(p.errs, e) }

// detailed reports whether a problem found now still gets a suggestion.
func (p *fileParser) detailed() bool { return len(p.errs) < maxDetailed }

// documents reads the file's YAML documents and their top-level keys; it
// returns false when the file cannot be read further.
func (p *fileParser) documents(data []byte) bool {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return true
		}
		if err != nil {
			p.add(&Error{Kind: ErrMalformedFile, Source: p.at(0), Err: err})
			return false
		}
		if len(doc.Content) == 0 {
			continue
		}
		root := resolveAlias(doc.Content[0])
		if isNull(root) {
			continue
		}
		if root.Kind != yaml.MappingNode {
			p.add(&Error{Kind: ErrMalformedFile, Source: p.at(root.Line),
				Err: fmt.Errorf("the file is %s; want a mapping with a %s: section", describeNode(root), Section)})
			return false
		}
		for i := 0; i+1 < len(root.Content); i += 2 {
			p.topLevel(root.Content[i], root.Content[i+1])
		}
	}
}

// topLevel handles one top-level key: the memory: section, a flat
// memory.<key>, a key of forgemem's or a misspelt section outside it, or
// the host agent's.
func (p *fileParser) topLevel(k, v *yaml.Node) {
	if k.Kind != yaml.ScalarNode {
		return // the host agent's business
	}
	switch {
	case k.Value == Section:
		if p.memory != nil {
			p.add(&Error{Kind: ErrMalformedFile, Source: p.at(k.Line), Key: Section,
				Err: fmt.Errorf("%s: is set twice (also on line %d)", Section, p.memoryLine)})
			return
		}
		p.memory, p.memoryLine = v, k.Line
	case strings.HasPrefix(k.Value, Section+"."):
		name := strings.TrimPrefix(k.Value, Section+".")
		// The flat form: say how to write it nested.
		e := &Error{Kind: ErrUnknownKey, Source: p.at(k.Line), Key: k.Value}
		if lookupShort(name) == nil && p.detailed() {
			name = suggest(name, names(func(k *key) string { return k.name }))
		} else if lookupShort(name) == nil {
			name = ""
		}
		if name != "" {
			e.Suggestion = fmt.Sprintf("%s: {%s: …}", Section, name)
		}
		p.add(e)
	default:
		if sug := strayKey(k.Value); sug != "" {
			p.add(&Error{Kind: ErrUnknownKey, Source: p.at(k.Line), Key: k.Value, Suggestion: sug})
		}
	}
}

// hostNames are forgemem key names common enough that a host agent may
// use them for its own top-level settings; outside memory: they are left
// to the host.
var hostNames = []string{"enabled", "provider", "base_url"}

// strayKey returns, for a top-level key other than memory, what was meant
// when it is forgemem's by mistake, or "" when it is the host agent's: a
// forgemem key name written outside memory: (retrieval_top_k, also as
// retrieval-top-k or FORGEMEM_RETRIEVAL_TOP_K) is
// memory.<key>, unless it is one of hostNames; a name one edit from memory
// (memroy, Memory, memry) is memory:.
func strayKey(name string) string {
	if k := lookup(name); k != nil && !slices.Contains(hostNames, k.name) {
		return k.fullName()
	}
	n := normalize(name)
	if len(n) >= len(Section)-1 && len(n) <= len(Section)+1 && editDistance(n, Section) <= 1 {
		return Section + ":"
	}
	return ""
}

// section applies the keys of the memory: section.
func (p *fileParser) section(memory *yaml.Node) {
	if isNull(memory) {
		return
	}
	if memory.Kind != yaml.MappingNode {
		p.add(&Error{Kind: ErrInvalidValue, Source: p.at(memory.Line), Key: Section, Value: nodeText(memory),
			Want: "a mapping of settings, such as " + Section + ": {cadence_turns: 3}"})
		return
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(memory.Content); i += 2 {
		k, v := memory.Content[i], resolveAlias(memory.Content[i+1])
		name := k.Value
		if k.Kind != yaml.ScalarNode {
			name = nodeText(k)
		}
		full := Section + "." + name
		if line, dup := seen[name]; dup {
			p.add(&Error{Kind: ErrMalformedFile, Source: p.at(k.Line), Key: full,
				Err: fmt.Errorf("%s is set twice (also on line %d)", full, line)})
			continue
		}
		seen[name] = k.Line
		p.entry(name, k.Line, v)
	}
}

// entry applies one key of the memory: section, or records why not.
func (p *fileParser) entry(name string, line int, v *yaml.Node) {
	full := Section + "." + name
	kd := lookupShort(name)
	switch {
	case kd == nil && isSecretName(name):
		p.add(&Error{Kind: ErrSecretInFile, Source: p.at(line), Key: full, Want: apiKeyVariables(name)})
	case kd == nil:
		e := &Error{Kind: ErrUnknownKey, Source: p.at(line), Key: full}
		if p.detailed() {
			if sug := suggest(name, names(func(k *key) string { return k.name })); sug != "" {
				e.Suggestion = Section + "." + sug
			} else {
				e.Want = knownKeys()
			}
		}
		p.add(e)
	default:
		p.set(kd, v)
	}
}

// set applies one known key from its YAML value, unless the gate holds it
// back.
func (p *fileParser) set(k *key, v *yaml.Node) {
	src := p.at(v.Line)
	text, e := scalarText(k, v, src)
	if e != nil {
		p.add(e)
		return
	}
	if p.gate != nil && p.gate.holds(p.s, k, text, src) {
		return
	}
	if e := apply(p.s, k, text, src); e != nil {
		p.add(e)
	}
}

// knownKeys lists every key's full name, for an unknown key's error.
func knownKeys() string {
	return strings.Join(names(func(k *key) string { return k.fullName() }), ", ")
}

// scalarText is the text of a key's YAML value, or the problem with its
// type.
func scalarText(k *key, v *yaml.Node, src Source) (string, *Error) {
	switch {
	case v.Kind != yaml.ScalarNode:
		return "", valueErr(k, src, nodeText(v), errWrongType)
	case isNull(v) && k.emptyOK:
		return "", nil
	case isNull(v) || !slices.Contains(k.tags, v.Tag):
		e := valueErr(k, src, v.Value, errWrongType)
		if v.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
			e.Want += ", not a quoted string"
		}
		return "", e
	}
	return v.Value, nil
}

// apply sets one key from text and records its source, or returns the
// problem.
func apply(s *Settings, k *key, text string, src Source) *Error {
	if err := k.set(s, text); err != nil {
		return valueErr(k, src, text, err)
	}
	s.sources[k.fullName()] = src
	return nil
}

// valueErr describes a value that set rejected with err.
func valueErr(k *key, src Source, text string, err error) *Error {
	e := &Error{Kind: ErrInvalidValue, Source: src, Key: k.fullName(), Value: text, Want: k.want}
	if errors.Is(err, errOutOfRange) {
		e.Want = k.rng
	}
	var ve *valueError
	if errors.As(err, &ve) {
		e.Suggestion = ve.suggestion
	}
	e.Value = text
	if k.typ == "URL" {
		e.Value = maskURL(text)
	}
	e.Value, _ = redact.Text(e.Value)
	return e
}

// environment applies the FORGEMEM_* variables and reads the API keys.
func (l *loader) environment(s *Settings) {
	var vars []string
	for name := range l.env {
		if strings.HasPrefix(name, EnvPrefix) {
			vars = append(vars, name)
		}
	}
	sort.Strings(vars)
	known := append(names((*key).env), EnvConfig, EnvRepoDir, EnvUserDir)
	for _, name := range vars {
		switch name {
		case EnvConfig, EnvRepoDir, EnvUserDir:
			continue // read by paths
		}
		src := Source{Origin: OriginEnv, Name: name}
		k := lookupBy((*key).env, name)
		if k == nil {
			e := &Error{Kind: ErrUnknownKey, Source: src, Key: name, Want: strings.Join(known, ", ")}
			if isSecretName(name) {
				e.Suggestion = apiKeyVariables(name)
			} else if sug := suggest(strings.TrimPrefix(name, EnvPrefix), trimAll(known, EnvPrefix)); sug != "" {
				e.Suggestion = EnvPrefix + sug
			}
			l.errs = append(l.errs, e)
			continue
		}
		if value := l.env[name]; value != "" {
			if e := apply(s, k, value, src); e != nil {
				l.errs = append(l.errs, e)
			}
		}
	}
	if v := l.env[EnvOpenAIAPIKey]; v != "" {
		s.openAIKey = v
		s.sources[EnvOpenAIAPIKey] = Source{Origin: OriginEnv, Name: EnvOpenAIAPIKey}
	}
	if v := l.env[EnvGeminiAPIKey]; v != "" {
		s.geminiKey = v
		s.sources[EnvGeminiAPIKey] = Source{Origin: OriginEnv, Name: EnvGeminiAPIKey}
	}
}

// flags applies the flags the user set.
func (l *loader) flags(s *Settings) {
	given := make([]string, 0, len(l.opts.Flags))
	for name := range l.opts.Flags {
		given = append(given, name)
	}
	sort.Strings(given)
	for _, raw := range given {
		name := strings.TrimPrefix(raw, "--")
		src := Source{Origin: OriginFlag, Name: name}
		k := lookupBy((*key).flag, name)
		if k == nil {
			flags := names((*key).flag)
			e := &Error{Kind: ErrUnknownKey, Source: src, Key: name, Want: "--" + strings.Join(flags, ", --")}
			if sug := suggest(name, flags); sug != "" {
				e.Suggestion = "--" + sug
			}
			l.errs = append(l.errs, e)
			continue
		}
		if e := apply(s, k, l.opts.Flags[raw], src); e != nil {
			l.errs = append(l.errs, e)
		}
	}
}

// openAIBaseURL applies OPENAI_BASE_URL when the provider is openai and
// neither FORGEMEM_BASE_URL nor --base-url set the base URL.
func (l *loader) openAIBaseURL(s *Settings) {
	v := l.env[EnvOpenAIBaseURL]
	k := lookupShort("base_url")
	if v == "" || s.Provider != ProviderOpenAI || s.sources[k.fullName()].Origin >= OriginEnv {
		return
	}
	if e := apply(s, k, v, Source{Origin: OriginEnv, Name: EnvOpenAIBaseURL}); e != nil {
		l.errs = append(l.errs, e)
	}
}

// lookupShort finds a key by its short name, as written in a file.
func lookupShort(name string) *key { return lookupBy(func(k *key) string { return k.name }, name) }

// lookupBy finds the key whose name, as given by by, is name.
func lookupBy(by func(*key) string, name string) *key {
	for i := range table {
		if by(&table[i]) == name {
			return &table[i]
		}
	}
	return nil
}

// names lists every key's name as given by by.
func names(by func(*key) string) []string {
	out := make([]string, len(table))
	for i := range table {
		out[i] = by(&table[i])
	}
	return out
}

func trimAll(list []string, prefix string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = strings.TrimPrefix(s, prefix)
	}
	return out
}

// resolveAlias follows YAML aliases (*name) to the node they stand for.
func resolveAlias(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n == nil || n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// describeNode names the kind of a YAML value for messages.
func describeNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	return "the value " + showValue(n.Value)
}

// nodeText writes a value for an error: scalars as written, mappings as
// {…} and lists as […].
func nodeText(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "{…}"
	case yaml.SequenceNode:
		return "[…]"
	case yaml.AliasNode:
		return "*" + n.Value
	}
	return n.Value
}
