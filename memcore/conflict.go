package memcore

import "strings"

// mergeConflict finds an unresolved git merge conflict in text: a line
// starting with seven '<', a later line of seven '=' and a later line
// starting with seven '>', none inside a fenced code block (a memory may
// show what a conflict looks like). It returns the 1-based lines of the
// first conflict's opening and closing markers, and whether there is one.
func mergeConflict(text string) (open, end int, found bool) {
	fenced := false
	state := 0 // 0: outside, 1: after <<<<<<<, 2: after =======
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSuffix(line, "\r")
		if isFence(line) {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		switch {
		case isMarker(line, '<'):
			state, open = 1, n+1
		case state == 1 && line == "=======":
			state = 2
		case state == 2 && isMarker(line, '>'):
			return open, n + 1, true
		}
	}
	return 0, 0, false
}

// isMarker reports whether line is a conflict marker of seven c: the
// seven alone, or followed by a space and a label (HEAD, a branch).
func isMarker(line string, c byte) bool {
	marker := strings.Repeat(string(c), 7)
	rest, ok := strings.CutPrefix(line, marker)
	return ok && (rest == "" || rest[0] == ' ')
}

// isFence reports whether line opens or closes a fenced code block:
// three or more backticks or tildes, indented by at most three spaces.
func isFence(line string) bool {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return false
	}
	return strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")
}

// conflictAdvice says how to resolve a merge conflict.
const conflictAdvice = "keep what should stay and delete the <<<<<<<, ======= and >>>>>>> lines"
