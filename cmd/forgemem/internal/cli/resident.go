package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/resident"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/workspace"
	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memretrieve"
	"github.com/spf13/cobra"
)

// defaultServerIdle is how long a recall server a hook starts waits for
// the next prompt before it exits.
const defaultServerIdle = 30 * time.Minute

func (a *app) recallServerCommand() *cobra.Command {
	var idle time.Duration
	var status, stop, asJSON bool
	cmd := &cobra.Command{
		Use:   "recall-server",
		Short: "Keep recall warm for Claude Code's prompt hook (hooks start it by themselves)",
		Long: `Keep this place's retrieval index in memory and answer the prompts of Claude Code's
UserPromptSubmit hook (forgemem hook claude-code) over a socket in a folder private to you,
so that a prompt costs a search rather than reading every memory and building the index
again. The hook starts it when none is running, and recalls by itself meanwhile; it exits
when no prompt came for --idle. Its index follows every change of the memory folders — by
forgemem, the capture worker, an editor or git — before it answers, so that a prompt
always sees what was written before it. One runs per place and configuration: a change of
settings or of the binary starts another, and the old one exits after its --idle. Outside a
repository the place is your user memory folder alone. It runs on Linux only.

  forgemem recall-server --status   says whether one is running (or starting) here — when none
                                    is, whether the next prompt's hook starts one, or why it
                                    starts none (retrieval off, a folder not private) — and which
                                    servers of another binary or other settings still run for
                                    these memory folders, or may: those with no record of what
                                    they serve; being asked does not keep a server running. One
                                    that holds its folder but does not answer within 5 seconds
                                    (stopped, stuck) is "not answering", with the kill that
                                    ends it
  forgemem recall-server --stop     asks them to exit, and waits until they have (5 seconds at
                                    most in all); one still running, or not answering, is named
                                    with its pid, and the exit status is 1. One with no record of
                                    what it serves, which may serve another repository, is left
                                    running, named with its pid and the kill that ends it`,
		Args: noArgs(""),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if status && stop {
				return usagef("give --status or --stop, not both")
			}
			if asJSON && !status {
				return usagef("give --json with --status only: --stop and the server itself print no JSON")
			}
			if idle <= 0 {
				return usagef("--idle: %s is not a positive duration; give one such as 30s or 10m", idle)
			}
			switch {
			case status:
				return a.recallServerStatus(cmd.Context(), asJSON)
			case stop:
				return a.recallServerStop(cmd.Context())
			}
			return a.runRecallServer(cmd.Context(), idle)
		},
	}
	cmd.Flags().DurationVar(&idle, "idle", defaultServerIdle, "how long to wait for the next prompt before exiting")
	cmd.Flags().BoolVar(&status, "status", false, "say which recall servers are running here, and exit")
	cmd.Flags().BoolVar(&stop, "stop", false, "ask the recall servers running here to exit")
	cmd.Flags().BoolVar(&asJSON, "json", false, "with --status, print one JSON document")
	return cmd
}

// residentPlace returns the place of this place's recall server (its key
// and what the key is made of) and its folder.
func (a *app) residentPlace() (place resident.Place, dir string, err error) {
	if !resident.Supported() {
		return place, "", errors.New("a recall server runs on Linux only")
	}
	if a.env.Executable == "" {
		return place, "", errors.New("the forgemem binary is unknown")
	}
	if err := a.loadSettings(); err != nil {
		return place, "", err
	}
	base, err := resident.PrivateDir(a.env.Settings.Env)
	if err != nil {
		return place, "", err
	}
	place, err = resident.PlaceOf(base, a.settings, a.env.Settings.Env, a.env.Executable)
	if err != nil {
		return place, "", err
	}
	dir, err = resident.ServerDir(base, place.Key)
	return place, dir, err
}

