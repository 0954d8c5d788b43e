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
	"strings"

	"github.com/forgemem/forgemem/memcore/atomicfile"
)

// HookArgs are the arguments after the forgemem binary in the command of
// forgemem's hooks.
const HookArgs = "hook claude-code"

// ErrSettingsFile: an existing settings file cannot be merged with (not
// JSON, or hooks that are not shaped as Claude Code reads them); it is
// left as it was.
var ErrSettingsFile = errors.New("the Claude Code settings file cannot be merged with")

// InstallResult says what [Install] did.
type InstallResult struct {
	// Path is the settings file written (symbolic links resolved).
	Path string
	// Added are the events whose hook was added; Present those that had it
	// already. Nothing is written when Added is empty.
	Added, Present []string
	// Backup is the copy of the previous file, "" when there was none or
	// nothing was written.
	Backup string
	// Created is true when the file did not exist.
	Created bool
}

// Install adds forgemem's hook — a command hook running command, with
// HookTimeout — for each of [Events] to the Claude Code settings file at
// path, keeping everything else in it: other keys and their order, other
// hooks of the same events. An event that already runs a forgemem hook
// command (whatever the binary's path) is left alone, so installing twice
// changes nothing. Before the file is changed, the previous one is copied
// to path+".bak"; the new one is written atomically
// (memcore/atomicfile.Replace) with the previous one's permissions. A
// settings file that is a symbolic link (a dotfiles repository) is
// written where it points. A file that is not a JSON object, or whose
// hooks are not shaped as Claude Code reads them, is an error wrapping
// ErrSettingsFile, and nothing is written.
func Install(path, command string) (*InstallResult, error) {
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		path = resolved
	}
	res := &InstallResult{Path: path}
	old, err := os.ReadFile(path)
	perm := fs.FileMode(0o644)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		res.Created = true
	case err != nil:
		return nil, err
	default:
		if info, err := os.Stat(path); err == nil {
			perm = info.Mode().Perm()
		}
	}
	root, err := parseObject(old)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v; fix it or move it away, then install again", ErrSettingsFile, path, err)
	}
	hooks := newObject()
	if raw, ok := root.get("hooks"); ok {
		if hooks, err = parseObject(raw); err != nil {
			return nil, fmt.Errorf("%w: %s: \"hooks\" is not an object: %v", ErrSettingsFile, path, err)
		}
	}
	for _, event := range Events() {
		var groups []json.RawMessage
		if raw, ok := hooks.get(event); ok {
			if err := json.Unmarshal(raw, &groups); err != nil {
				return nil, fmt.Errorf("%w: %s: hooks.%s is not a list of hook groups: %v", ErrSettingsFile, path, event, err)
			}
		}
		if hasForgememHook(groups) {
			res.Present = append(res.Present, event)
			continue
		}
		group, err := json.Marshal(hookGroup{Hooks: []commandHook{{Type: "command", Command: command, Timeout: HookTimeout}}})
		if err != nil {
			return nil, err
		}
		groups = append(groups, group)
		raw, err := json.Marshal(groups)
		if err != nil {
			return nil, err
		}
		hooks.set(event, raw)
		res.Added = append(res.Added, event)
	}
	if len(res.Added) == 0 {
		return res, nil
	}
	root.set("hooks", hooks.marshal())
	var out bytes.Buffer
	if err := json.Indent(&out, root.marshal(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	if !res.Created {
		res.Backup = path + ".bak"
		if err := atomicfile.Replace(res.Backup, old, perm); err != nil {
			return nil, fmt.Errorf("backing up %s: %w", path, err)
		}
	}
	if err := atomicfile.Replace(path, out.Bytes(), perm); err != nil {
		return nil, err
	}
	return res, nil
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

// hasForgememHook reports whether a hook of groups runs forgemem's hook
// command, whatever the binary's path.
func hasForgememHook(groups []json.RawMessage) bool {
	for _, g := range groups {
		var group struct {
			Hooks []struct {
				Type    string `json:"type"`
				Command string `json:"command"`
			} `json:"hooks"`
		}
		if json.Unmarshal(g, &group) != nil {
			continue
		}
		for _, h := range group.Hooks {
			if IsHookCommand(h.Command) {
				return true
			}
		}
	}
	return false
}

// IsHookCommand reports whether a hook's command runs forgemem's Claude
// Code hook: a forgemem binary, by name or path (quoted or not), with
// HookArgs.
func IsHookCommand(command string) bool {
	bin, ok := strings.CutSuffix(strings.TrimSpace(command), " "+HookArgs)
	if !ok {
		return false
	}
	bin = strings.TrimSpace(bin)
	// The binary is the last word: a path, quoted when it holds spaces,
	// maybe after variable assignments.
	if n := len(bin); n > 1 && (bin[n-1] == '"' || bin[n-1] == '\'') {
		if i := strings.LastIndexByte(bin[:n-1], bin[n-1]); i >= 0 {
			bin = bin[i+1 : n-1]
		}
	} else if i := strings.LastIndexAny(bin, " \t"); i >= 0 {
		bin = bin[i+1:]
	}
	if i := strings.LastIndexAny(bin, `/\`); i >= 0 {
		bin = bin[i+1:]
	}
	return strings.TrimSuffix(bin, ".exe") == "forgemem"
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
