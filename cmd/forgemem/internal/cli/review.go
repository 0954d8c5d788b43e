package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/termtext"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/workspace"
	"github.com/forgemem/forgemem/memcore"
	"github.com/spf13/cobra"
)

func (a *app) reviewCommand() *cobra.Command {
	var approve, reject, reason string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "review",
		Short: "Approve or reject the memories that wait for your review",
		Long: `Go through the memories that wait for your review, one at a time, as git add -p goes
through changes. A memory waits when a quarantine rule held it (memory.review): it reads
like an instruction to the agent's tools (run a command, fetch a URL, turn off a check,
send data somewhere, use a credential), it quotes tool output, or you did not state it in
your own words (the assistant said it, you pasted it, an agent wrote it). Until you
approve it, it is never recalled, searched by default or shown to the capture classifier.
A repository's memory in force in its file that reads like an instruction waits too (a
file a repository commits can claim any status): approving it records your approval of its
text and writes nothing in the repository; editing it is refused.

For each memory: y approves it, e opens it in $EDITOR and approves what you save, n
rejects it (a change of a memory goes back to the version in force; a new memory is
forgotten), s skips it, q quits, ? explains. Without a terminal: --json lists what waits,
--approve ID approves one and --reject ID [--reason TEXT] rejects one (ids need 4
hexadecimal digits, as for forget).`,
		Example: "  forgemem review\n  forgemem review --json\n  forgemem review --approve 1b4e28ba\n  forgemem review --reject 1b4e28ba --reason \"planted by a web page\"",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				// forgemem review 1b4e28ba: one memory was meant.
				ref := termtext.Clip(args[0], maxQuotedRef)
				return usagef("review takes no argument, got %q: to approve or reject one memory, give --approve %s or --reject %s; forgemem review alone asks about each",
					ref, ref, ref)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, name := range []string{"approve", "reject"} {
				if f := cmd.Flags().Lookup(name); f.Changed && strings.TrimSpace(f.Value.String()) == "" {
					return usagef("--%s is empty: give the id of a memory that waits (forgemem review --json lists them)", name)
				}
			}
			if approve != "" && reject != "" {
				return usagef("give --approve or --reject, not both")
			}
			if reason != "" && reject == "" {
				return usagef("--reason goes with --reject")
			}
			ws, err := a.existingWorkspace()
			if err != nil {
				return err
			}
			switch {
			case approve != "":
				res, err := ws.Approve(cmd.Context(), approve, "")
				return a.reviewOne(cmd.Context(), res, err)
			case reject != "":
				res, err := ws.Reject(cmd.Context(), reject, reason)
				return a.reviewOne(cmd.Context(), res, err)
			}
			queue, err := ws.ReviewQueue(cmd.Context())
			if err != nil {
				return err
			}
			switch {
			case asJSON:
				return a.out.json(queue)
			case len(queue) == 0:
				a.out.println("Nothing waits for your review.")
				return nil
			case !a.stdinIsTerminal():
				return fmt.Errorf("%s for your review, and forgemem review asks about each in a terminal; here, list them with --json and act on one with --approve ID or --reject ID",
					plural(len(queue), "memory waits", "memories wait"))
			}
			return a.review(cmd.Context(), ws, queue)
		},
	}
	f := cmd.Flags()
	f.StringVar(&approve, "approve", "", "approve the memory with this id, without asking")
	f.StringVar(&reject, "reject", "", "reject the memory with this id, without asking")
	f.StringVar(&reason, "reason", "", fmt.Sprintf("why it is rejected, in at most %d characters (with --reject)", workspace.MaxReasonRunes))
	f.BoolVar(&asJSON, "json", false, "list what waits as one JSON document")
	return cmd
}

// maxQuotedRef bounds, in runes, an argument quoted back where an id was
// meant.
const maxQuotedRef = 40

// stdinIsTerminal reports whether the command's input is a terminal, which
// review needs to ask.
func (a *app) stdinIsTerminal() bool {
	w, ok := a.env.Stdin.(io.Writer)
	return ok && a.env.IsTerminal(w)
}

// reviewOne prints what --approve or --reject did.
func (a *app) reviewOne(ctx context.Context, res *workspace.ReviewResult, err error) error {
	if err != nil {
		return err
	}
	a.printReviewed(res)
	if res.Memory.ID != res.Reviewed || res.Memory.Retired {
		a.noteCommit(a.toCommit(ctx, res.Memory)) // a version was written
	}
	return nil
}

