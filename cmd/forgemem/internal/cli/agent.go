package cli

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/claudecode"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/termtext"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/workspace"
	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memcore/redact"
	"github.com/forgemem/forgemem/memretrieve"
	"github.com/spf13/cobra"
)

func (a *app) searchCommand() *cobra.Command {
	var limit int
	var asJSON, pending bool
	cmd := &cobra.Command{
		Use:   "search <text>",
		Short: "Search the memories, ranked as retrieval ranks them",
		Long: `Search the memories that are not forgotten for text, best match first, with each one's
id, relevance and content. The ranking is retrieval's own: the text is embedded with the
configured embedding model and searched in the same vector index, and its words in the same
lexical index, the two rankings fused. The relevance, from 0 to 1, is the relevance gate's
confidence that the memory is relevant to the text: "strong" memories passed the gate
(retrieval would recall them for this text); weaker matches follow below a marker. -v shows
each one's evidence — its cosine similarity and the weight of the words it shares with the
text, with what the gate needed — and every weak match; --json gives all of it. When the
embedder fails, what the words find is printed, with a warning on stderr. Memories that
wait for your review are searched only with --pending, and marked; so are memories the
repository committed that read like instructions, which recall holds until you approve
them (without --pending, a line says how many were left out, and another how many
memories wait for review, unsearched).`,
		Example: "  forgemem search \"database locking\"\n  forgemem search migrations --limit 3 --json",
		Args: countArgs(argCount{min: 1, max: -1,
			need: `needs the text to search for: forgemem search "database locking"`}),
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit < 1 || limit > workspace.MaxSearchLimit {
				return usagef("--limit %d is out of range, want 1–%d", limit, workspace.MaxSearchLimit)
			}
			ws, err := a.existingWorkspace()
			if err != nil {
				return err
			}
			search := ws.Search
			if pending {
				search = ws.SearchWithPending
			}
			res, err := search(cmd.Context(), strings.Join(args, " "), limit)
			if err = a.partialWarning("search", err); err != nil {
				return err
			}
			defer a.warnUnreadable(cmd, res.Unreadable)
			if asJSON {
				return a.out.json(res)
			}
			a.printHits(res)
			if res.Held > 0 {
				a.out.println(a.out.dim("\n" + heldNote(res.Held, "of the results") + "; --pending shows what waits"))
			}
			if res.Pending > 0 {
				a.out.println(a.out.dim("\n" + pendingNote(res.Pending)))
			}
			return nil
		},
	}
	cmd.Flags().IntVarP(&limit, "limit", "n", 10, fmt.Sprintf("how many results, 1–%d", workspace.MaxSearchLimit))
	cmd.Flags().BoolVar(&pending, "pending", false, "search the memories that wait for review too")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	return cmd
}

// weakShown is the least relevance of a weak match search shows without
// -v.
const weakShown = 0.5

// maxQuotedQuery bounds, in runes, the search text quoted back when
// nothing is relevant to it.
const maxQuotedQuery = 200

func (a *app) printHits(res *workspace.SearchResult) {
	p := a.out
	var strong, weak []workspace.Hit
	for _, h := range res.Hits {
		switch {
		case h.Strong:
			strong = append(strong, h)
		case a.verbose || h.Relevance >= weakShown:
			weak = append(weak, h)
		}
	}
	if len(strong) == 0 {
		p.printf("No memory is relevant to %q.\n", termtext.Clip(res.Query, maxQuotedQuery))
	}
	for i, h := range strong {
		if i > 0 {
			p.println()
		}
		a.printHit(i+1, "strong", h)
	}
	if len(weak) == 0 {
		return
	}
	p.println()
	p.println(p.dim("Weaker matches, below the relevance gate (retrieval would not recall them for this text):"))
	for i, h := range weak {
		p.println()
		a.printHit(len(strong)+i+1, "weak", h)
	}
}

