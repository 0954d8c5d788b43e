package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// team is a repository shared through git: a bare origin and two
// teammates, each with a clone and a home folder of their own.
type team struct {
	t      *testing.T
	origin string
	a, b   *world
	// repoA and repoB are the clones.
	repoA, repoB string
}

func newTeam(t *testing.T) *team {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	tm := &team{t: t, origin: filepath.Join(root, "origin.git"), a: &world{t: t, home: t.TempDir()}, b: &world{t: t, home: t.TempDir()},
		repoA: filepath.Join(root, "a"), repoB: filepath.Join(root, "b")}
	tm.git(root, "init", "-q", "--bare", "-b", "main", tm.origin)
	tm.git(root, "clone", "-q", tm.origin, tm.repoA)
	writeFile(t, filepath.Join(tm.repoA, "README.md"), "# shop\n")
	tm.git(tm.repoA, "add", "-A")
	tm.git(tm.repoA, "commit", "-qm", "shop")
	tm.git(tm.repoA, "push", "-q", "origin", "main")
	tm.git(root, "clone", "-q", tm.origin, tm.repoB)
	return tm
}

// git runs git in dir with none of the test process's GIT_* variables and
// no system or global settings.
func (tm *team) git(dir string, args ...string) string {
	tm.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(withoutGit(os.Environ()), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
	out, err := cmd.CombinedOutput()
	if err != nil {
		tm.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// shareFromA commits everything in the first teammate's clone with
// message, pushes it to main and pulls it into the second's.
func (tm *team) shareFromA(message string) {
	tm.t.Helper()
	tm.git(tm.repoA, "add", "-A")
	tm.git(tm.repoA, "commit", "-qm", message)
	tm.git(tm.repoA, "push", "-q", "origin", "main")
	tm.git(tm.repoB, "pull", "-q")
}

// rememberedID is the id remember prints.
var rememberedID = regexp.MustCompile(`Remembered (mem_[0-9a-f-]{36}) `)

// remembered is the id of the memory remember says it wrote.
func remembered(t *testing.T, out string) string {
	t.Helper()
	m := rememberedID.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no id in remember's output:\n%s", out)
	}
	return m[1]
}

// toCommitPaths are the files a command's or a tool's "Commit …" note
// names, in its order, as it names them.
var toCommitPaths = regexp.MustCompile(`(?:\.\./)*\.forge/memory/mem_[0-9a-f-]{36}\.md`)

// commitNote is the "Commit …" note of out, from "Commit" to its end: ""
// when out has none.
func commitNote(out string) string {
	_, note, ok := strings.Cut(out, "Commit ")
	if !ok {
		return ""
	}
	return "Commit " + note
}

// commitNamed commits, in the clone repo, the files of the note in out,
// named from the folder dir, and nothing else; pushes them, and pulls them
// into the other clone. It returns the files committed.
func (tm *team) commitNamed(repo, dir, out string) []string {
	tm.t.Helper()
	named := toCommitPaths.FindAllString(commitNote(out), -1)
	if len(named) == 0 {
		tm.t.Fatalf("no file to commit in:\n%s", out)
	}
	for _, f := range named {
		tm.git(repo, "add", "--", filepath.Join(dir, f))
	}
	tm.git(repo, "commit", "-qm", "what forgemem named")
	tm.git(repo, "push", "-q", "origin", "main")
	other := tm.repoB
	if repo == tm.repoB {
		other = tm.repoA
	}
	tm.git(other, "pull", "-q")
	return named
}

// noDanglingHistory checks that forgemem validate in the clone repo finds
// no version whose supersedes names one the clone does not have.
func (tm *team) noDanglingHistory(w *world, repo string) {
	tm.t.Helper()
	stdout, _, _ := w.run(repo, "", "validate", "--json")
	var probs []struct{ Kind, Message string }
	if err := json.Unmarshal([]byte(stdout), &probs); err != nil {
		tm.t.Fatalf("validate --json: %v\n%s", err, stdout)
	}
	for _, p := range probs {
		if p.Kind == "dangling-supersedes" {
			tm.t.Errorf("validate in the other clone: %s: %s", p.Kind, p.Message)
		}
	}
}

// Two teammates change the same memory on their own branches, and one
// merges the other's: the chain forks. list says so, validate names the
// change in force and says how to settle the fork, forget of the other
// change is refused (it would forget the memory, the change in force too),
// and the settlement validate describes, made by editing one file as it
// says, leaves no fork: recall shows the two changes as a line.
func TestTeammatesChangeOneMemoryOnTwoBranches(t *testing.T) {
	tm := newTeam(t)
	first := remembered(t, tm.a.ok(tm.repoA, "", "remember", "Migrations are numbered sequentially.", "--scope", "repo", "--category", "project-conventions"))
	tm.shareFromA("a memory")

	tm.git(tm.repoA, "checkout", "-qb", "timestamps")
	theirs := remembered(t, tm.a.ok(tm.repoA, "", "remember", "Migrations are named by the timestamp of their creation.", "--supersedes", first))
	tm.git(tm.repoA, "add", "-A")
	tm.git(tm.repoA, "commit", "-qm", "timestamps")
	tm.git(tm.repoA, "push", "-q", "origin", "timestamps")

	tm.git(tm.repoB, "checkout", "-qb", "goose")
	ours := remembered(t, tm.b.ok(tm.repoB, "", "remember", "Migrations are made with goose create.", "--supersedes", first))
	tm.git(tm.repoB, "add", "-A")
	tm.git(tm.repoB, "commit", "-qm", "goose")
	tm.git(tm.repoB, "fetch", "-q")
	tm.git(tm.repoB, "merge", "-q", "--no-edit", "origin/timestamps")

	contains(t, "list", tm.b.ok(tm.repoB, "", "list"), "1 memory was changed on two branches at once, and only one change is in force (forgemem validate)")
	stdout, _, code := tm.b.run(tm.repoB, "", "validate", "--json")
	var probs []struct{ Kind, Message string }
	if err := json.Unmarshal([]byte(stdout), &probs); err != nil || code != 1 || len(probs) != 1 || probs[0].Kind != "fork" {
		t.Fatalf("validate --json: exit %d, %v\n%s", code, err, stdout)
	}
	// The later change is in force; which one that is depends on the clock.
	inForce, other := ours, theirs
	if !strings.Contains(probs[0].Message, ours[:12]+" is in force") {
		inForce, other = theirs, ours
	}
	contains(t, "validate", probs[0].Message, inForce[:12]+" is in force, the other change is not")

	_, stderr, code := tm.b.run(tm.repoB, "", "forget", other)
	if code != 2 || !strings.Contains(stderr, other[:12]+" is a parallel change that is not in force: "+inForce[:12]) {
		t.Errorf("forget of the change not in force: exit %d, want 2\n%s", code, stderr)
	}
	if status := tm.git(tm.repoB, "status", "--porcelain"); status != "" {
		t.Errorf("forget of the change not in force wrote something:\n%s", status)
	}

	// The first edit validate gives keeps the change in force.
	edit := regexp.MustCompile(`supersedes: (mem_[0-9a-f-]{36}) and version: (\d+) in (mem_[0-9a-f]{8})'s file`).FindStringSubmatch(probs[0].Message)
	if edit == nil || edit[3] != inForce[:12] {
		t.Fatalf("validate gives no edit of %s's file:\n%s", inForce[:12], probs[0].Message)
	}
	path := filepath.Join(tm.repoB, ".forge", "memory", inForce+".md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edited := regexp.MustCompile(`(?m)^supersedes: .*$`).ReplaceAllString(string(data), "supersedes: "+edit[1])
	edited = regexp.MustCompile(`(?m)^version: .*$`).ReplaceAllString(edited, "version: "+edit[2])
	writeFile(t, path, edited)
	contains(t, "validate after the edit", tm.b.ok(tm.repoB, "", "validate"), "No problems found.")
	recalled := tm.b.recall(tm.repoB, "how are migrations made and named?")
	if strings.Contains(recalled, "parallel change") || !strings.Contains(recalled, "version 3") {
		t.Errorf("recall after the edit: want the changes in a line, version 3 in force:\n%s", recalled)
	}
}

// Two teammates edit one memory's file by hand on their own branches, and
// the merge conflicts. While git mergetool resolves it, its copies of the
// file beside it are reported as copies, not memories, and not counted
// among the files whose memories may be missing (only the conflicted file
// is); once it is done, the .orig backup it keeps is reported, with what
// to do, rather than left for a git add to commit.
func TestMergetoolLeftoversAreNotMemories(t *testing.T) {
	tm := newTeam(t)
	id := remembered(t, tm.a.ok(tm.repoA, "", "remember", "Database access goes through the repository layer.", "--scope", "repo", "--category", "project-conventions"))
	tm.shareFromA("a memory")
	edit := func(repo, text string) {
		t.Helper()
		path := filepath.Join(repo, ".forge", "memory", id+".md")
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, path, strings.Replace(string(data), "Database access goes through the repository layer.", text, 1))
		tm.git(repo, "commit", "-qam", "edit")
	}
	edit(tm.repoA, "Database access goes through the repository layer; new queries use sqlc.")
	tm.git(tm.repoA, "push", "-q", "origin", "main")
	edit(tm.repoB, "Database access goes through the repository layer, in handlers and jobs.")
	cmd := exec.Command("git", "-C", tm.repoB, "pull", "-q", "--no-rebase")
	cmd.Env = append(withoutGit(os.Environ()), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "CONFLICT") {
		t.Fatalf("git pull: %v, want a conflict\n%s", err, out)
	}

	// The merge tool takes the merged branch's side, once it has run
	// forgemem beside its copies.
	during := filepath.Join(t.TempDir(), "during")
	tm.git(tm.repoB, "config", "mergetool.fm.cmd", fmt.Sprintf(`HOME=%q %q validate --json > %q.json; HOME=%q %q list 2> %q.list; cp "$REMOTE" "$MERGED"`,
		tm.b.home, binary, during, tm.b.home, binary, during))
	tm.git(tm.repoB, "config", "mergetool.fm.trustExitCode", "false")
	tm.git(tm.repoB, "mergetool", "--tool=fm", "--no-prompt")

	data, err := os.ReadFile(during + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var probs []struct{ Path, Kind, Message string }
	if err := json.Unmarshal(data, &probs); err != nil {
		t.Fatalf("validate --json while the tool ran: %v\n%s", err, data)
	}
	kinds := map[string]string{}
	for _, p := range probs {
		kinds[filepath.Base(p.Path)] = p.Kind
		if p.Kind == "not-a-memory" && !strings.Contains(p.Message, "a copy of "+id) {
			t.Errorf("%s: %s", filepath.Base(p.Path), p.Message)
		}
	}
	if len(probs) != 5 || kinds[id+".md"] != "merge-conflict" {
		t.Errorf("validate while the tool ran, want the conflict and 4 copies: %v", kinds)
	}
	if list, err := os.ReadFile(during + ".list"); err != nil || !strings.Contains(string(list), "1 file in the memory folders could not be read") {
		t.Errorf("list while the tool ran: %v\n%s", err, list)
	}

	stdout, _, code := tm.b.run(tm.repoB, "", "validate")
	contains(t, "validate after the tool", stdout, id+".md.orig\n  not-a-memory: the backup of "+id+".md that git mergetool keeps")
	if code != 1 || strings.Count(stdout, "not-a-memory") != 1 {
		t.Errorf("validate after the tool: exit %d, want 1 and one problem\n%s", code, stdout)
	}
	contains(t, "list after the tool", tm.b.ok(tm.repoB, "", "list"), "new queries use sqlc")
}

// What a teammate writes in the repository scope (remember, forget,
// review) reaches the others only through git, and what purge deletes
// stays in git's history: the commands say so, in the terms of the folder
// they run in, and say nothing of it where git has nothing to do with the
// file (the user scope, a memory folder git ignores).
func TestRepositoryWritesSayWhatGitNeeds(t *testing.T) {
	tm := newTeam(t)
	sub := filepath.Join(tm.repoA, "web")
	if err := os.MkdirAll(sub, 0o750); err != nil {
		t.Fatal(err)
	}
	out := tm.a.ok(sub, "", "remember", "We use pnpm, never npm.", "--scope", "repo", "--category", "project-conventions")
	id := remembered(t, out)
	contains(t, "remember in a subfolder", out, "Commit ../.forge/memory/"+id+".md for the repository's other clones to have it.")
	if out := tm.a.ok(tm.repoA, "", "remember", "I like tabs.", "--scope", "user", "--category", "coding-preferences"); strings.Contains(out, "Commit") {
		t.Errorf("remember in the user scope speaks of git:\n%s", out)
	}
	tm.git(tm.repoA, "add", "-A")
	tm.git(tm.repoA, "commit", "-qm", "a memory")

	out = tm.a.ok(tm.repoA, "", "forget", id)
	retired := regexp.MustCompile(`Wrote (mem_[0-9a-f-]{36}) `).FindStringSubmatch(out)
	if retired == nil {
		t.Fatalf("no id in forget's output:\n%s", out)
	}
	contains(t, "forget of a committed memory", out, "Commit .forge/memory/"+retired[1]+".md for the repository's other clones to have it.")

	_, stderr, code := tm.a.run(tm.repoA, "", "purge", id)
	if code != 2 {
		t.Errorf("purge without --yes: exit %d, want 2", code)
	}
	contains(t, "purge without --yes", stderr, "1 of them is tracked by git: once deleted and the deletion committed, the memory is out of the repository, but git's history keeps it")
	out = tm.a.ok(tm.repoA, "", "purge", id, "--yes")
	contains(t, "purge", out, "Git tracks 1 of the deleted files: commit the deletion (git rm .forge/memory/"+id+".md)",
		"Its text stays in git's history, and in every clone that fetched it; if it held a secret, change the secret.")

	out = tm.a.ok(tm.repoA, "", "remember", "Always run the setup script with sudo.", "--scope", "repo", "--category", "project-conventions")
	held := remembered(t, out)
	contains(t, "remember of an instruction", out, "It waits for your review", "Commit .forge/memory/"+held+".md for the repository's other clones to have it.")
	out = tm.a.ok(tm.repoA, "", "review", "--reject", held)
	rejected := regexp.MustCompile(`it is forgotten \((mem_[0-9a-f]{8})\)`).FindStringSubmatch(out)
	if rejected == nil {
		t.Fatalf("no id in review --reject's output:\n%s", out)
	}
	// The rejected version was never committed: its file is named too,
	// first, with the retired version's.
	contains(t, "review --reject", out, "Commit .forge/memory/"+held+".md and .forge/memory/"+rejected[1])

	// A memory forgotten before it was ever committed: both its versions
	// are named (its first version holds its text, and the retired one
	// supersedes it); committing what the note names, and nothing else,
	// leaves the other clone a whole history.
	out = tm.a.ok(sub, "", "remember", "Feature flags live in config/flags.yaml.", "--scope", "repo", "--category", "project-conventions")
	first := remembered(t, out)
	out = tm.a.ok(sub, "", "forget", first)
	retired = regexp.MustCompile(`Wrote (mem_[0-9a-f-]{36}) `).FindStringSubmatch(out)
	if retired == nil {
		t.Fatalf("no id in forget's output:\n%s", out)
	}
	contains(t, "forget of a memory never committed", out, "Commit ../.forge/memory/"+first+".md and ../.forge/memory/"+retired[1]+
		".md for the repository's other clones to have them.")
	if named := tm.commitNamed(tm.repoA, sub, out); len(named) != 2 {
		t.Errorf("forget named %v, want the 2 versions", named)
	}
	tm.noDanglingHistory(tm.b, tm.repoB)
	if list := tm.b.ok(tm.repoB, "", "list", "--retired"); !strings.Contains(list, "Feature flags live in config/flags.yaml.") {
		t.Errorf("the other clone does not have the forgotten memory:\n%s", list)
	}

	// Three versions never committed are listed, one a line.
	v1 := remembered(t, tm.a.ok(tm.repoA, "", "remember", "Releases are cut on Mondays.", "--scope", "repo", "--category", "project-conventions"))
	v2 := remembered(t, tm.a.ok(tm.repoA, "", "remember", "Releases are cut on Tuesdays.", "--supersedes", v1))
	out = tm.a.ok(tm.repoA, "", "forget", v2)
	contains(t, "forget of three versions never committed", out, "Commit these 3 files for the repository's other clones to have them:\n  .forge/memory/"+v1+
		".md\n  .forge/memory/"+v2+".md\n  .forge/memory/")
	if named := tm.commitNamed(tm.repoA, tm.repoA, out); len(named) != 3 {
		t.Errorf("forget named %v, want the 3 versions", named)
	}
	tm.noDanglingHistory(tm.b, tm.repoB)

	writeFile(t, filepath.Join(tm.repoB, ".gitignore"), ".forge/memory/\n")
	if out := tm.b.ok(tm.repoB, "", "remember", "Our memories stay on this machine.", "--scope", "repo", "--category", "project-conventions"); strings.Contains(out, "Commit") {
		t.Errorf("remember into a memory folder git ignores speaks of committing:\n%s", out)
	}
}

// What an agent writes in the repository scope through forgemem mcp
// (memory_remember, memory_forget) reaches the team only through git: the
// tools say which file to commit, in their text and their structured
// content, in the terms of the folder the server runs in, as the commands
// do; and nothing of it in the user scope, into a memory folder git
// ignores, outside a git repository, or when nothing was written.
func TestMCPRepositoryWritesSayWhatGitNeeds(t *testing.T) {
	tm := newTeam(t)
	sub := filepath.Join(tm.repoA, "web")
	if err := os.MkdirAll(sub, 0o750); err != nil {
		t.Fatal(err)
	}
	p := startMCPIn(t, tm.a, sub)
	// committed says that the result of what asks to commit files, and
	// notCommitted that it asks nothing of git.
	committed := func(what, text string, st map[string]any, files ...string) {
		t.Helper()
		note := "Commit " + files[0] + " for the repository's other clones to have it."
		if len(files) == 2 {
			note = "Commit " + files[0] + " and " + files[1] + " for the repository's other clones to have them."
		}
		contains(t, what, text, note)
		var got []string
		list, _ := st["commit"].([]any)
		for _, f := range list {
			s, _ := f.(string)
			got = append(got, s)
		}
		if !slices.Equal(got, files) || len(got) != len(list) || st["note"] != note {
			t.Errorf("%s: structured commit %v, note %v; want %q and %q", what, st["commit"], st["note"], files, note)
		}
	}
	notCommitted := func(what, text string, st map[string]any) {
		t.Helper()
		if strings.Contains(text, "Commit") || st["commit"] != nil || st["note"] != nil {
			t.Errorf("%s speaks of committing: %s\n%v", what, text, st)
		}
	}
	idOf := func(st map[string]any) string { return st["memory"].(map[string]any)["id"].(string) }

	// An agent's memory waits for the user's review; its file is written,
	// and reaches the team once committed, as a held one of the command's.
	text, st, _ := p.call("memory_remember", map[string]any{"content": "We use pnpm, never npm.", "scope": "repo", "category": "project-conventions"})
	contains(t, "memory_remember", text, "waits for the user's review")
	committed("memory_remember in a subfolder", text, st, "../.forge/memory/"+idOf(st)+".md")
	text, st, _ = p.call("memory_remember", map[string]any{"content": "I like tabs.", "scope": "user", "category": "coding-preferences"})
	notCommitted("memory_remember in the user scope", text, st)

	id := remembered(t, tm.a.ok(tm.repoA, "", "remember", "We deploy on Fridays.", "--scope", "repo", "--category", "project-conventions"))
	tm.git(tm.repoA, "add", "-A")
	tm.git(tm.repoA, "commit", "-qm", "memories")
	text, st, _ = p.call("memory_forget", map[string]any{"id": id, "reason": "we deploy every day now"})
	committed("memory_forget", text, st, "../.forge/memory/"+idOf(st)+".md")
	text, st, _ = p.call("memory_forget", map[string]any{"id": id})
	contains(t, "memory_forget again", text, "was already forgotten")
	notCommitted("memory_forget of a forgotten memory", text, st)

	// Versions never committed are named with the one written: committing
	// what the result names, and nothing else, leaves the other clone a
	// whole history.
	first := remembered(t, tm.a.ok(tm.repoA, "", "remember", "Feature flags live in config/flags.yaml.", "--scope", "repo", "--category", "project-conventions"))
	text, st, _ = p.call("memory_forget", map[string]any{"id": first})
	committed("memory_forget of a memory never committed", text, st, "../.forge/memory/"+first+".md", "../.forge/memory/"+idOf(st)+".md")
	tm.commitNamed(tm.repoA, sub, text)
	first = remembered(t, tm.a.ok(tm.repoA, "", "remember", "Releases are cut on Mondays.", "--scope", "repo", "--category", "project-conventions"))
	text, st, isErr := p.call("memory_remember", map[string]any{"content": "Releases are cut on Tuesdays.", "scope": "repo", "category": "project-conventions", "supersedes": first})
	if isErr {
		t.Fatalf("memory_remember with supersedes: %s", text)
	}
	committed("memory_remember superseding a memory never committed", text, st, "../.forge/memory/"+first+".md", "../.forge/memory/"+idOf(st)+".md")
	tm.commitNamed(tm.repoA, sub, text)
	tm.noDanglingHistory(tm.b, tm.repoB)

	writeFile(t, filepath.Join(tm.repoB, ".gitignore"), ".forge/memory/\n")
	text, st, _ = startMCPIn(t, tm.b, tm.repoB).call("memory_remember", map[string]any{"content": "Our memories stay on this machine.", "scope": "repo", "category": "project-conventions"})
	notCommitted("memory_remember into a memory folder git ignores", text, st)

	text, st, _ = startMCP(t).call("memory_remember", map[string]any{"content": "Orders ship within a day.", "scope": "repo", "category": "project-conventions"})
	notCommitted("memory_remember outside a git repository", text, st)
}
