package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/forgemem/forgemem/memcore"
)

// ErrMADial is wrapped by the errors of [MADial] about its input files.
var ErrMADial = errors.New("invalid MADial-Bench data")

// madialFiles are the memory and dialogue files of MADial-Bench (English):
// as renamed beside this package's copy, and as in the benchmark's
// repository.
var madialFiles = [][2]string{
	{"memory-en.jsonl", "dialogue-en.jsonl"},
	{"data/en/MADial-Bench-en-memory.json", "data/en/MADial-Bench-en-dialogue.json"},
}

// MADial converts MADial-Bench's English memories and dialogues, found in
// fsys (a folder holding memory-en.jsonl and dialogue-en.jsonl, or a clone
// of the benchmark's repository with data/en/MADial-Bench-en-memory.json
// and …-dialogue.json), into a dataset of one collection per user, named
// "user-<id>", as the benchmark's authors rank them:
//
//   - the collection's memories are the memories naming the user (each
//     memory's event names the user it belongs to, as the speaker of the
//     user's dialogues), in file order, with the event as content, category
//     user-facts and scope user, and the benchmark's memory id as id;
//   - each of the user's dialogues is a query, "dialogue-<line>", whose
//     messages are the dialogue's turns up to, not including, its first
//     test turn (the turn in which the assistant should recall a memory),
//     and whose relevant memories are its relevant-id.
//
// A turn is "<Speaker>: text"; the speaker Assistant is the assistant, any
// other the user; quotes or angle brackets around the text are removed. A
// turn without a speaker (the data has a few) takes the other role than the
// turn before it.
func MADial(fsys fs.FS) ([]Collection, error) {
	memPath, dlgPath, err := findMADial(fsys)
	if err != nil {
		return nil, err
	}
	mems, err := readMADialMemories(fsys, memPath)
	if err != nil {
		return nil, err
	}
	dialogues, err := readMADialDialogues(fsys, dlgPath)
	if err != nil {
		return nil, err
	}
	names, users, err := madialSpeakers(dialogues)
	if err != nil {
		return nil, err
	}
	owner, err := madialOwners(mems, names, users)
	if err != nil {
		return nil, err
	}
	out, index := make([]Collection, len(users)), make(map[int]int, len(users))
	for i, u := range users {
		out[i].Name = "user-" + strconv.Itoa(u)
		index[u] = i
	}
	for _, m := range mems {
		c := &out[index[owner[m.ID]]]
		c.Memories = append(c.Memories, m)
	}
	for _, d := range dialogues {
		if err := checkMADialRelevant(d, owner); err != nil {
			return nil, err
		}
		c := &out[index[d.user]]
		c.Queries = append(c.Queries, Query{ID: "dialogue-" + strconv.Itoa(d.line), Messages: d.messages, Relevant: d.relevant})
	}
	for i := range out {
		if err := out[i].Validate(); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrMADial, err)
		}
	}
	return out, nil
}

// madialSpeakers returns each user's name — the speaker of their
// dialogues — and the users, in order.
func madialSpeakers(dialogues []madialDialogue) (map[int]string, []int, error) {
	names := make(map[int]string)
	var users []int
	for _, d := range dialogues {
		if _, ok := names[d.user]; !ok {
			users = append(users, d.user)
		}
		for _, m := range d.speakers {
			if prev, ok := names[d.user]; ok && prev != m {
				return nil, nil, fmt.Errorf("%w: user %d speaks as both %q and %q", ErrMADial, d.user, prev, m)
			}
			names[d.user] = m
		}
	}
	slices.Sort(users)
	return names, users, nil
}

// madialOwners returns, by memory id, the user each memory belongs to:
// the one user it names.
func madialOwners(mems []Memory, names map[int]string, users []int) (map[string]int, error) {
	owner := make(map[string]int, len(mems))
	for _, m := range mems {
		var found []int
		for _, u := range users {
			if names[u] != "" && containsWord(m.Content, names[u]) {
				found = append(found, u)
			}
		}
		if len(found) != 1 {
			return nil, fmt.Errorf("%w: memory %s names %d of the users %v (%q); want exactly one", ErrMADial, m.ID, len(found), names, m.Content)
		}
		owner[m.ID] = found[0]
	}
	return owner, nil
}

// checkMADialRelevant checks that each relevant memory of the dialogue d
// exists and belongs to d's user.
func checkMADialRelevant(d madialDialogue, owner map[string]int) error {
	for _, id := range d.relevant {
		u, ok := owner[id]
		if !ok {
			return fmt.Errorf("%w: dialogue on line %d: relevant memory %s does not exist", ErrMADial, d.line, id)
		}
		if u != d.user {
			return fmt.Errorf("%w: dialogue on line %d of user %d: relevant memory %s names user %d", ErrMADial, d.line, d.user, id, u)
		}
	}
	return nil
}

// findMADial returns the paths of the memory and the dialogue file in fsys.
func findMADial(fsys fs.FS) (string, string, error) {
	for _, f := range madialFiles {
		_, errM := fs.Stat(fsys, f[0])
		_, errD := fs.Stat(fsys, f[1])
		if errM == nil && errD == nil {
			return f[0], f[1], nil
		}
	}
	return "", "", fmt.Errorf("%w: no %s and %s (nor %s and %s) in the folder", ErrMADial,
		madialFiles[0][0], madialFiles[0][1], madialFiles[1][0], madialFiles[1][1])
}