// printHit prints search hit n, labelled strong or weak: its relevance,
// id, kind and content, and with -v its evidence.
func (a *app) printHit(n int, label string, h workspace.Hit) {
	p := a.out
	m := h.Memory
	line := p.sprintf("%d. %s %.2f  %s  %s, version %d, %s", n, label, h.Relevance, p.bold(shortID(m.ID)), kind(m), m.Version, day(m.CreatedAt))
	if h.Matched != "" {
		line += p.sprintf(" (matched its earlier version %s)", shortID(h.Matched))
	}
	why := ""
	if m.Status == string(memcore.StatusPending) {
		line += " (waits for your review)"
		why = m.StatusReason
	}
	if h.Held != "" {
		line += " (held for your review: committed to the repository)"
		why = h.Held
	}
	p.println(line)
	if why != "" {
		p.printf("   %s\n", workspace.WhyHeld(why))
	}
	if m.Stale != "" {
		p.printf("   may be outdated: %s\n", m.Stale)
	}
	p.println(indent(m.Content, "   "))
	if a.verbose {
		p.println(p.dim("   evidence: " + evidenceLine(h.Evidence)))
	}
}

// evidenceLine says in words what a memory's relevance rests on, what the
// relevance gate needed, and what it made of it: "vector 0.52 (threshold
// 0.33), words 3 shared, weight 6.1 (threshold 4.9); cleared the gate on
// its words; admitted on both, each near the turn's best".
func evidenceLine(ev workspace.Evidence) string {
	var parts []string
	switch {
	case ev.Vector == 0 && ev.VectorNeeded == 0:
		parts = append(parts, "not found by the vector search")
	case ev.VectorNeeded == 0:
		parts = append(parts, fmt.Sprintf("vector %.2f", ev.Vector))
	default:
		parts = append(parts, fmt.Sprintf("vector %.2f (threshold %.2f)", ev.Vector, ev.VectorNeeded))
	}
	switch {
	case ev.LexicalTerms == 0:
		parts = append(parts, "no word shared")
	case ev.LexicalNeeded == 0:
		parts = append(parts, fmt.Sprintf("words %d shared, weight %.1f", ev.LexicalTerms, ev.Lexical))
	case ev.LexicalNeeded < 0:
		// A short text against a few memories: every word a memory shares
		// with it weighs more than the gate needs.
		parts = append(parts, fmt.Sprintf("words %d shared, weight %.1f (any shared word clears)", ev.LexicalTerms, ev.Lexical))
	default:
		parts = append(parts, fmt.Sprintf("words %d shared, weight %.1f (threshold %.1f)", ev.LexicalTerms, ev.Lexical, ev.LexicalNeeded))
	}
	return strings.Join(parts, ", ") + "; " + gateVerdict(ev)
}

// gateVerdict says what the relevance gate made of ev: on which side it
// cleared the gate's threshold, and on which side it was admitted when
// that differs (a memory comes along when its evidence stands near the
// turn's best hit, once one of the turn's memories cleared the gate).
func gateVerdict(ev workspace.Evidence) string {
	if ev.VectorNeeded == 0 && ev.LexicalNeeded == 0 {
		// No threshold: the gate is off, or could not be calibrated.
		if ev.Passed == "none" {
			return "not admitted"
		}
		return "no gate: found by " + sideWords(ev.Passed)
	}
	cleared := "cleared the gate on " + sideWords(ev.Cleared)
	switch {
	case ev.Cleared == "none" && ev.Passed == "none":
		return "below the gate"
	case ev.Passed == "none":
		return cleared + "; not admitted"
	case ev.Cleared == ev.Passed || ev.Cleared == "both":
		return cleared
	case ev.Cleared == "none":
		cleared = "under the gate's thresholds"
	}
	if ev.Passed == "both" {
		return cleared + "; admitted on both, each near the turn's best"
	}
	return cleared + "; admitted on " + sideWords(ev.Passed) + ", near the turn's best"
}

// sideWords names a side of the evidence ("vector", "lexical", "both") in
// words.
func sideWords(side string) string {
	switch side {
	case "vector":
		return "its vector"
	case "lexical":
		return "its words"
	}
	return side
}

