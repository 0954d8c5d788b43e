package claudecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/forgemem/forgemem/memcore/atomicfile"
)

// HookArgs are the arguments after the forgemem binary in the command of
// forgemem's hooks.
const HookArgs = "hook claude-code"

// ErrSettingsFile: an existing settings file cannot be merged with (not
// JSON, or hooks that are not shaped as Claude Code reads them, or not a
// regular file); it is left as it was.
var ErrSettingsFile = errors.New("the Claude Code settings file cannot be merged with")

// The settings files of Claude Code that [Install] writes: in a
// repository, SettingsFile is shared with the team (committed) and
// LocalSettingsFile is this machine's (Claude Code keeps it out of git);
// both are in the repository's .claude folder, and Claude Code runs the
// hooks of both. The user's settings are ~/.claude/SettingsFile.
const (
	SettingsFile      = "settings.json"
	LocalSettingsFile = "settings.local.json"
)

// MaxSettingsBytes bounds a settings file [Install] reads: a larger one is
// not a settings file a person wrote, and is refused (ErrSettingsFile).
const MaxSettingsBytes = 4 << 20

// InstallResult says what [Install] did.
type InstallResult struct {
	// Path is the settings file written (symbolic links resolved).
	Path string
	// Added are the events whose hook was added; Present those that had it
	// already, running the command given; Updated those whose forgemem
	// hook ran another command (another binary's path or name), now
	// changed to the one given. Nothing is written when Added and Updated
	// are empty and no duplicate was removed.
	Added, Present, Updated []string
	// Duplicates counts the forgemem hooks removed because their event had
	// one already (left by earlier installs).
	Duplicates int
	// Elsewhere are the events whose forgemem hook is in one of the other
	// settings files given to Install: nothing is added for them.
	Elsewhere []FoundHook
	// Backup is the copy of the previous file, "" when there was none or
	// nothing was written.
	Backup string
	// Created is true when the file did not exist.
	Created bool
}

// FoundHook is a forgemem hook found in a settings file.
type FoundHook struct {
	// Event is the hook's event; Path the settings file; Command the
	// command it runs.
	Event, Path, Command string
}

// changed reports whether Install has something to write.
func (r *InstallResult) changed() bool {
	return len(r.Added) > 0 || len(r.Updated) > 0 || r.Duplicates > 0
}

// Install makes the Claude Code settings file at path run forgemem's hook
// — a command hook running command, with HookTimeout — once for each of
// [Events], keeping everything else in it: other keys and their order,
// other hooks of the same events. forgemem's hooks are recognised by what
// they run ([IsHookCommand]), whatever the binary's path or name: an
// event that has one keeps it, with its command set to command, and loses
// any other (duplicates of earlier installs), so installing twice, or
// with binaries of different names, leaves one hook per event. An event
// whose forgemem hook is in one of the files also — the other settings
// files Claude Code reads with this one — is left alone, so that Claude
// Code does not run two.
//
// Before the file is changed, the previous one is copied to path+".bak";
// the new one is written atomically (memcore/atomicfile.Replace) with the
// previous one's permissions. A settings file that is a symbolic link (a
// dotfiles repository) is written where it points. A file that is not a
// regular file, is larger than [MaxSettingsBytes], is not a JSON object,
// or whose hooks are not shaped as Claude Code reads them, is an error
// wrapping ErrSettingsFile, and nothing is written.
func Install(path, command string, also ...string) (*InstallResult, error) {
	f, err := openSettings(path)
	if err != nil {
		return nil, err
	}
	res := &InstallResult{Path: f.path, Created: f.missing}
	elsewhere := foundElsewhere(also)
	for _, event := range Events() {
		if err := installEvent(res, f.hooks, event, command, elsewhere[event]); err != nil {
			return nil, fmt.Errorf("%w: %s: hooks.%s: %v", ErrSettingsFile, f.path, event, err)
		}
	}
	if !res.changed() {
		return res, nil
	}
	f.root.set("hooks", f.hooks.marshal())
	res.Backup, err = f.write()
	return res, err
}

// settingsFile is a Claude Code settings file as read to be changed: its
// path (symbolic links resolved), its bytes and permissions, its object
// and the object of its hooks (empty when it has none, or the file does
// not exist: missing).
type settingsFile struct {
	path        string
	old         []byte
	perm        fs.FileMode
	missing     bool
	root, hooks *object
}