// runRecallServer serves this place's recalls until idle passes with no
// prompt.
func (a *app) runRecallServer(ctx context.Context, idle time.Duration) error {
	place, dir, err := a.residentPlace()
	if err != nil {
		return err
	}
	if !a.settings.Enabled || a.settings.RetrievalOff() != "" {
		return nil // nothing to recall here
	}
	lock, err := resident.TakeLock(dir)
	if errors.Is(err, resident.ErrRunning) {
		return nil // another one serves this place
	}
	if err != nil {
		return err
	}
	defer lock.Release()
	if err := resident.CheckListen(dir); err != nil {
		return fmt.Errorf("no socket can be made in %s, so no recall server can run there; set XDG_RUNTIME_DIR or TMPDIR to a folder of a local file system: %w", dir, err)
	}
	// What it serves, for --status and --stop run with another binary or
	// other settings; without it the server still answers its own key.
	place.PID, place.WorkDir = os.Getpid(), a.workDir()
	if err := resident.WritePlace(dir, place); err != nil {
		eprintf(a.env.Stderr, "%s forgemem recall-server: %v; --status and --stop of another binary or other settings will not see this server\n", time.Now().UTC().Format(time.RFC3339), err)
	}
	a.pruneServerFolders(dir, place.Key)
	a.liveDir = dir
	ws, err := a.workspace()
	if err != nil {
		return err
	}
	// The lock is released last: once it is free, the server has finished
	// its work (an index build writes its caches into the memory folders),
	// which --stop waits for.
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = ws.Close(cctx)
	}()
	if err := ws.Live(); err != nil {
		return fmt.Errorf("the memory folders cannot be watched, so a recall server could not answer exactly; the hook recalls by itself: %w", err)
	}
	if err := ws.PrepareRecall(ctx); err != nil && !errors.Is(err, workspace.ErrProvider) {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go a.refreshOnChange(ctx, ws, cancel)
	eprintf(a.env.Stderr, "%s forgemem recall-server: pid %d serving %s\n", time.Now().UTC().Format(time.RFC3339), os.Getpid(), a.workDir())
	srv := &recallServer{ws: ws}
	return resident.Serve(ctx, dir, place.Key, idle, func(rctx context.Context, req *resident.Request) *resident.Response {
		resp := srv.answer(rctx, req)
		if ws.Live() != nil {
			cancel() // no longer exact at low cost: the hooks recall by themselves
		}
		return resp
	})
}

// serverFolderTTL is how long a recall server's folder may stay unused
// before a server starting for another key removes it.
const serverFolderTTL = 7 * 24 * time.Hour

// pruneServerFolders removes, beside this server's folder dir, the folders
// of other keys no server used for serverFolderTTL: every new binary,
// setting or memory folder makes a new key, and a key's folder outlives its
// server. What it did, or why it could not, goes to the server's log.
func (a *app) pruneServerFolders(dir, key string) {
	n, err := resident.Prune(filepath.Dir(dir), key, serverFolderTTL)
	if n > 0 {
		eprintf(a.env.Stderr, "%s forgemem recall-server: removed %s no server used for %s\n",
			time.Now().UTC().Format(time.RFC3339), plural(n, "folder", "folders"), plural(int(serverFolderTTL.Hours()/24), "day", "days"))
	}
	if err != nil {
		eprintf(a.env.Stderr, "%s forgemem recall-server: unused folders not removed: %v\n", time.Now().UTC().Format(time.RFC3339), err)
	}
}

// recallServer answers the requests of the hooks.
type recallServer struct {
	ws       *workspace.Workspace
	answered atomic.Uint64
}

// settleAfterRemovals is how long memory files must stop going away
// before the recall server rebuilds for their removal.
const settleAfterRemovals = 250 * time.Millisecond

// refreshOnChange brings the index up to date as soon as a memory file
// changes, so that the next prompt finds the work done. When the changes
// are only files going away — rm -r of the memory folder, a purge — it
// waits until they stop for settleAfterRemovals: a rebuild in the middle
// of a folder's removal would write into the folder being removed (and
// make rm fail on a folder no longer empty), and a prompt meanwhile
// brings the index up to date by itself. It stops the server (stop) when
// the folders can no longer be watched.
func (a *app) refreshOnChange(ctx context.Context, ws *workspace.Workspace, stop func()) {
	changed := ws.Changed()
	for {
		select {
		case <-ctx.Done():
			return
		case <-changed:
			if ws.Shrinking() && !settle(ctx, changed, settleAfterRemovals) {
				return
			}
			_ = ws.PrepareRecall(ctx)
			if ws.Live() != nil {
				stop() // a watched folder went away: the hooks recall by themselves
				return
			}
		}
	}
}

// settle waits until changed has had no value for d, and reports whether
// it did (false: ctx ended first).
func settle(ctx context.Context, changed <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-changed:
			t.Reset(d)
		case <-t.C:
			return true
		}
	}
}

// answer answers one request of a hook.
func (s *recallServer) answer(ctx context.Context, req *resident.Request) *resident.Response {
	if req.Op == resident.OpPing {
		return &resident.Response{Status: resident.StatusOK, PID: os.Getpid(), Answered: s.answered.Load()}
	}
	window := make([]memcore.Message, len(req.Window))
	for i, m := range req.Window {
		window[i] = memcore.Message{Role: memcore.Role(m.Role), Content: m.Content}
	}
	// Anchors are checked as a new process checks them: the checker's
	// caches would otherwise trust a file rewritten in place.
	s.ws.RenewAnchors()
	res, err := s.ws.Recall(ctx, window)
	s.answered.Add(1)
	resp := responseOf(res, err)
	if resp.Status != resident.StatusDisabled {
		// What the live view of the folders skips, as of the recall's
		// update of it: nothing is read again for it.
		resp.Unreadable = unreadableOf(s.ws.SkippedFiles())
	}
	return resp
}