// partialWarning prints on stderr the warning of a recall or search that
// a provider failure left partial (workspace.ErrPartial), whose results
// the command still prints, and returns nil for it; any other err is
// returned.
func (a *app) partialWarning(command string, err error) error {
	if !errors.Is(err, workspace.ErrPartial) {
		return err
	}
	msg, _ := redact.Text(strings.ReplaceAll(err.Error(), "\n", "; "))
	eprintf(a.env.Stderr, "forgemem %s: some memories may be missing: %s; what follows was found by its words, or among the memories that could be indexed\n", command, msg)
	return nil
}

// readConversation reads a JSON Lines conversation from the file named by
// args, or from stdin for none or "-". A file that is a Claude Code
// transcript is read as the hooks read one: the user's and the agent's
// text since its last compaction (claudecode.ReadWindow). oneMessage says
// how to give the command a single message instead, for the error of a
// file that does not exist. When ctx ends first it returns ctx's error at
// once, even while the file's open or a read blocks (a FIFO, a pipe with
// no data).
func (a *app) readConversation(ctx context.Context, args []string, oneMessage string) ([]memcore.Message, error) {
	if len(args) == 0 || args[0] == "-" {
		a.sayReadingTerminal("the conversation", `one {"role": "user", "content": "…"} object per line`)
	}
	return interruptible(ctx, func() ([]memcore.Message, error) {
		var r io.Reader = a.env.Stdin
		path := ""
		if len(args) == 1 && args[0] != "-" {
			path = args[0]
			f, err := os.Open(path)
			if errors.Is(err, fs.ErrNotExist) {
				// Most likely the text itself was given (forgemem recall "how
				// do we lock rows?"): say what the argument is.
				return nil, fmt.Errorf("%w (the argument names a conversation file, JSON Lines; for a single message, %s)", err, oneMessage)
			}
			if err != nil {
				return nil, err
			}
			defer f.Close()
			r = f
		}
		msgs, err := workspace.ReadConversation(r)
		switch {
		case !errors.Is(err, workspace.ErrClaudeCodeTranscript):
			return msgs, err
		case path == "":
			// Read from its end, within bounds, it needs a file.
			return nil, fmt.Errorf("standard input is %w: give the transcript's path instead (~/.claude/projects/…/SESSION.jsonl)", err)
		}
		return claudecode.ReadWindow(path)
	})
}

// errRecallFromTerminal refuses forgemem recall with nothing to read but a
// terminal: it would wait there, silently, for JSON Lines that a person
// rarely means to type.
var errRecallFromTerminal = usagef("give the conversation to recall for: one message with --message TEXT, a JSON Lines file, "+
	"or JSON Lines piped to standard input, which is a terminal here (- reads the terminal, ending with %s)", endOfInput(runtime.GOOS))

// recallWindow is the conversation recall reads: the one user message of
// --message when it is given, or else the JSON Lines conversation of the
// file args names, or of stdin.
func (a *app) recallWindow(cmd *cobra.Command, args []string, message string) ([]memcore.Message, error) {
	if !cmd.Flags().Changed("message") {
		if len(args) == 0 && a.stdinIsTerminal() {
			return nil, errRecallFromTerminal
		}
		return a.readConversation(cmd.Context(), args, "use --message TEXT, or try forgemem search TEXT")
	}
	if len(args) > 0 {
		return nil, usagef("give a conversation file or --message, not both")
	}
	if strings.TrimSpace(message) == "" {
		return nil, usagef("--message is empty: give the user's message, such as --message \"how do we lock rows?\"")
	}
	return []memcore.Message{{Role: memcore.RoleUser, Content: message}}, nil
}

