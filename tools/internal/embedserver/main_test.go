package embedserver_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/forgemem/forgemem/tools/internal/embedserver"
)

// startTimeout bounds a server's start: loading the model takes about a
// second on an idle machine, far longer on a busy one.
const startTimeout = 2 * time.Minute

// shared is a server started once for the package's tests and stopped by
// TestMain.
type shared struct {
	name string
	args []string

	baseURL string
	stop    func() error
	err     error
}

var (
	// mainServer runs with the default limits.
	mainServer = &shared{name: "default limits"}
	// smallServer runs with tiny limits, so that the tests can reach them
	// with small requests.
	smallServer = &shared{name: "small limits", args: []string{
		"--max-inputs", "3", "--max-input-chars", "4", "--max-body-bytes", "2048",
	}}
	allShared = []*shared{mainServer, smallServer}
	// startShared starts every shared server at once, when a test first
	// needs one: they load their models side by side.
	startShared sync.Once
)

// url returns the server's base URL, starting the shared servers the first
// time. When it cannot start it skips t, if node is not installed and
// RequireEnv is unset, and fails it otherwise.
func (s *shared) url(t *testing.T) string {
	t.Helper()
	startShared.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
		defer cancel()
		var wg sync.WaitGroup
		for _, srv := range allShared {
			wg.Add(1)
			go func() {
				defer wg.Done()
				srv.baseURL, srv.stop, srv.err = embedserver.Start(ctx, embedserver.Options{Args: srv.args})
			}()
		}
		wg.Wait()
	})
	if s.err != nil {
		skipOrFail(t, s.err)
	}
	return s.baseURL
}

// close stops the server if it was started, and reports whether it exited
// cleanly at the end of its standard input and no longer listens.
func (s *shared) close() error {
	if s.stop == nil {
		return nil
	}
	if err := s.stop(); err != nil {
		return fmt.Errorf("stopping the server with %s: %w", s.name, err)
	}
	u, err := url.Parse(s.baseURL)
	if err != nil {
		return err
	}
	if conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second); err == nil {
		conn.Close()
		return fmt.Errorf("the server with %s must stop listening when stopped; %s still accepts connections", s.name, u.Host)
	}
	return nil
}

// skipOrFail ends t for a server that could not start: a skip when node is
// not installed and RequireEnv is unset, a failure otherwise (a missing
// node_modules is always a failure: node is there, so npm ci can run).
func skipOrFail(t *testing.T, err error) {
	t.Helper()
	if errors.Is(err, embedserver.ErrNodeMissing) && os.Getenv(embedserver.RequireEnv) == "" {
		t.Skipf("%v\n(set %s=1 to make this a failure, as scripts/test does)", err, embedserver.RequireEnv)
	}
	t.Fatalf("the embeddings server must start: %v", err)
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, s := range allShared {
		if err := s.close(); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL:", err)
			code = 1
		}
	}
	os.Exit(code)
}
