package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
settings or of the binary starts another, and the old one exits after its --idle. It runs
on Linux only.

  forgemem recall-server --status   says whether one is running here, and which servers of
                                    another binary or other settings still run for these
                                    memory folders
  forgemem recall-server --stop     asks them all to exit, and waits until they have (5 seconds
                                    at most in all); one still running is named with its pid,
                                    and the exit status is 1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if status && stop {
				return usagef("give --status or --stop, not both")
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
	place, err = resident.PlaceOf(a.settings, a.env.Settings.Env, a.env.Executable)
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
}

// askResident asks this place's recall server for the memories of window.
func (a *app) askResident(ctx context.Context, window []memcore.Message) residentAnswer {
	place, dir, err := a.residentPlace()
	if err != nil {
		if errors.Is(err, resident.ErrUnsafeDir) {
			return residentAnswer{unsafe: err}
		}
		return residentAnswer{}
	}
	req := &resident.Request{Op: resident.OpRecall, Key: place.Key, Window: make([]resident.Message, len(window))}
	for i, m := range window {
		req.Window[i] = resident.Message{Role: string(m.Role), Content: m.Content}
	}
	if dl, ok := ctx.Deadline(); ok {
		req.BudgetMillis = time.Until(dl).Milliseconds()
	}
	resp, err := resident.Ask(ctx, dir, req)
	switch {
	case errors.Is(err, resident.ErrNotRunning):
		return residentAnswer{start: !resident.Running(dir)}
	case err != nil || resp.Status == resident.StatusRefused:
		return residentAnswer{}
	}
	return residentAnswer{asked: true, recalled: recalled{injection: resp.Injection, held: resp.Held, unreadable: resp.Unreadable}, err: errorOf(resp)}
}

// startResident starts this place's recall server, which answers the
// next prompts.
func (a *app) startResident(idle time.Duration) error {
	_, dir, err := a.residentPlace()
	if err != nil {
		return err
	}
	args := append([]string{"recall-server", "--idle", idle.String()}, a.globalArgs()...)
	return resident.StartDetached(dir, a.env.Executable, args, a.workDir(), a.env.Settings.Env)
}

// askOtherLimit bounds the time a recall server of another key may take
// to answer --status or --stop.
const askOtherLimit = 5 * time.Second

// otherServer is a running recall server of another key (another binary,
// other settings) serving this place's memory folders.
type otherServer struct {
	PID      int    `json:"pid"`
	Answered uint64 `json:"answered"`
	Folder   string `json:"folder"`
	// Executable and WorkDir are the binary that runs it and the folder it
	// was started in, as it recorded them.
	Executable string `json:"executable"`
	WorkDir    string `json:"work_dir,omitempty"`
	// Differs names what differs from this command's: "binary",
	// "settings", "user_dir"; empty when only the making of the key does.
	Differs []string `json:"differs"`
	// why says it to a person.
	why string
}