// printReviewed says what an approval or a rejection wrote.
func (a *app) printReviewed(res *workspace.ReviewResult) {
	p, m := a.out, res.Memory
	switch {
	case m.Retired:
		p.printf("Rejected %s: it is forgotten (%s), its history kept.\n", p.bold(shortID(res.Reviewed)), shortID(m.ID))
	case res.Restored != "":
		p.printf("Rejected %s: the memory is back to %s, the version in force before (now %s).\n", p.bold(shortID(res.Reviewed)), shortID(res.Restored), shortID(m.ID))
	case res.Edited:
		p.printf("Approved %s with your text, as %s (%s, version %d).\n", p.bold(shortID(res.Reviewed)), shortID(m.ID), kind(m), m.Version)
	case m.ID == res.Reviewed: // a memory recall held: its text is approved, its file unchanged
		p.printf("Approved %s (%s, version %d): it is recalled from now on.\n", p.bold(shortID(res.Reviewed)), kind(m), m.Version)
	default:
		p.printf("Approved %s, as %s (%s, version %d): it is recalled from now on.\n", p.bold(shortID(res.Reviewed)), shortID(m.ID), kind(m), m.Version)
	}
}

// reviewHelp is what ? prints.
const reviewHelp = `y - approve this memory: it is recalled from now on
e - edit it in $EDITOR, then approve what you saved
n - reject it: a change goes back to the version in force, a new memory is forgotten
s - skip it for now
q - quit; what is left waits
? - print this help
`

// reviewer is a review in a terminal: the answers read, and what was
// done so far.
type reviewer struct {
	a                  *app
	ws                 *workspace.Workspace
	in                 *bufio.Reader
	approved, rejected int
	// gone counts the memories reviewed elsewhere since the queue was
	// listed (another terminal, review --approve): they no longer wait.
	gone int
}

// review asks about each memory of queue in turn, reading one answer per
// line; the end of input quits. Ctrl-C (or SIGTERM) while it waits for an
// answer stops it at once: what was approved or rejected so far stays,
// the summary says so, and the interruption is the error.
func (a *app) review(ctx context.Context, ws *workspace.Workspace, queue []workspace.ReviewItem) error {
	r := &reviewer{a: a, ws: ws, in: bufio.NewReader(a.env.Stdin)}
	for i, it := range queue {
		a.printReviewItem(i+1, len(queue), it)
		quit, err := r.ask(ctx, it)
		if err != nil {
			if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
				a.out.println() // the cursor is after the question
				_ = a.reviewSummary(r.approved, r.rejected, len(queue)-r.approved-r.rejected-r.gone)
			}
			return err
		}
		if quit {
			break
		}
	}
	return a.reviewSummary(r.approved, r.rejected, len(queue)-r.approved-r.rejected-r.gone)
}

// read reads one line of the answers, trimmed, as readAnswerRaw does, or
// returns ctx's error as soon as ctx ends: a terminal's read blocks where
// no context reaches it, so Ctrl-C at a question would otherwise wait for
// the next Enter. A read left behind then ends with the process.
func (r *reviewer) read(ctx context.Context) (string, error) {
	type line struct {
		text string
		err  error
	}
	l, err := interruptible(ctx, func() (line, error) {
		text, err := readAnswerRaw(r.in)
		return line{text, err}, nil
	})
	if err != nil {
		return "", err
	}
	return l.text, l.err
}

// ask asks about it until an answer acts on it, skips it or quits.
func (r *reviewer) ask(ctx context.Context, it workspace.ReviewItem) (quit bool, err error) {
	p := r.a.out
	for {
		p.printf("%s ", p.bold("Approve this memory [y,e,n,s,q,?]?"))
		line, err := r.read(ctx)
		if ctx.Err() != nil {
			return true, ctx.Err()
		}
		if err != nil && line == "" { // the end of input
			p.println()
			return true, nil
		}
		switch answer := firstLetter(line); answer {
		case "y":
			return false, r.notDone(r.approve(ctx, it, ""))
		case "e":
			text, err := r.a.edit(ctx, it.Memory.Content)
			if err != nil {
				return false, err
			}
			if text == "" {
				p.println("The text is empty: nothing approved.")
				continue
			}
			return false, r.notDone(r.approve(ctx, it, text))
		case "n":
			p.printf("%s ", p.bold("Why (optional)?"))
			why, _ := r.read(ctx)
			if ctx.Err() != nil {
				return true, ctx.Err() // nothing rejected
			}
			res, err := r.ws.Reject(ctx, it.Memory.ID, why)
			if err := r.a.reviewOne(ctx, res, err); err != nil {
				return false, r.notDone(err)
			}
			r.rejected++
			return false, nil
		case "s":
			return false, nil
		case "q":
			return true, nil
		}
		p.printf("%s", reviewHelp)
	}
}

// notDone says why an answer was not acted on when the memory, not the
// review, is the reason — it was reviewed elsewhere since it was listed
// (counted as gone), it changed meanwhile, or the answer is refused for
// it (an edit of a memory a repository committed) — and returns nil, so
// that the review goes on with the next memory; any other error is
// returned as it is.
func (r *reviewer) notDone(err error) error {
	if err == nil || !errors.Is(err, workspace.ErrInvalidInput) && !errors.Is(err, memcore.ErrConflict) {
		return err
	}
	if errors.Is(err, workspace.ErrNotWaiting) {
		r.gone++
	}
	r.a.out.printf("Nothing done: %s\n", strings.TrimPrefix(err.Error(), workspace.ErrInvalidInput.Error()+": "))
	return nil
}