// responseOf is the response carrying Recall's result and error.
func responseOf(res *memretrieve.Result, err error) *resident.Response {
	resp := &resident.Response{Status: resident.StatusOK}
	switch {
	case errors.Is(err, workspace.ErrDisabled):
		resp.Status = resident.StatusDisabled
	case errors.Is(err, workspace.ErrPartial):
		resp.Status = resident.StatusPartial
	case err != nil:
		resp.Status = resident.StatusFailed
	}
	if err != nil {
		resp.Message = err.Error()
	}
	if res == nil {
		return resp
	}
	resp.Injection, resp.Omitted, resp.Held = res.Injection, res.Omitted, res.HeldDropped
	resp.Skipped, resp.VectorSkipped = res.Skipped.String(), res.VectorSkipped.String()
	for _, m := range res.Memories {
		resp.Memories = append(resp.Memories, resident.Recalled{ID: m.Memory.Meta.ID, Score: m.Score})
	}
	return resp
}

// remoteError is an error a recall server reported: its text as the
// server had it, matching the workspace's error of the same kind.
type remoteError struct {
	msg  string
	kind error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.kind }

// errorOf is the error a response carries, nil for StatusOK.
func errorOf(resp *resident.Response) error {
	switch resp.Status {
	case resident.StatusOK:
		return nil
	case resident.StatusDisabled:
		return &remoteError{resp.Message, workspace.ErrDisabled}
	case resident.StatusPartial:
		return &remoteError{resp.Message, workspace.ErrPartial}
	}
	return &remoteError{resp.Message, nil}
}

// residentAnswer is what asking the recall server gave a prompt.
type residentAnswer struct {
	// asked is true when a server answered; recalled and err are then its
	// recall's (err as Workspace.Recall's).
	asked    bool
	recalled recalled
	err      error
	// start is true when no server runs: the caller recalls by itself and
	// starts one.
	start bool
	// unsafe says why no server may run here: its folder is not private.
	unsafe error
	// silent is set when a server runs but did not answer in time, or
	// failed to: the caller recalls by itself, and says so.
	silent *silentServer
}

// silentServer is a recall server that holds its lock but did not answer a
// prompt: stopped (SIGSTOP), stuck, or failing.
type silentServer struct {
	// pid is the pid it recorded, 0 when unknown.
	pid int
	// within is how long the hook waited for it, and timedOut true when it
	// did not answer within it; err is the failure of the exchange.
	within   time.Duration
	timedOut bool
	err      error
}

// note is what the prompt hook's line says of s: that the prompt recalled
// by itself, and how to end the server.
func (s *silentServer) note() string {
	what := fmt.Sprintf("did not answer within %s", s.within.Round(time.Millisecond))
	if !s.timedOut {
		what = fmt.Sprintf("failed (%v)", s.err)
	}
	if s.pid > 0 {
		return fmt.Sprintf("the recall server (pid %d) %s, so this prompt recalled by itself; if it keeps failing, end it with kill %d", s.pid, what, s.pid)
	}
	return fmt.Sprintf("the recall server %s, so this prompt recalled by itself; if it keeps failing, forgemem recall-server --stop says how to end it", what)
}

// askShare is how long the prompt hook waits for the recall server when
// its work has remaining before its deadline: half of it, or less, so that
// a recall in the hook's own process after a server that did not answer
// still has retrieval (memory.retrieval_timeout) — but never less than a
// quarter of it.
func askShare(remaining, retrieval time.Duration) time.Duration {
	return max(min(remaining/2, remaining-retrieval), remaining/4)
}

// hookServer is the prompt hook's decision: the place and folder of the
// recall server it asks for a prompt's memories, and starts when none runs
// there; or, as the error, why it asks none and starts none here, and
// recalls in its own process: retrieval is off (settings.RetrievalOff:
// memory disabled, no embedding model for the provider, …), or no server
// can run (another system than Linux, the binary unknown, a server folder
// that is not private to the user — an error wrapping
// resident.ErrUnsafeDir — or that cannot be made). recall-server --status
// says what it decides.
func (a *app) hookServer() (place resident.Place, dir string, err error) {
	if err := a.loadSettings(); err != nil {
		return place, "", err
	}
	if off := a.settings.RetrievalOff(); off != "" {
		return place, "", errors.New(off)
	}
	return a.residentPlace()
}