// openSettings reads the settings file at path to change it; a file that
// is not a settings file is an error wrapping ErrSettingsFile.
func openSettings(path string) (*settingsFile, error) {
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		path = resolved
	}
	f := &settingsFile{path: path}
	var err error
	f.old, f.perm, err = readSettings(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f.missing, f.perm = true, 0o644
	case err != nil:
		return nil, err
	}
	if f.root, err = parseObject(f.old); err != nil {
		return nil, fmt.Errorf("%w: %s: %v; fix it or move it away, then install again", ErrSettingsFile, path, err)
	}
	f.hooks = newObject()
	if raw, ok := f.root.get("hooks"); ok {
		if f.hooks, err = parseObject(raw); err != nil {
			return nil, fmt.Errorf("%w: %s: \"hooks\" is not an object: %v", ErrSettingsFile, path, err)
		}
	}
	return f, nil
}

// write writes the file's object back (see writeSettings).
func (f *settingsFile) write() (backup string, err error) {
	return writeSettings(f.path, f.missing, f.root, f.old, f.perm)
}

// readSettings reads the settings file at path (symbolic links resolved)
// and its permissions, if it is a regular file no larger than
// MaxSettingsBytes; a missing one is an error wrapping fs.ErrNotExist.
func readSettings(path string) ([]byte, fs.FileMode, error) {
	f, err := atomicfile.Open(path, os.O_RDONLY, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, 0, err
	case errors.Is(err, atomicfile.ErrSymlink), errors.Is(err, atomicfile.ErrNotRegular):
		return nil, 0, fmt.Errorf("%w: %v", ErrSettingsFile, err)
	case err != nil:
		return nil, 0, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxSettingsBytes+1))
	if err != nil {
		return nil, 0, err
	}
	if len(data) > MaxSettingsBytes {
		return nil, 0, fmt.Errorf("%w: %s is larger than %d bytes", ErrSettingsFile, path, MaxSettingsBytes)
	}
	return data, info.Mode().Perm(), nil
}

// writeSettings writes root, indented, to path with perm, after copying
// old, the previous file, to path+".bak" unless the file is created; it
// returns the backup's path ("" for none).
func writeSettings(path string, created bool, root *object, old []byte, perm fs.FileMode) (backup string, err error) {
	var out bytes.Buffer
	if err := json.Indent(&out, root.marshal(), "", "  "); err != nil {
		return "", err
	}
	out.WriteByte('\n')
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	if !created {
		backup = path + ".bak"
		if err := atomicfile.Replace(backup, old, perm); err != nil {
			return "", fmt.Errorf("backing up %s: %w", path, err)
		}
	}
	return backup, atomicfile.Replace(path, out.Bytes(), perm)
}

// UninstallResult says what [Uninstall] did.
type UninstallResult struct {
	// Path is the settings file (symbolic links resolved).
	Path string
	// Removed are the events whose forgemem hooks were removed.
	Removed []string
	// Backup is the copy of the previous file, "" when nothing was
	// written.
	Backup string
}

// Uninstall removes every forgemem hook ([IsHookCommand]) from the Claude
// Code settings file at path, keeping everything else as [Install] does:
// a group left with no hook goes, and so does an event left with no group
// (and "hooks" left with no event). A file that does not exist, or holds no forgemem hook, is left
// as it is. The previous file is copied to path+".bak" and the new one
// written atomically; a file [Install] would refuse is an error wrapping
// ErrSettingsFile, and nothing is written.
func Uninstall(path string) (*UninstallResult, error) {
	f, err := openSettings(path)
	if err != nil {
		return nil, err
	}
	res := &UninstallResult{Path: f.path}
	for _, event := range Events() {
		raw, ok := f.hooks.get(event)
		if !ok {
			continue
		}
		var groups []json.RawMessage
		if err := json.Unmarshal(raw, &groups); err != nil {
			return nil, fmt.Errorf("%w: %s: hooks.%s: not a list of hook groups: %v", ErrSettingsFile, f.path, event, err)
		}
		removed := false
		groups, err := eachHook(groups, func(json.RawMessage, string) (json.RawMessage, bool, error) {
			removed = true
			return nil, true, nil
		})
		if err != nil {
			return nil, fmt.Errorf("%w: %s: hooks.%s: %v", ErrSettingsFile, f.path, event, err)
		}
		if !removed {
			continue
		}
		res.Removed = append(res.Removed, event)
		if len(groups) == 0 {
			f.hooks.del(event)
		} else {
			f.hooks.set(event, mustMarshal(groups))
		}
	}
	if len(res.Removed) == 0 {
		return res, nil
	}
	if len(f.hooks.keys) == 0 {
		f.root.del("hooks")
	} else {
		f.root.set("hooks", f.hooks.marshal())
	}
	res.Backup, err = f.write()
	return res, err
}