// otherServers asks, within askOtherLimit each, the recall servers of
// other keys serving the memory folders of place (found in the private
// folder base) with the request op (OpPing or OpStop), and returns those
// that answered. A server that has exited meanwhile is left out; another
// failure is in the error, after the others were asked.
func (a *app) otherServers(ctx context.Context, base string, place resident.Place, op string) ([]otherServer, error) {
	found, err := resident.Others(base, place)
	if err != nil {
		return nil, err
	}
	var out []otherServer
	var errs []error
	for _, o := range found {
		actx, cancel := context.WithTimeout(ctx, askOtherLimit)
		resp, err := resident.Ask(actx, o.Dir, &resident.Request{Op: op, Key: o.Place.Key})
		cancel()
		switch {
		case errors.Is(err, resident.ErrNotRunning):
			continue
		case err != nil:
			errs = append(errs, fmt.Errorf("the recall server in %s: %w", o.Dir, err))
			continue
		case resp.Status != resident.StatusOK:
			errs = append(errs, fmt.Errorf("the recall server in %s: %s: %s", o.Dir, resp.Status, resp.Message))
			continue
		}
		differs := place.Differs(o.Place)
		out = append(out, otherServer{PID: resp.PID, Answered: resp.Answered, Folder: o.Dir, Executable: o.Place.Executable,
			WorkDir: o.Place.WorkDir, Differs: append([]string{}, differs...), why: whyOther(place, o.Place, differs)})
	}
	return out, errors.Join(errs...)
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

// recallServerStatus says whether this place's recall server runs, and
// which recall servers of other keys serve its memory folders.
func (a *app) recallServerStatus(ctx context.Context, asJSON bool) error {
	st := struct {
		Running  bool   `json:"running"`
		PID      int    `json:"pid,omitempty"`
		Answered uint64 `json:"answered"`
		Folder   string `json:"folder,omitempty"`
		Reason   string `json:"reason,omitempty"`
		// Others are the running servers of other keys serving this
		// place's memory folders.
		Others []otherServer `json:"others"`
	}{Others: []otherServer{}}
	place, dir, err := a.residentPlace()
	if err == nil {
		st.Folder = dir
		var resp *resident.Response
		resp, err = resident.Ask(ctx, dir, &resident.Request{Op: resident.OpPing, Key: place.Key})
		if err == nil && resp.Status == resident.StatusOK {
			st.Running, st.PID, st.Answered = true, resp.PID, resp.Answered
		}
		others, oerr := a.otherServers(ctx, filepath.Dir(dir), place, resident.OpPing)
		st.Others = append(st.Others, others...)
		err = errors.Join(err, oerr)
	}
	if err != nil {
		st.Reason = err.Error()
	}
	if asJSON {
		return a.out.json(st)
	}
	switch {
	case st.Running:
		a.out.printf("A recall server is running here (pid %d, %d prompts answered), in %s.\n", st.PID, st.Answered, st.Folder)
	case len(st.Others) > 0:
		a.out.println("No recall server of this binary and these settings is running here; the next prompt's hook starts one.")
	default:
		a.out.println("No recall server is running here; the next prompt's hook starts one.")
	}
	for _, o := range st.Others {
		a.out.printf("Another recall server also serves these memory folders (pid %d, %d prompts answered%s), in %s.\n",
			o.PID, o.Answered, prefixed("; ", o.why), o.Folder)
	}
	if len(st.Others) > 0 {
		a.out.println("forgemem recall-server --stop stops them all.")
	}
	return nil
}

// stopWait bounds the time recall-server --stop waits, for all the
// servers it asked to stop together, until each has exited.
const stopWait = 5 * time.Second

// recallServerStop asks this place's recall server to exit, and the
// recall servers of other keys serving its memory folders, then waits, at
// most stopWait in all, until each has exited. A server that has not is
// an error naming its pid.
func (a *app) recallServerStop(ctx context.Context) error {
	place, dir, err := a.residentPlace()
	if err != nil {
		return err
	}
	// stopping is a server that answered the request to stop: its folder,
	// its pid, and what it is, to a person.
	type stopping struct {
		dir  string
		pid  int
		what string
	}
	var asked []stopping
	resp, err := resident.Ask(ctx, dir, &resident.Request{Op: resident.OpStop, Key: place.Key})
	switch {
	case errors.Is(err, resident.ErrNotRunning):
		err = nil
	case err == nil && resp.Status == resident.StatusOK:
		asked = append(asked, stopping{dir, resp.PID, fmt.Sprintf("recall server (pid %d)", resp.PID)})
	case err == nil:
		err = fmt.Errorf("the recall server in %s: %s: %s", dir, resp.Status, resp.Message)
	}
	others, oerr := a.otherServers(ctx, filepath.Dir(dir), place, resident.OpStop)
	for _, o := range others {
		asked = append(asked, stopping{o.Folder, o.PID, fmt.Sprintf("other recall server (pid %d%s)", o.PID, prefixed("; ", o.why))})
	}
	if len(asked) == 0 && err == nil && oerr == nil {
		a.out.println("No recall server is running here.")
	}
	wctx, cancel := context.WithTimeout(ctx, stopWait)
	defer cancel()
	var errs []error
	for _, s := range asked {
		switch werr := resident.WaitExited(wctx, s.dir); {
		case werr == nil:
			a.out.printf("The %s has exited.\n", s.what)
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(werr, context.DeadlineExceeded):
			errs = append(errs, fmt.Errorf("the %s has not exited within %s of being asked to stop (it may be finishing a prompt's answer); "+
				"forgemem recall-server --status says whether it still runs, and kill %d ends it", s.what, stopWait, s.pid))
		default:
			errs = append(errs, fmt.Errorf("the %s was asked to stop; whether it has exited is unknown: %w", s.what, werr))
		}
	}
	return errors.Join(err, oerr, errors.Join(errs...))
}