// askResident asks the recall server of place, in the folder dir (see
// hookServer), for the memories of window.
func (a *app) askResident(ctx context.Context, place resident.Place, dir string, window []memcore.Message) residentAnswer {
	req := &resident.Request{Op: resident.OpRecall, Key: place.Key, Window: make([]resident.Message, len(window))}
	for i, m := range window {
		req.Window[i] = resident.Message{Role: string(m.Role), Content: m.Content}
	}
	// A server that does not answer (stopped, stuck) is waited for a share
	// of the hook's time only: the prompt then recalls here.
	askCtx, within := ctx, time.Duration(0)
	if dl, ok := ctx.Deadline(); ok {
		within = askShare(time.Until(dl), a.settings.RetrievalTimeout)
		var cancel context.CancelFunc
		askCtx, cancel = context.WithTimeout(ctx, within)
		defer cancel()
		req.BudgetMillis = within.Milliseconds()
	}
	resp, err := resident.Ask(askCtx, dir, req)
	switch {
	case errors.Is(err, resident.ErrNotRunning):
		return residentAnswer{start: !resident.Running(dir)}
	case err != nil && ctx.Err() != nil:
		return residentAnswer{} // the hook's own time is over: it says so
	case err != nil && !resident.Running(dir):
		return residentAnswer{start: true} // it left while asked
	case err != nil:
		timedOut := askCtx.Err() != nil || errors.Is(err, os.ErrDeadlineExceeded)
		return residentAnswer{silent: &silentServer{pid: recordedPID(dir, place.Key), within: within, timedOut: timedOut, err: err}}
	case resp.Status == resident.StatusRefused:
		return residentAnswer{}
	}
	return residentAnswer{asked: true, recalled: recalled{injection: resp.Injection, held: resp.Held, unreadable: resp.Unreadable}, err: errorOf(resp)}
}

// startResident starts this place's recall server, in its folder dir
// (see hookServer), which answers the next prompts.
func (a *app) startResident(dir string, idle time.Duration) error {
	args := append([]string{"recall-server", "--idle", idle.String()}, a.globalArgs()...)
	return resident.StartDetached(dir, a.env.Executable, args, a.workDir(), a.env.Settings.Env)
}

// askLimit bounds the time a recall server may take to answer --status or
// --stop.
const askLimit = 5 * time.Second

// ask asks the recall server of key in the folder dir, within askLimit.
func ask(ctx context.Context, dir, key, op string) (*resident.Response, error) {
	ctx, cancel := context.WithTimeout(ctx, askLimit)
	defer cancel()
	return resident.Ask(ctx, dir, &resident.Request{Op: op, Key: key})
}

// The states of a recall server --status lists.
const (
	// stateRunning: it answers, or its socket is there.
	stateRunning = "running"
	// stateStarting: it holds its folder's lock, and has no socket yet: it
	// is building its index, and answers nothing before it has.
	stateStarting = "starting"
	// stateStopped: no server holds the folder's lock.
	stateStopped = "stopped"
	// stateUnresponsive: it holds its folder's lock and its socket is
	// there, but it did not answer within askLimit: stopped (SIGSTOP) or
	// stuck. Only ending its process clears it.
	stateUnresponsive = "unresponsive"
)

// otherServer is a recall server of another key (another binary, other
// settings) that serves this place's memory folders — or may: one that
// recorded nothing of what it serves.
type otherServer struct {
	// State is stateRunning, stateStarting or stateUnresponsive.
	State string `json:"state"`
	// PID is its process id, as it answered or recorded it, or, for one
	// with no record, as the system names the holder of its folder's lock
	// (resident.LockHolder); left out when unknown.
	PID int `json:"pid,omitempty"`
	// Answered counts the prompts it answered; left out when it was not
	// asked: starting, or of a binary that would count the question as use
	// (resident.Place.PingKeepsAlive), or with no record.
	Answered *uint64 `json:"answered,omitempty"`
	Folder   string  `json:"folder"`
	// Recorded is false for a server with no record of what it serves
	// (started by a binary that wrote none, or not recorded yet):
	// Executable, WorkDir and Differs are then unknown.
	Recorded bool `json:"recorded"`
	// Executable and WorkDir are the binary that runs it and the folder it
	// was started in, as it recorded them.
	Executable string `json:"executable,omitempty"`
	WorkDir    string `json:"work_dir,omitempty"`
	// Differs names what differs from this command's: "binary",
	// "settings", "user_dir"; empty when only the making of the key does,
	// null when unknown.
	Differs []string `json:"differs"`
	// key is its key; why says what differs to a person.
	key, why string
	// oldBinary is set for a server of a binary whose ping counts as use.
	oldBinary bool
}