// foundElsewhere returns, by event, the first forgemem hook of the
// settings files paths. A file that is missing or cannot be read is
// passed over: it is not written.
func foundElsewhere(paths []string) map[string]*FoundHook {
	found := map[string]*FoundHook{}
	for _, p := range paths {
		if resolved, err := filepath.EvalSymlinks(p); err == nil {
			p = resolved
		}
		data, _, err := readSettings(p)
		if err != nil {
			continue
		}
		var s struct {
			Hooks map[string][]hookGroup `json:"hooks"`
		}
		if json.Unmarshal(data, &s) != nil {
			continue
		}
		for _, event := range Events() {
			for _, g := range s.Hooks[event] {
				for _, h := range g.Hooks {
					if found[event] == nil && IsHookCommand(h.Command) {
						found[event] = &FoundHook{Event: event, Path: p, Command: h.Command}
					}
				}
			}
		}
	}
	return found
}

// installEvent makes event's groups in hooks hold one forgemem hook
// running command, or adds none when other, the forgemem hook of another
// settings file, is not nil; it records what it did in res.
func installEvent(res *InstallResult, hooks *object, event, command string, other *FoundHook) error {
	var groups []json.RawMessage
	if raw, ok := hooks.get(event); ok {
		if err := json.Unmarshal(raw, &groups); err != nil {
			return fmt.Errorf("not a list of hook groups: %v", err)
		}
	}
	groups, had, err := keepOneHook(res, groups, event, command)
	if err != nil {
		return err
	}
	if !had {
		if other != nil {
			res.Elsewhere = append(res.Elsewhere, *other)
			return nil
		}
		group, err := json.Marshal(hookGroup{Hooks: []commandHook{{Type: "command", Command: command, Timeout: HookTimeout}}})
		if err != nil {
			return err
		}
		groups = append(groups, group)
		res.Added = append(res.Added, event)
	}
	raw, err := json.Marshal(groups)
	if err != nil {
		return err
	}
	hooks.set(event, raw)
	return nil
}

// keepOneHook returns groups with their first forgemem hook running
// command and every other forgemem hook removed (and a group left with
// no hook), and whether there was one. Groups and hooks keep their other
// keys and their order.
func keepOneHook(res *InstallResult, groups []json.RawMessage, event, command string) ([]json.RawMessage, bool, error) {
	had := false
	out, err := eachHook(groups, func(h json.RawMessage, cmd string) (json.RawMessage, bool, error) {
		if had {
			res.Duplicates++
			return nil, true, nil
		}
		had = true
		if cmd == command {
			res.Present = append(res.Present, event)
			return h, false, nil
		}
		h, err := setCommand(h, command)
		if err != nil {
			return nil, false, err
		}
		res.Updated = append(res.Updated, event)
		return h, true, nil
	})
	return out, had, err
}

// eachHook returns groups with each forgemem hook h, running cmd, replaced
// by what f returns: the hook to keep (nil drops it) and whether that
// changes it. A group f changes nothing in is kept byte for byte, a
// changed one keeps its other keys and hooks in their order, and a group
// left with no hook goes.
func eachHook(groups []json.RawMessage, f func(h json.RawMessage, cmd string) (json.RawMessage, bool, error)) ([]json.RawMessage, error) {
	out := groups[:0:0]
	for _, g := range groups {
		group, err := parseObject(g)
		if err != nil {
			return nil, fmt.Errorf("a hook group is not an object: %v", err)
		}
		var list []json.RawMessage
		if raw, ok := group.get("hooks"); ok {
			if err := json.Unmarshal(raw, &list); err != nil {
				return nil, fmt.Errorf("a group's hooks are not a list: %v", err)
			}
		}
		kept, touched := list[:0:0], false
		for _, h := range list {
			var ch commandHook
			if json.Unmarshal(h, &ch) != nil || !IsHookCommand(ch.Command) {
				kept = append(kept, h)
				continue
			}
			h, changed, err := f(h, ch.Command)
			if err != nil {
				return nil, err
			}
			touched = touched || changed
			if h != nil {
				kept = append(kept, h)
			}
		}
		switch {
		case !touched:
			out = append(out, g) // byte for byte as it was
		case len(kept) > 0:
			group.set("hooks", mustMarshal(kept))
			out = append(out, group.marshal())
		} // a group left with no hook goes
	}
	return out, nil
}

// setCommand returns the hook h running command, its other keys kept.
func setCommand(h json.RawMessage, command string) (json.RawMessage, error) {
	obj, err := parseObject(h)
	if err != nil {
		return nil, err
	}
	obj.set("command", mustMarshal(command))
	return obj.marshal(), nil
}

// mustMarshal marshals what always marshals: strings and raw JSON.
func mustMarshal(v any) json.RawMessage {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return data
}