// approve approves it, with text when not empty.
func (r *reviewer) approve(ctx context.Context, it workspace.ReviewItem, text string) error {
	res, err := r.ws.Approve(ctx, it.Memory.ID, text)
	if err := r.a.reviewOne(ctx, res, err); err != nil {
		return err
	}
	r.approved++
	return nil
}

// reviewSummary says what a review did and what still waits.
func (a *app) reviewSummary(approved, rejected, left int) error {
	a.out.printf("\nApproved %d, rejected %d; %s still %s for review.\n", approved, rejected,
		plural(left, "memory", "memories"), map[bool]string{true: "waits", false: "wait"}[left == 1])
	return nil
}

// firstLetter is the answer a line gives: its first character, lower
// case ("" for an empty line).
func firstLetter(line string) string {
	if line == "" {
		return ""
	}
	return strings.ToLower(line[:1])
}

// readAnswerRaw reads one line, trimmed; at the end of input it returns
// what was read with io.EOF.
func readAnswerRaw(in *bufio.Reader) (string, error) {
	line, err := in.ReadString('\n')
	line = strings.TrimSpace(line)
	if errors.Is(err, io.EOF) && line != "" {
		err = nil
	}
	return line, err
}

// printReviewItem shows memory n of total as a person reviews it: where
// it came from, why it waits, what it changes, and its text.
func (a *app) printReviewItem(n, total int, it workspace.ReviewItem) {
	p, m := a.out, it.Memory
	p.printf("\n%s %s  %s, version %d, %s\n", p.bold(fmt.Sprintf("(%d/%d)", n, total)), p.bold(shortID(m.ID)), kind(m), m.Version, day(m.CreatedAt))
	t := p.table()
	t.row("  waits\t%s\n", m.StatusReason)
	trustRows(t, m, a.stated(m), "  ")
	if m.SessionID != "" {
		t.row("  session\t%s\n", m.SessionID)
	}
	if it.InForce != nil {
		t.row("  changes\t%s, in force: %s\n", shortID(it.InForce.ID), termtext.Clip(it.InForce.Title, titleWidth))
	}
	t.flush()
	p.printf("\n%s\n\n", indent(m.Content, "    "))
}

// sourceWords says who stated a memory, for a person reviewing it; stated
// is whether the user did (workspace.Workspace.Stated). A repository's file
// that says the user stated it, of a text this user's forgemem did not
// write, is the word of whoever committed it: anyone who commits to the
// repository can write it.
func sourceWords(source string, stated bool) string {
	switch memcore.Source(source) {
	case memcore.SourceUser:
		if !stated {
			return "user: in a contributor's own words, says its file in the repository"
		}
		return "user: in your own words"
	case memcore.SourceAssistant:
		return "assistant: only in the assistant's words"
	case memcore.SourceMixed:
		return "mixed: in text you pasted, or not found in the conversation"
	case memcore.SourceAgent:
		return "agent: written by an agent through a tool"
	}
	return "unknown"
}

// editHeader starts the file review's e opens: lines starting with # are
// dropped.
const editHeader = `# Edit the memory, save and quit to approve it. Lines starting with # are
# left out; an empty text approves nothing.
`

// edit opens text in the user's editor ($VISUAL, $EDITOR, or vi) on the
// terminal and returns what was saved, without the comment lines.
func (a *app) edit(ctx context.Context, text string) (string, error) {
	dir, err := os.MkdirTemp("", "forgemem-review-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "MEMORY.md")
	if err := os.WriteFile(path, []byte(editHeader+text+"\n"), 0o600); err != nil {
		return "", err
	}
	editor := strings.Fields(a.editor())
	cmd := exec.CommandContext(ctx, editor[0], append(editor[1:], path)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = a.env.Stdin, a.env.Stdout, a.env.Stderr
	cmd.Env = a.env.Settings.Env
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("the editor %q failed (%w); set $EDITOR to one that waits until you close the file", editor[0], err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var kept []string
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(line, "#") {
			kept = append(kept, line)
		}
	}
	return strings.TrimSpace(strings.Join(kept, "\n")), nil
}

// editor is the command that edits a file: $VISUAL, $EDITOR, or vi.
func (a *app) editor() string {
	for _, name := range []string{"VISUAL", "EDITOR"} {
		for _, kv := range a.env.Settings.Env {
			if v, ok := strings.CutPrefix(kv, name+"="); ok && strings.TrimSpace(v) != "" {
				return v
			}
		}
	}
	return "vi"
}

// ruleName is the quarantine rule a status_reason names.
func ruleName(reason string) string {
	rule, _, _ := strings.Cut(reason, ":")
	return strings.TrimSpace(rule)
}