// otherServerOf is what the record of o tells of its server; place is
// this command's.
func otherServerOf(place resident.Place, o resident.Other) otherServer {
	s := otherServer{Folder: o.Dir, Recorded: o.Recorded, PID: o.Place.PID, key: o.Place.Key, oldBinary: o.Place.PingKeepsAlive()}
	if o.Recorded {
		differs := place.Differs(o.Place)
		s.Executable, s.WorkDir, s.Differs, s.why = o.Place.Executable, o.Place.WorkDir, append([]string{}, differs...), whyOther(place, o.Place, differs)
	}
	return s
}

// about is what --stop says of s beside its pid.
func (s otherServer) about() []string {
	if !s.Recorded {
		return []string{"no record of what it serves"}
	}
	return []string{s.why}
}

// serverName is what --stop calls a recall server: "recall server (pid
// N)", "other recall server (pid N; another binary: …)"; a pid of 0 is
// unknown, and an empty about is left out.
func serverName(other bool, pid int, about ...string) string {
	name := "recall server"
	if other {
		name = "other recall server"
	}
	var parts []string
	if pid > 0 {
		parts = append(parts, fmt.Sprintf("pid %d", pid))
	}
	for _, a := range about {
		if a != "" {
			parts = append(parts, a)
		}
	}
	if len(parts) == 0 {
		return name
	}
	return name + " (" + strings.Join(parts, "; ") + ")"
}

// sentence is s in --status's text.
func (s otherServer) sentence() string {
	why := prefixed("; ", s.why)
	switch {
	case !s.Recorded && s.State == stateStarting:
		return fmt.Sprintf("Another recall server (%sno record of what it serves yet) is starting, in %s: --stop leaves it until it records what it serves; %s.",
			pidOf(s.PID, "; "), s.Folder, endAdvice(s.PID, s.Folder))
	case !s.Recorded:
		return fmt.Sprintf("Another recall server (%sno record of what it serves) is running, in %s: it may serve another repository, so --stop leaves it; %s.",
			pidOf(s.PID, "; "), s.Folder, endAdvice(s.PID, s.Folder))
	case s.State == stateStarting:
		return fmt.Sprintf("Another recall server is starting for these memory folders (pid %d, building its index%s), in %s.", s.PID, why, s.Folder)
	case s.State == stateUnresponsive:
		return fmt.Sprintf("Another recall server serves these memory folders but is not answering (%sstopped or stuck%s), in %s: %s.", pidOf(s.PID, ", "), why, s.Folder, killAdvice(s.PID, s.Folder))
	case s.Answered == nil:
		return fmt.Sprintf("Another recall server also serves these memory folders (pid %d; not asked how it is, since its older forgemem would count that as a prompt%s), in %s.",
			s.PID, why, s.Folder)
	}
	return fmt.Sprintf("Another recall server also serves these memory folders (pid %d, %s answered%s), in %s.", s.PID, plural(int(*s.Answered), "prompt", "prompts"), why, s.Folder)
}

// otherServers returns the recall servers of other keys, running or
// starting, that serve the memory folders of place (found in the private
// folder base), or may: those with no record of what they serve. It asks
// a running one how it is (OpPing) unless the question would keep it
// running — a server of an older binary, or with no record — and says
// then what its folder shows (resident.Look). A server that has exited is
// left out; another failure is in the error, after the others were looked
// at.
func (a *app) otherServers(ctx context.Context, base string, place resident.Place) ([]otherServer, error) {
	found, err := resident.Others(base, place)
	if err != nil {
		return nil, err
	}
	out := []otherServer{}
	var errs []error
	for _, o := range found {
		s := otherServerOf(place, o)
		if o.Recorded && !s.oldBinary {
			resp, err := ask(ctx, o.Dir, s.key, resident.OpPing)
			switch {
			case err == nil && resp.Status == resident.StatusOK:
				s.State, s.PID, s.Answered = stateRunning, resp.PID, &resp.Answered
				out = append(out, s)
				continue
			case err == nil:
				errs = append(errs, fmt.Errorf("the recall server in %s: %s: %s", o.Dir, resp.Status, resp.Message))
				continue
			case !errors.Is(err, resident.ErrNotRunning):
				if state, lerr := lookAt(o.Dir); lerr == nil && state == stateRunning {
					s.State = stateUnresponsive // it holds its folder, yet did not answer
					out = append(out, s)
				} else {
					errs = append(errs, fmt.Errorf("the recall server in %s: %w", o.Dir, err))
				}
				continue
			}
		}
		state, err := lookAt(o.Dir)
		switch {
		case err != nil:
			errs = append(errs, err)
		case state != stateStopped:
			s.State = state
			if !o.Recorded {
				s.PID = resident.LockHolder(o.Dir)
			}
			out = append(out, s)
		}
	}
	return out, errors.Join(errs...)
}