// hookGroup and commandHook are the shape of a hook in Claude Code's
// settings: {"hooks": [{"type": "command", "command": …, "timeout": …}]}.
type (
	hookGroup struct {
		Hooks []commandHook `json:"hooks"`
	}
	commandHook struct {
		Type    string `json:"type"`
		Command string `json:"command"`
		Timeout int    `json:"timeout"`
	}
)

// IsHookCommand reports whether a hook's command runs forgemem's Claude
// Code hook: one program, named or given by its path (quoted or not),
// maybe after variable assignments, with exactly the arguments HookArgs.
// The program's name does not matter — a binary built with go build -o
// under another name runs the same hook — but anything else on the line
// (another argument, a second command) makes it someone else's hook.
func IsHookCommand(command string) bool {
	_, ok := HookCommandBinary(command)
	return ok
}

// HookCommandBinary returns the program a forgemem hook command runs (its
// name or path, unquoted), and false when command is not one (see
// [IsHookCommand]).
func HookCommandBinary(command string) (string, bool) {
	rest, ok := strings.CutSuffix(strings.TrimSpace(command), " "+HookArgs)
	if !ok {
		return "", false
	}
	words, ok := shellWords(strings.TrimSpace(rest))
	if !ok || len(words) == 0 {
		return "", false
	}
	for _, w := range words[:len(words)-1] {
		if !isAssignment(w) {
			return "", false
		}
	}
	bin := words[len(words)-1]
	if bin == "" || isAssignment(bin) {
		return "", false
	}
	return bin, true
}

// shellWords splits s into words as a shell would for the simple commands
// hooks are: separated by blanks, single or double quotes grouping, and
// within double quotes a backslash escaping \\, ", $ and `. A backslash
// elsewhere is kept (a Windows path). ok is false when s holds anything
// that makes more than one command or needs expanding (; & | < > ( ) `
// and $( ) or an unbalanced quote.
func shellWords(s string) (words []string, ok bool) {
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'' || c == '"':
			end, ok := quoted(s, i, &w)
			if !ok {
				return nil, false
			}
			i, inWord = end, true
		case c == ' ' || c == '\t':
			if inWord {
				words, inWord = append(words, w.String()), false
				w.Reset()
			}
		case strings.IndexByte(";&|<>()`\n", c) >= 0, c == '$' && i+1 < len(s) && s[i+1] == '(':
			return nil, false
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, true
}

// quoted writes to w the text of the quoted string starting at s[i] (a
// quote) and returns the offset of its closing quote; ok is false when it
// is not closed or holds a command substitution.
func quoted(s string, i int, w *strings.Builder) (end int, ok bool) {
	q := s[i]
	for i++; i < len(s); i++ {
		c := s[i]
		switch {
		case c == q:
			return i, true
		case q == '"' && (c == '`' || c == '$' && i+1 < len(s) && s[i+1] == '('):
			return 0, false
		case q == '"' && c == '\\' && i+1 < len(s) && strings.IndexByte(`\"$`+"`", s[i+1]) >= 0:
			i++
			w.WriteByte(s[i])
		default:
			w.WriteByte(c)
		}
	}
	return 0, false
}

// isAssignment reports whether a shell word is a variable assignment
// (NAME=value).
func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	if !ok || name == "" {
		return false
	}
	for i, c := range name {
		if c != '_' && (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// object is a JSON object that keeps its keys' order, so that a merged
// settings file differs from the user's only by what was added.
type object struct {
	keys []string
	vals map[string]json.RawMessage
}

func newObject() *object { return &object{vals: map[string]json.RawMessage{}} }

// parseObject reads a JSON object; empty input is an empty object.
func parseObject(data []byte) (*object, error) {
	o := newObject()
	if len(bytes.TrimSpace(data)) == 0 {
		return o, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, errors.New("not a JSON object")
		}
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, err
		}
		o.set(key, val)
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("more than one JSON value")
	}
	return o, nil
}

func (o *object) get(key string) (json.RawMessage, bool) {
	v, ok := o.vals[key]
	return v, ok
}

// set sets key, keeping its place if it exists, else adding it last.
func (o *object) set(key string, val json.RawMessage) {
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = val
}

// del removes key, if it is there.
func (o *object) del(key string) {
	if _, ok := o.vals[key]; ok {
		delete(o.vals, key)
		o.keys = slices.DeleteFunc(o.keys, func(k string) bool { return k == key })
	}
}

// marshal writes the object compactly, its keys in order.
func (o *object) marshal() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(k)
		b.Write(key)
		b.WriteByte(':')
		b.Write(o.vals[k])
	}
	b.WriteByte('}')
	return b.Bytes()
}
