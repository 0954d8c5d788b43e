//go:build linux

package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/memcore"
)

// The prompt hook's warning about memory files recall cannot read, with
// and without the recall server.

// hookOutput is the prompt hook's output, read as Claude Code reads it.
type hookOutput struct {
	HookSpecificOutput *struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
	SystemMessage string `json:"systemMessage"`
}

// readHookOutput reads the prompt hook's stdout: nothing, or exactly one
// object of the keys Claude Code accepts.
func readHookOutput(t *testing.T, out string) hookOutput {
	t.Helper()
	var got hookOutput
	if out == "" {
		return got
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields() // Claude Code refuses unknown keys
	if err := dec.Decode(&got); err != nil || dec.More() {
		t.Fatalf("stdout is not exactly one hook output: %v\n%s", err, out)
	}
	return got
}

// sessionPrompt is the UserPromptSubmit payload of a prompt of session in
// dir, with no transcript.
func sessionPrompt(dir, session, text string) string {
	b, _ := json.Marshal(map[string]string{"session_id": session, "cwd": dir, "hook_event_name": "UserPromptSubmit", "prompt": text})
	return string(b)
}

// A memory file a merge left conflict markers in cannot be read, so recall
// leaves it out: the prompt hook tells the user — in Claude Code's
// systemMessage, never in the model's context — naming the file and
// forgemem validate, and never what the file holds; once per session, and
// again when the set of such files, or what is wrong with one, changes —
// also after every file read for a while; whether the recall server
// answers or the hook recalls by itself. Once every file reads, it says
// nothing, and records nothing but that the sessions it warned were told.
func TestPromptHookWarnsOfUnreadableMemoryFiles(t *testing.T) {
	for _, alone := range []bool{true, false} {
		t.Run(fmt.Sprintf("alone=%v", alone), func(t *testing.T) {
			w := offlineWorld(t)
			repo := w.repo("shop")
			mem := filepath.Join(repo, ".forge", "memory")
			const migrations, errs = "Migrations live in db/migrations, one numbered file per change.", "Errors are wrapped with %w and checked with errors.Is."
			for _, text := range []string{migrations, errs} {
				w.ok(repo, "", "remember", text, "--scope", "repo", "--category", "project-conventions")
			}
			files, err := filepath.Glob(filepath.Join(mem, "*.md"))
			if err != nil || len(files) != 2 {
				t.Fatalf("memory files %v, %v; want 2", files, err)
			}
			originals := map[string][]byte{}
			for _, f := range files {
				if originals[f], err = os.ReadFile(f); err != nil {
					t.Fatal(err)
				}
			}
			conflict := func(path string) {
				t.Helper()
				text := string(originals[path])
				for _, s := range []string{migrations, errs} {
					text = strings.Replace(text, s, "<<<<<<< HEAD\n"+s+"\n=======\n"+strings.ToUpper(s)+"\n>>>>>>> feature", 1)
				}
				if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			var answered uint64
			if !alone {
				w.hookWith(repo, sessionPrompt(repo, "warm-up", "warm up"), false) // starts the server
				answered = w.waitServer(repo).Answered
			}
			prompts := uint64(0)
			ask := func(session string) hookOutput {
				t.Helper()
				out, errOut := w.hookWith(repo, sessionPrompt(repo, session, "How are errors wrapped, and where do migrations live?"), alone)
				prompts++
				if errOut != "" {
					t.Errorf("session %s: stderr %q", session, errOut)
				}
				got := readHookOutput(t, out)
				for _, leak := range []string{"migrations live", "wrapped with", "<<<<<<<", "head"} {
					if strings.Contains(strings.ToLower(got.SystemMessage), leak) {
						t.Errorf("session %s: the warning holds what a memory file holds (%q): %q", session, leak, got.SystemMessage)
					}
				}
				if got.HookSpecificOutput != nil && strings.Contains(got.HookSpecificOutput.AdditionalContext, "forgemem validate") {
					t.Errorf("session %s: the warning reached the model's context:\n%s", session, got.HookSpecificOutput.AdditionalContext)
				}
				return got
			}
			if got := ask("s1"); got.SystemMessage != "" {
				t.Errorf("every file reads, yet the hook warned: %q", got.SystemMessage)
			}
			told := func() []string {
				t.Helper()
				found, err := filepath.Glob(filepath.Join(spoolDir(repo), "told-*.txt"))
				if err != nil {
					t.Fatal(err)
				}
				return found
			}
			if found := told(); len(found) != 0 {
				t.Errorf("with every file read, the hook recorded %v", found)
			}

			conflict(files[0])
			rel := filepath.Join(".forge", "memory", filepath.Base(files[0]))
			got := ask("s1")
			contains(t, "the warning", got.SystemMessage, "a memory file cannot be read", "a merge conflict in "+rel, "`forgemem validate`")
			reads := migrations // the memory of the other file
			if strings.Contains(string(originals[files[0]]), migrations) {
				reads = errs
			}
			if got.HookSpecificOutput == nil || !strings.Contains(got.HookSpecificOutput.AdditionalContext, reads) {
				t.Errorf("the memory that reads is not recalled with the warning: %+v", got.HookSpecificOutput)
			}
			if got := ask("s1"); got.SystemMessage != "" {
				t.Errorf("the session's second prompt warned again: %q", got.SystemMessage)
			}
			if got := ask("s2"); !strings.Contains(got.SystemMessage, rel) {
				t.Errorf("another session was not warned: %q", got.SystemMessage)
			}

			conflict(files[1]) // the set changes: the session hears of it
			got = ask("s1")
			contains(t, "the warning", got.SystemMessage, "2 memory files cannot be read", "and 1 other", "`forgemem validate`")
			if got := ask("s1"); got.SystemMessage != "" {
				t.Errorf("the session's next prompt warned again: %q", got.SystemMessage)
			}

			for f, data := range originals { // resolved
				if err := os.WriteFile(f, data, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if got := ask("s3"); got.SystemMessage != "" || got.HookSpecificOutput == nil {
				t.Errorf("with every file read again: %+v; want the memories and no warning", got)
			}
			// The warned session learns that every file reads (one write);
			// after that, prompts with every file read write nothing.
			if got := ask("s1"); got.SystemMessage != "" {
				t.Errorf("with every file read again, s1 was warned: %q", got.SystemMessage)
			}
			found := told()
			if len(found) != 1 {
				t.Fatalf("the records of what sessions were told: %v; want one", found)
			}
			before, err := os.Stat(found[0])
			if err != nil {
				t.Fatal(err)
			}
			for _, session := range []string{"s1", "s3", "s4"} {
				ask(session)
			}
			if after, err := os.Stat(found[0]); err != nil || !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) || after.Size() != before.Size() {
				t.Errorf("prompts with every file read rewrote %s: %v, %v", found[0], after, err)
			}

			// Within one session, a change of what is wrong with a file, or
			// of the set, after nothing was wrong, is told; the same is not.
			tooLarge := func(path string) {
				t.Helper()
				if err := os.WriteFile(path, []byte(strings.Repeat("x", memcore.MaxFileBytes+1)), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			for i, step := range []struct {
				change func()
				want   string // "": no warning
			}{
				{func() { tooLarge(files[0]) }, rel + " is too large"},
				{func() {}, ""},
				{func() { os.Remove(files[0]) }, ""},
				{func() { tooLarge(files[0]) }, rel + " is too large"},
				{func() { conflict(files[0]) }, "a merge conflict in " + rel},
				{func() { tooLarge(files[0]) }, rel + " is too large"},
				{func() {}, ""},
			} {
				step.change()
				got := ask("s4")
				if step.want == "" && got.SystemMessage != "" || !strings.Contains(got.SystemMessage, step.want) {
					t.Errorf("step %d: the warning %q; want %q", i, got.SystemMessage, step.want)
				}
			}
			if !alone {
				if st := w.serverStatus(repo); st.Answered-answered != prompts {
					t.Errorf("the server answered %d of %d prompts; the others recalled by themselves", st.Answered-answered, prompts)
				}
			}
		})
	}
}

// The prompt hook's warning names a file of the repository from the folder
// the agent works in, and a file outside the repository — the user's
// memory folder — by its absolute path, never by a ../… that reads like
// one of the repository's.
func TestPromptHookNamesUnreadableFilesFromTheirPlace(t *testing.T) {
	w := offlineWorld(t)
	repo := w.repo("shop")
	sub := filepath.Join(repo, "web", "src")
	if err := os.MkdirAll(sub, 0o750); err != nil {
		t.Fatal(err)
	}
	memoryFile := func(scope, category, text string) string {
		t.Helper()
		id := remembered(t, w.ok(repo, "", "remember", text, "--scope", scope, "--category", category))
		dir := filepath.Join(repo, ".forge", "memory")
		if scope == "user" {
			dir = filepath.Join(w.home, ".forge", "memory")
		}
		return filepath.Join(dir, id+".md")
	}
	userFile := memoryFile("user", "coding-preferences", "I like tabs.")
	repoFile := memoryFile("repo", "project-conventions", "Migrations live in db/migrations.")
	tests := []struct {
		name, dir, file, want string
	}{
		{"a user file, from the repository's top", repo, userFile, userFile},
		{"a user file, from a subfolder", sub, userFile, userFile},
		{"a repository file, from a subfolder", sub, repoFile, filepath.Join("..", "..", ".forge", "memory", filepath.Base(repoFile))},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := os.ReadFile(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, tt.file, string(data)+"<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> feature\n")
			defer writeFile(t, tt.file, string(data))
			out, _ := w.hookWith(tt.dir, sessionPrompt(tt.dir, fmt.Sprint("s", i), "How do we write migrations?"), true)
			if got := readHookOutput(t, out).SystemMessage; !strings.Contains(got, "a merge conflict in "+tt.want+")") {
				t.Errorf("the warning does not name %s:\n%s", tt.want, got)
			}
		})
	}
}