// lookAt is the state of the server of the folder dir, as the folder shows
// it (resident.Look).
func lookAt(dir string) (string, error) {
	st, err := resident.Look(dir)
	switch {
	case err != nil:
		return "", fmt.Errorf("the recall server folder %s: %w", dir, err)
	case st == resident.Starting:
		return stateStarting, nil
	case st == resident.Listening:
		return stateRunning, nil
	}
	return stateStopped, nil
}

// whyOther says why the server of place o is not the one of place p, in
// what differs: "" when only the making of the key does.
func whyOther(p, o resident.Place, differs []string) string {
	var why []string
	for _, d := range differs {
		switch {
		case d == resident.DiffBinary && o.Executable == p.Executable:
			why = append(why, "another build of "+o.Executable)
		case d == resident.DiffBinary:
			why = append(why, "another binary: "+o.Executable)
		case d == resident.DiffSettings:
			why = append(why, "other settings")
		case d == resident.DiffUserDir:
			why = append(why, "another user memory folder: "+o.UserDir)
		}
	}
	return strings.Join(why, "; ")
}

// prefixed is s after prefix, "" when s is.
func prefixed(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}

// killAdvice says how to end a recall server that does not answer, of
// pid (0: unknown) in the folder dir.
func killAdvice(pid int, dir string) string {
	return endAdvice(pid, dir) + ", and the next prompt's hook starts another"
}

// endAdvice says how to end a recall server by hand, of pid (0: unknown)
// in the folder dir.
func endAdvice(pid int, dir string) string {
	if pid > 0 {
		return fmt.Sprintf("kill %d ends it", pid)
	}
	return fmt.Sprintf("end the process that holds %s (fuser %s names it)", filepath.Join(dir, "lock"), filepath.Join(dir, "lock"))
}

// pidOf is "pid N" and sep, "" when pid is 0 (unknown).
func pidOf(pid int, sep string) string {
	if pid <= 0 {
		return ""
	}
	return fmt.Sprintf("pid %d%s", pid, sep)
}

// recordedPID is the pid the server of key recorded in its folder dir, 0
// when it recorded none.
func recordedPID(dir, key string) int {
	p, err := resident.ReadPlace(dir)
	if err != nil || p.Key != key {
		return 0
	}
	return p.PID
}