// madialMemory is a memory line's value.
type madialMemory struct {
	Time    string `json:"time"`
	Scene   string `json:"scene"`
	Emotion string `json:"emotion"`
	Event   string `json:"event"`
}

// readMADialMemories reads the memory file: one {"<id>": {…}} per line.
func readMADialMemories(fsys fs.FS, path string) ([]Memory, error) {
	var out []Memory
	seen := make(map[string]bool)
	err := eachLine(fsys, path, func(line int, text []byte) error {
		var obj map[string]madialMemory
		if err := json.Unmarshal(text, &obj); err != nil || len(obj) != 1 {
			return fmt.Errorf("want one {\"<id>\": {\"event\": …}} object: %v", err)
		}
		for id, m := range obj {
			if seen[id] {
				return fmt.Errorf("memory %s is repeated", id)
			}
			seen[id] = true
			if strings.TrimSpace(m.Event) == "" {
				return fmt.Errorf("memory %s has no event", id)
			}
			out = append(out, Memory{ID: id, Content: strings.TrimSpace(m.Event),
				Category: memcore.CategoryUserFacts, Scope: memcore.ScopeUser})
		}
		return nil
	})
	return out, err
}

// madialDialogue is a dialogue line, converted.
type madialDialogue struct {
	line     int
	user     int
	speakers []string // the names of the user's turns
	messages []Message
	relevant []string
}

// readMADialDialogues reads the dialogue file.
func readMADialDialogues(fsys fs.FS, path string) ([]madialDialogue, error) {
	var out []madialDialogue
	err := eachLine(fsys, path, func(line int, text []byte) error {
		var raw struct {
			Dialogue []string `json:"dialogue"`
			TestTurn []int    `json:"test-turn"`
			Relevant []int    `json:"relevant-id"`
			User     *int     `json:"user-id"`
		}
		if err := json.Unmarshal(text, &raw); err != nil {
			return err
		}
		if raw.User == nil || len(raw.TestTurn) == 0 || len(raw.Relevant) == 0 {
			return errors.New("want dialogue, test-turn, relevant-id and user-id")
		}
		test := slices.Min(raw.TestTurn)
		if test < 1 || test > len(raw.Dialogue) {
			return fmt.Errorf("test turn %d is outside the dialogue's %d turns", test, len(raw.Dialogue))
		}
		d := madialDialogue{line: line, user: *raw.User}
		for _, id := range raw.Relevant {
			d.relevant = append(d.relevant, strconv.Itoa(id))
		}
		var prev memcore.Role
		for _, turn := range raw.Dialogue[:test] {
			speaker, content, ok := splitTurn(turn)
			if !ok {
				continue // <BOD>, <EOD>, blank
			}
			role := memcore.RoleUser
			switch {
			case speaker == "Assistant":
				role = memcore.RoleAssistant
			case speaker != "":
				d.speakers = append(d.speakers, speaker)
			case prev == memcore.RoleUser:
				role = memcore.RoleAssistant
			}
			prev = role
			if content != "" {
				d.messages = append(d.messages, Message{Role: role, Content: content})
			}
		}
		if len(d.messages) == 0 {
			return errors.New("no turn before the test turn")
		}
		out = append(out, d)
		return nil
	})
	return out, err
}

// turnPattern matches "<Speaker>: text".
var turnPattern = regexp.MustCompile(`^<([^<>]+)>:\s*(.*)$`)

// splitTurn returns a turn's speaker ("" when it names none) and its text
// without surrounding quotes or angle brackets; ok is false for the
// dialogue markers <BOD> and <EOD> and blank turns.
func splitTurn(turn string) (speaker, content string, ok bool) {
	t := strings.TrimSpace(turn)
	if t == "" || t == "<BOD>" || t == "<EOD>" {
		return "", "", false
	}
	if m := turnPattern.FindStringSubmatch(t); m != nil {
		speaker, t = strings.TrimSpace(m[1]), strings.TrimSpace(m[2])
	}
	for _, pair := range [][2]string{{`"`, `"`}, {"<", ">"}, {"“", "”"}} {
		if len(t) >= len(pair[0])+len(pair[1]) && strings.HasPrefix(t, pair[0]) && strings.HasSuffix(t, pair[1]) {
			t = strings.TrimSpace(t[len(pair[0]) : len(t)-len(pair[1])])
			break
		}
	}
	return speaker, t, true
}

// containsWord reports whether text holds word as a whole word.
func containsWord(text, word string) bool {
	re := regexp.MustCompile(`\b` + regexp.QuoteMeta(word) + `\b`)
	return re.MatchString(text)
}

// eachLine calls f with each non-blank line of the file and its number,
// and names the file and line in f's error.
func eachLine(fsys fs.FS, path string, f func(line int, text []byte) error) error {
	data, err := fs.ReadFile(fsys, path)
	if err != nil {
		return fmt.Errorf("%w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		if err := f(n, text); err != nil {
			return fmt.Errorf("%w: %s line %d: %w", ErrMADial, path, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