func (a *app) recallCommand() *cobra.Command {
	var asJSON bool
	var message string
	cmd := &cobra.Command{
		Use:   "recall [conversation.jsonl | - | --message TEXT]",
		Short: "Print the memories an agent would recall for a conversation",
		Long: `Read a conversation as JSON Lines, one {"role": "user", "content": "…"} object per line
(roles user, assistant, system, tool), from a file or stdin — or take one user message
with --message — and print the block of recalled memories an agent would add to its
context for the next turn, as retrieval builds it with the settings. Without a file,
stdin is read when it is piped; on a terminal, give - to type the conversation there,
ending it with Ctrl-D (Ctrl-Z then Enter on Windows); with neither, recall says what to
give. A Claude Code transcript file (~/.claude/projects/…/SESSION.jsonl) is read as its
hooks read it: the user's and the agent's text since its last compaction. A memory is
recalled only when the relevance gate finds evidence that it is relevant: nothing
relevant prints nothing. An empty conversation recalls nothing, and stderr says so. -v
says on stderr what each recalled memory's relevance rests on, and why each other memory
the search ranked was left out; --json prints all of it with the block. A memory the
repository committed that reads like an instruction to the agent's tools is left out
until you approve it in forgemem review, and stderr says so. When the embedder fails,
what the words find is recalled, with a warning on stderr. Where memory is turned off
(memory.enabled: false) nothing is recalled, and stderr says so (--json: "skipped").`,
		Example: `  forgemem recall --message "how do we lock user rows?"
  echo '{"role":"user","content":"how do we lock user rows?"}' | forgemem recall
  forgemem recall session.jsonl`,
		Args: countArgs(argCount{min: 0, max: 1, takes: "takes one conversation",
			hint: `give one JSON Lines file, - to read it from standard input, or the user's message as --message "…", in quotes`}),
		RunE: func(cmd *cobra.Command, args []string) error {
			window, err := a.recallWindow(cmd, args, message)
			if err != nil {
				return err
			}
			if len(window) == 0 {
				// Nothing to recall for, which is no failure (an agent's
				// first turn may have none), but never silent: a file or a
				// pipe that held nothing is most likely a mistake.
				eprintf(a.env.Stderr, "%s: the conversation is empty, nothing to recall; want JSON Lines, one {\"role\": \"user\", \"content\": \"…\"} object per line, or --message TEXT\n", cmd.CommandPath())
				if asJSON {
					return a.out.json(recallJSON(&memretrieve.Result{Skipped: memretrieve.SkipEmptyWindow}))
				}
				return nil
			}
			ws, err := a.existingWorkspace()
			if err != nil {
				return err
			}
			res, err := ws.Recall(cmd.Context(), window)
			if errors.Is(err, workspace.ErrDisabled) {
				eprintf(a.env.Stderr, "forgemem recall: %v; nothing recalled\n", err)
				if asJSON {
					doc := recallJSON(&memretrieve.Result{})
					doc.Skipped = err.Error()
					return a.out.json(doc)
				}
				return nil
			}
			if err = a.partialWarning("recall", err); err != nil {
				return err
			}
			unreadable, err := ws.UnreadableCount(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				doc := recallJSON(res)
				doc.Unreadable = unreadable
				return a.out.json(doc)
			}
			defer a.warnUnreadable(cmd, unreadable)
			if res.HeldDropped > 0 {
				eprintf(a.env.Stderr, "forgemem recall: %s\n", heldNote(res.HeldDropped, ""))
			}
			if res.Injection != "" {
				a.out.println(res.Injection)
			}
			if a.verbose {
				a.explainRecall(res)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document: the block, each memory recalled and each left out, with its evidence")
	cmd.Flags().StringVarP(&message, "message", "m", "", "recall for this one user message instead of a conversation")
	return cmd
}

// pendingNote says that n memories wait for review and were not searched,
// and what to do.
func pendingNote(n int) string {
	if n == 1 {
		return "1 memory waits for your review and was not searched (--pending searches it too; forgemem review)"
	}
	return fmt.Sprintf("%d memories wait for your review and were not searched (--pending searches them too; forgemem review)", n)
}

// heldNote says that n memories were left out (of where, when not "")
// because recall holds them, and what to do.
func heldNote(n int, where string) string {
	if where != "" {
		where = " " + where
	}
	if n == 1 {
		return "1 memory left out" + where + ": committed to the repository, it reads like an instruction to the agent's tools and waits for your approval (forgemem review)"
	}
	return fmt.Sprintf("%d memories left out%s: committed to the repository, they read like instructions to the agent's tools and wait for your approval (forgemem review)", n, where)
}

// recalledJSON is one memory of recall's JSON document.
type recalledJSON struct {
	ID string `json:"id"`
	// Score is its score in retrieval's ranking, Relevance the relevance
	// gate's confidence (0 for a memory reached over a link).
	Score     float64             `json:"score"`
	Relevance float64             `json:"relevance"`
	Evidence  *workspace.Evidence `json:"evidence,omitempty"`
	// Via says why a memory reached over a link is recalled: "refines
	// mem_…", for instance.
	Via string `json:"via,omitempty"`
	// Reason says why a memory was left out.
	Reason string `json:"reason,omitempty"`
}

// recallDocument is recall's JSON document.
type recallDocument struct {
	Injection string         `json:"injection"`
	Memories  []recalledJSON `json:"memories"`
	Dropped   []recalledJSON `json:"dropped"`
	Omitted   int            `json:"omitted"`
	// Skipped says why nothing was recalled, when retrieval did not run:
	// memory turned off here, an empty conversation, no index yet, …
	Skipped string `json:"skipped,omitempty"`
	// Unreadable counts the files of the memory folders that could not be
	// read, so were not recalled (forgemem validate says why).
	Unreadable int `json:"unreadable_files"`
}

// recallJSON is the JSON document of a recall's result.
func recallJSON(res *memretrieve.Result) recallDocument {
	doc := recallDocument{Injection: res.Injection, Memories: []recalledJSON{}, Dropped: []recalledJSON{}, Omitted: res.Omitted,
		Skipped: res.Skipped.String()}
	for _, r := range res.Memories {
		m := recalledJSON{ID: r.Memory.Meta.ID, Score: r.Score, Relevance: r.Evidence.Relevance}
		if r.Via.Search() {
			ev := workspace.EvidenceOf(r.Evidence)
			m.Evidence = &ev
		} else {
			m.Via = fmt.Sprintf("%s %s", r.Via.Relationship, r.Via.From)
		}
		doc.Memories = append(doc.Memories, m)
	}
	for _, d := range res.Dropped {
		ev := workspace.EvidenceOf(d.Evidence)
		doc.Dropped = append(doc.Dropped, recalledJSON{ID: d.ID, Score: d.Score, Relevance: d.Evidence.Relevance,
			Evidence: &ev, Reason: d.Reason.String()})
	}
	return doc
}

// explainRecall says on stderr what each recalled memory's relevance rests
// on, and why each other ranked memory was left out.
func (a *app) explainRecall(res *memretrieve.Result) {
	w := a.env.Stderr
	eprintf(w, "forgemem recall: %s recalled, %s left out\n", plural(len(res.Memories), "memory", "memories"),
		plural(len(res.Dropped), "ranked memory", "ranked memories"))
	for i, r := range res.Memories {
		if r.Via.Search() {
			eprintf(w, "  [%d] %s relevance %.2f: %s\n", i+1, shortID(r.Memory.Meta.ID), r.Evidence.Relevance, evidenceLine(workspace.EvidenceOf(r.Evidence)))
		} else {
			eprintf(w, "  [%d] %s: %s %s, a memory recalled\n", i+1, shortID(r.Memory.Meta.ID), r.Via.Relationship, shortID(r.Via.From))
		}
	}
	for _, d := range res.Dropped {
		eprintf(w, "  left out %s, %s: relevance %.2f, %s\n", shortID(d.ID), d.Reason, d.Evidence.Relevance, evidenceLine(workspace.EvidenceOf(d.Evidence)))
	}
}

// newSessionID returns a session id for memories written by hand.
func newSessionID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "cli-" + hex.EncodeToString(b[:])
}

func (a *app) captureCommand() *cobra.Command {
	var session string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "capture <conversation.jsonl | ->",
		Short: "Run one capture pass over a conversation and print what it wrote",
		Long: `Read a conversation as JSON Lines (as recall does; "-" reads stdin), or a Claude Code
transcript file as its hooks read it (since its last compaction), and run one capture
pass over it, as an agent's capture pipeline does after a turn: tool content is removed,
the classifier model (memory.classifier_model) decides what is worth remembering, secrets
are redacted, and the memories are written. A pass reads at most the newest 8,000 tokens
of the conversation (about 32,000 characters): of a longer one only its newest part is
captured, and capture says so. It needs a real model (the openai or gemini provider); the
fake provider has none.`,
		Example: "  forgemem capture session.jsonl --provider openai\n  cat session.jsonl | forgemem capture -",
		Args: func(_ *cobra.Command, args []string) error {
			switch len(args) {
			case 0:
				return usagef("give the conversation to capture: a JSON Lines file, or - to read it from standard input")
			case 1:
				return nil
			}
			return usagef("give one conversation, not %d: capture runs one pass over one conversation", len(args))
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			window, err := a.readConversation(cmd.Context(), args, "pipe {\"role\": \"user\", \"content\": \"…\"} to standard input")
			if err != nil {
				return err
			}
			ws, err := a.workspace()
			if err != nil {
				return err
			}
			if session == "" {
				session = newSessionID()
			}
			res, err := ws.Capture(cmd.Context(), window, session)
			if err != nil {
				return err
			}
			if asJSON {
				return a.out.json(res)
			}
			a.printCaptured(res, len(window), session)
			return nil
		},
	}
	cmd.Flags().StringVar(&session, "session", "", "the session id recorded in the memories (default: a new one)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	return cmd
}

func (a *app) printCaptured(res *workspace.CaptureResult, messages int, session string) {
	p := a.out
	switch {
	case res.Empty:
		p.println("Nothing to capture: the conversation has no user or assistant text once tool content is removed.")
	case len(res.Written) == 0 && res.Invalid > 0:
		p.println("Nothing written from this conversation.")
	case len(res.Written) == 0 && res.Truncated:
		p.println("Nothing new worth remembering in the newest part of this conversation (most conversations hold none).")
	case len(res.Written) == 0:
		p.println("Nothing new worth remembering in this conversation (most conversations hold none).")
	default:
		p.printf("Captured %s from %s (session %s):\n", plural(len(res.Written), "memory", "memories"), plural(messages, "message", "messages"), session)
		a.printWritten(res.Written)
	}
	if res.Duplicates > 0 {
		p.printf("%s already remembered, not written again.\n", plural(res.Duplicates, "memory was", "memories were"))
	}
	if res.Invalid > 0 {
		// A model that does not follow the reply's schema (an unknown scope
		// or category, no content, an id it made up) is not a conversation
		// with nothing worth remembering.
		p.printf("Skipped %s of the classifier's that could not be used (-v says why).\n", plural(res.Invalid, "proposal", "proposals"))
	}
	if res.Redactions > 0 {
		p.printf("Replaced %s with %s.\n", plural(res.Redactions, "secret", "secrets"), redact.Placeholder)
	}
	if n := waiting(res.Written); n > 0 {
		p.printf("%s for your review before %s recalled: forgemem review.\n", plural(n, "memory waits", "memories wait"), map[bool]string{true: "it is", false: "they are"}[n == 1])
	}
	if res.Truncated {
		p.printf("Only the newest part of the conversation was read: it is about %s tokens long, and a capture pass reads at most %s. To capture the rest, split it into smaller files and capture each.\n",
			thousands(res.Tokens), thousands(res.WindowTokens))
	}
}

// thousands writes a count with its thousands grouped: 12,345,678.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// waiting counts the memories of ms that wait for review.
func waiting(ms []workspace.Memory) int {
	n := 0
	for _, m := range ms {
		if m.Status == string(memcore.StatusPending) {
			n++
		}
	}
	return n
}

// printWritten lists memories just written, one per line.
func (a *app) printWritten(ms []workspace.Memory) {
	t := a.out.table()
	for _, m := range ms {
		v := fmt.Sprintf("version %d", m.Version)
		if m.Supersedes != "" {
			v += ", supersedes " + shortID(m.Supersedes)
		}
		held := ""
		if m.Status == string(memcore.StatusPending) {
			held = "  (waits for review: " + ruleName(m.StatusReason) + ")"
		}
		t.row("  %s\t%s\t%s\t%s%s\n", shortID(m.ID), kind(m), v, termtext.Clip(m.Title, titleWidth), held)
	}
	t.flush()
}

func (a *app) chatCommand() *cobra.Command {
	var model string
	cmd := &cobra.Command{
		Use:   "chat",
		Short: "Chat with a model that remembers across sessions (a minimal agent)",
		Long: `A minimal terminal agent with long-term memory, and the reference for wiring forgemem
into an agent loop: before each reply it recalls memories for the conversation and adds
them to the request; after each reply it hands the conversation to capture, which
decides in the background what is worth remembering. Type a message and Enter; end with
/exit or end of input: Ctrl-D (Ctrl-Z then Enter on Windows). It needs a real model
(openai or gemini).`,
		Args: noArgs("type your messages once it has started"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ws, err := a.workspace()
			if err != nil {
				return err
			}
			return a.chat(cmd.Context(), ws, model)
		},
	}
	cmd.Flags().StringVar(&model, "model", "", "the model that answers (default: memory.classifier_model)")
	return cmd
}

// chat runs the conversation loop: read a line, answer it, repeat.
func (a *app) chat(ctx context.Context, ws *workspace.Workspace, model string) error {
	session := newSessionID()
	c, err := ws.StartChat(ctx, workspace.ChatOptions{Model: model, SessionID: session})
	if err != nil {
		return err
	}
	if c.RetrievalOff != "" {
		eprintf(a.env.Stderr, "forgemem chat: nothing will be recalled: %s\n", c.RetrievalOff)
	}
	lines, readErr := readLines(ctx, a.env.Stdin)
	eof, turnErr := a.chatTurns(ctx, c, lines)
	// Capture may still be classifying the last turn: let it finish.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	st, err := c.Close(cctx)
	if turnErr == nil && eof {
		turnErr = readErr() // the reader is done: the channel was closed
	}
	if err := errors.Join(turnErr, err); err != nil {
		return err
	}
	if st.MemoriesWritten > 0 {
		a.out.printf("Capture wrote %s this session; forgemem list shows them.\n", plural(int(st.MemoriesWritten), "memory", "memories"))
	}
	return nil
}

// chatTurns runs the chat's turns, one a line of lines, until the input
// ends (eof), /exit, an interrupt or a failed turn (its error).
func (a *app) chatTurns(ctx context.Context, c *workspace.Chat, lines <-chan string) (eof bool, err error) {
	p, interactive := a.out, a.env.IsTerminal(a.env.Stdout)
	for {
		if interactive {
			p.printf("%s ", p.bold("you>"))
		}
		var text string
		select {
		case line, open := <-lines:
			text, eof = strings.TrimSpace(line), !open
		case <-ctx.Done(): // Ctrl-C: stop reading, let capture finish
		}
		if eof || ctx.Err() != nil || text == "/exit" {
			return eof, nil
		}
		if text == "" {
			continue
		}
		reply, err := c.Send(ctx, text)
		if err != nil {
			return eof, err
		}
		a.printReply(reply)
	}
}

// printReply prints what a chat turn recalled, then the reply.
func (a *app) printReply(reply *workspace.ChatReply) {
	p := a.out
	for i, r := range reply.Recalled.Memories {
		m := r.Memory.Meta
		p.println(p.dim(fmt.Sprintf("  recalled [%d] %s/%s: %s", i+1, m.Scope, m.Category, termtext.Clip(r.Memory.Title(), titleWidth))))
	}
	if n := reply.Recalled.HeldDropped; n > 0 {
		p.println(p.dim("  " + heldNote(n, "")))
	}
	p.printf("%s %s\n", p.bold("assistant>"), reply.Text)
}

// readLines sends the lines of r on the channel it returns, which is
// closed at the end of input, so that a reader can stop waiting when ctx
// ends; the function reports the read error, once the channel is closed.
func readLines(ctx context.Context, r io.Reader) (<-chan string, func() error) {
	lines := make(chan string)
	var err error
	go func() {
		defer close(lines)
		in := bufio.NewScanner(r)
		in.Buffer(make([]byte, 64*1024), 1<<20)
		for in.Scan() {
			select {
			case lines <- in.Text():
			case <-ctx.Done():
				return
			}
		}
		err = in.Err()
	}()
	return lines, func() error { return err }
}