// recallServerStatus says whether this place's recall server runs, and
// which recall servers of other keys serve its memory folders, or may.
// Asking a server how it is does not count as use: it still exits when
// idle.
func (a *app) recallServerStatus(ctx context.Context, asJSON bool) error {
	st := struct {
		// State is stateRunning (it answers), stateStarting,
		// stateUnresponsive or stateStopped; Running is true when it
		// answers.
		State   string `json:"state"`
		Running bool   `json:"running"`
		PID     int    `json:"pid,omitempty"`
		// Answered counts the prompts it answered; left out when it did
		// not answer (stopped, starting, not answering).
		Answered *uint64 `json:"answered,omitempty"`
		Folder   string  `json:"folder,omitempty"`
		// NoStart says why the prompt hook starts no recall server here,
		// and asks none (hookServer); left out when it starts one as soon
		// as none runs.
		NoStart string `json:"no_start,omitempty"`
		// RepoDir and UserDir are the memory folders of this place:
		// RepoDir is left out outside a repository, where the place is the
		// user memory folder alone.
		RepoDir string `json:"repo_dir,omitempty"`
		UserDir string `json:"user_dir,omitempty"`
		Reason  string `json:"reason,omitempty"`
		// Others are the servers of other keys serving this place's
		// memory folders, or that may.
		Others []otherServer `json:"others"`
	}{State: stateStopped, Others: []otherServer{}}
	place, dir, err := a.residentPlace()
	if err == nil {
		st.Folder, st.RepoDir, st.UserDir = dir, place.RepoDir, place.UserDir
		var resp *resident.Response
		resp, err = ask(ctx, dir, place.Key, resident.OpPing)
		switch {
		case err == nil && resp.Status == resident.StatusOK:
			st.State, st.Running, st.PID, st.Answered = stateRunning, true, resp.PID, &resp.Answered
		case err != nil && !errors.Is(err, resident.ErrNotRunning):
			// It holds its folder, yet did not answer: stopped or stuck.
			if state, lerr := lookAt(dir); lerr == nil && state == stateRunning {
				st.State, st.PID = stateUnresponsive, recordedPID(dir, place.Key)
				err = fmt.Errorf("it did not answer within %s: %w", askLimit, err)
			}
		case errors.Is(err, resident.ErrNotRunning):
			// Starting, or none: the folder says.
			var state string
			if state, err = lookAt(dir); state == stateStarting || state == stateRunning {
				st.State, st.PID = stateStarting, recordedPID(dir, place.Key)
			}
		}
		others, oerr := a.otherServers(ctx, filepath.Dir(dir), place)
		st.Others = append(st.Others, others...)
		err = errors.Join(err, oerr)
	}
	if err != nil {
		st.Reason = err.Error()
	}
	if _, _, off := a.hookServer(); off != nil {
		st.NoStart = off.Error()
	}
	if asJSON {
		return a.out.json(st)
	}
	if st.Folder != "" && st.RepoDir == "" {
		a.out.printf("Outside a repository, this place is your user memory folder alone (%s): its recall servers are those started outside any repository; "+
			"a repository's are listed by --status run in it.\n", place.UserDir)
	}
	switch {
	case st.Running:
		a.out.printf("A recall server is running here (pid %d, %s answered), in %s.\n", st.PID, plural(int(*st.Answered), "prompt", "prompts"), st.Folder)
	case st.State == stateUnresponsive:
		a.out.printf("A recall server is here but not answering (%sstopped or stuck: it did not answer within %s), in %s; each prompt waits for it, then recalls by itself: %s.\n",
			pidOf(st.PID, "; "), askLimit, st.Folder, killAdvice(st.PID, st.Folder))
	case st.State == stateStarting && st.PID > 0:
		a.out.printf("A recall server is starting here (pid %d, building its index), in %s.\n", st.PID, st.Folder)
	case st.State == stateStarting:
		a.out.printf("A recall server is starting here (building its index), in %s.\n", st.Folder)
	case len(st.Others) > 0 && st.NoStart != "":
		a.out.printf("No recall server of this binary and these settings is running here, and the prompt hook starts none: %s.\n", st.NoStart)
	case len(st.Others) > 0:
		a.out.println("No recall server of this binary and these settings is running here; the next prompt's hook starts one.")
	case st.NoStart != "":
		a.out.printf("No recall server is running here, and the prompt hook starts none: %s.\n", st.NoStart)
	default:
		a.out.println("No recall server is running here; the next prompt's hook starts one.")
	}
	recorded := 0
	for _, o := range st.Others {
		a.out.println(o.sentence())
		if o.Recorded {
			recorded++
		}
	}
	switch {
	case recorded > 0 && recorded == len(st.Others):
		a.out.println("forgemem recall-server --stop stops them all.")
	case recorded > 0:
		a.out.println("forgemem recall-server --stop stops those that recorded what they serve.")
	}
	return nil
}

// stopWait bounds the time recall-server --stop waits, for all the
// servers it asked to stop together, until each has exited, and for the
// servers still starting to listen, so that it can ask them.
const stopWait = 5 * time.Second

// stopping is a recall server --stop asks to exit: its folder and key,
// its pid (0 while unknown), what it is to a person, and whether it was
// still starting (not listening) when asked.
type stopping struct {
	dir, key string
	pid      int
	other    bool
	about    []string
	starting bool
}

func (t stopping) name() string { return serverName(t.other, t.pid, t.about...) }

// recallServerStop asks this place's recall server to exit, and the
// recall servers of other keys that recorded serving its memory folders,
// then waits, at most stopWait in all, until each has exited; a server
// still starting is asked as soon as it listens. A server still running
// then is an error naming its pid. A server with no record of what it
// serves, which --status lists as one that may serve this place, is left
// running: it may serve another repository — outside a repository, any
// repository's — and --stop says so, with the kill that ends it.
func (a *app) recallServerStop(ctx context.Context) error {
	place, dir, err := a.residentPlace()
	if err != nil {
		return err
	}
	if place.RepoDir == "" {
		a.out.printf("Outside a repository, --stop stops the recall servers of your user memory folder alone (%s), those started outside any repository; "+
			"a repository's are stopped by --stop run in it.\n", place.UserDir)
	}
	targets := []stopping{{dir: dir, key: place.Key, pid: recordedPID(dir, place.Key)}}
	found, err := resident.Others(filepath.Dir(dir), place)
	errs := []error{err}
	var left []string
	for _, o := range found {
		s := otherServerOf(place, o)
		if o.Recorded {
			targets = append(targets, stopping{dir: o.Dir, key: s.key, pid: s.PID, other: true, about: s.about()})
			continue
		}
		switch state, err := lookAt(o.Dir); {
		case err != nil:
			errs = append(errs, err)
		case state != stateStopped:
			pid, how := resident.LockHolder(o.Dir), "running"
			if state == stateStarting {
				how = "still starting"
			}
			left = append(left, fmt.Sprintf("The %s was left %s, in %s: --stop cannot tell whether it serves this place or another repository; %s.",
				serverName(true, pid, s.about()...), how, o.Dir, endAdvice(pid, o.Dir)))
		}
	}
	defer func() {
		for _, l := range left {
			a.out.println(l)
		}
	}()
	var waiting []stopping
	for _, t := range targets {
		resp, err := ask(ctx, t.dir, t.key, resident.OpStop)
		switch {
		case err == nil && resp.Status == resident.StatusOK:
			t.pid = resp.PID
			waiting = append(waiting, t)
		case err == nil:
			errs = append(errs, fmt.Errorf("the recall server in %s: %s: %s", t.dir, resp.Status, resp.Message))
		case !errors.Is(err, resident.ErrNotRunning):
			if state, lerr := lookAt(t.dir); lerr == nil && state == stateRunning {
				// It holds its folder, yet did not answer: stopped or stuck.
				errs = append(errs, fmt.Errorf("the %s is not answering (stopped or stuck: it did not answer within %s), in %s, so it could not be asked to stop; %s",
					t.name(), askLimit, t.dir, killAdvice(t.pid, t.dir)))
			} else {
				errs = append(errs, fmt.Errorf("the recall server in %s: %w", t.dir, err))
			}
		default: // no socket, or nobody on it: starting, or gone
			state, err := lookAt(t.dir)
			switch {
			case err != nil:
				errs = append(errs, err)
			case state != stateStopped:
				t.starting = true
				waiting = append(waiting, t)
			}
		}
	}
	if len(waiting) == 0 && errors.Join(errs...) == nil {
		if len(left) == 0 {
			a.out.println("No recall server is running here.")
		} else {
			a.out.println("No recall server known to serve this place is running.")
		}
		return nil
	}
	// Each is waited for at once, so that one slow to exit or to listen
	// leaves the others their time.
	deadline := time.Now().Add(stopWait)
	wctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	werrs, late := make([]error, len(waiting)), make([]bool, len(waiting))
	var wg sync.WaitGroup
	for i := range waiting {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if waiting[i].starting {
				werrs[i] = stopWhenListening(wctx, &waiting[i])
			} else {
				werrs[i] = resident.WaitExited(wctx, waiting[i].dir)
			}
			late[i] = werrs[i] != nil && !time.Now().Before(deadline)
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	for i, t := range waiting {
		switch {
		case werrs[i] == nil:
			a.out.printf("The %s has exited.\n", t.name())
		case late[i] && t.starting:
			kill := ""
			if t.pid > 0 {
				kill = fmt.Sprintf(", or end it with kill %d", t.pid)
			}
			errs = append(errs, fmt.Errorf("the %s is still building its index, in %s, and could not be asked to stop within %s; "+
				"run forgemem recall-server --stop again once it has started%s", t.name(), t.dir, stopWait, kill))
		case late[i]:
			errs = append(errs, fmt.Errorf("the %s has not exited within %s of being asked to stop (it may be finishing a prompt's answer); "+
				"forgemem recall-server --status says whether it still runs, and kill %d ends it", t.name(), stopWait, t.pid))
		case t.starting:
			errs = append(errs, fmt.Errorf("the %s, starting in %s: %w", t.name(), t.dir, werrs[i]))
		default:
			errs = append(errs, fmt.Errorf("the %s was asked to stop; whether it has exited is unknown: %w", t.name(), werrs[i]))
		}
	}
	return errors.Join(errs...)
}

// stopPoll is how often --stop asks a starting server to stop until it
// listens.
const stopPoll = 10 * time.Millisecond

// stopWhenListening asks the recall server t, still starting, to stop as
// soon as it listens, and waits until it has exited — or has exited by
// itself first — or ctx ends. It records in t the pid the server answered
// with.
func stopWhenListening(ctx context.Context, t *stopping) error {
	tick := time.NewTicker(stopPoll)
	defer tick.Stop()
	for {
		resp, err := ask(ctx, t.dir, t.key, resident.OpStop)
		switch {
		case err == nil && resp.Status == resident.StatusOK:
			t.pid = resp.PID
			return resident.WaitExited(ctx, t.dir)
		case err == nil:
			return fmt.Errorf("%s: %s", resp.Status, resp.Message)
		case !errors.Is(err, resident.ErrNotRunning):
			return err
		}
		if st, err := resident.Look(t.dir); err != nil || st == resident.Stopped {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("resident: %w", ctx.Err())
		case <-tick.C:
		}
	}
}
