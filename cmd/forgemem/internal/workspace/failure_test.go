package workspace_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/fakeopenai"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/workspace"
	"github.com/forgemem/forgemem/memcore"
)

// A recall or a search whose embedder failed is an error wrapping
// ErrProvider and the provider's own error; when the lexical index still
// found memories, they come with it (ErrPartial). With the provider
// back, the same calls answer in full again.
func TestRecallAndSearchSayTheProviderFailed(t *testing.T) {
	c := &classifier{}
	srv, err := fakeopenai.Start(c.reply)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	ws := open(t, "FORGEMEM_PROVIDER=openai", "FORGEMEM_BASE_URL="+srv.BaseURL(), "OPENAI_API_KEY=sk-test",
		"FORGEMEM_CLASSIFIER_MODEL=classifier", "FORGEMEM_EMBEDDING_MODEL=embedder", "FORGEMEM_RETRIEVAL_MODE=identity")
	ctx := context.Background()
	if _, err := ws.Remember(ctx, workspace.RememberInput{Text: "Migrations live in db/migrations.",
		Scope: memcore.ScopeRepo, Category: memcore.CategoryProjectConventions}); err != nil {
		t.Fatal(err)
	}
	window := []memcore.Message{{Role: memcore.RoleUser, Content: "Where do migrations live?"}}
	recall := func() error { _, err := ws.Recall(ctx, window); return err }
	search := func() error { _, err := ws.Search(ctx, "migrations", 5); return err }
	for _, op := range []func() error{recall, search} { // the indexes are built
		if err := op(); err != nil {
			t.Fatal(err)
		}
	}

	srv.FailWith(http.StatusUnauthorized)
	// Words in common with the memory: the lexical index finds it, and the
	// result comes with the embedder's failure.
	res, err := ws.Recall(ctx, window)
	if !errors.Is(err, workspace.ErrPartial) || !errors.Is(err, workspace.ErrProvider) || !errors.Is(err, memcore.ErrUnauthenticated) ||
		res == nil || !strings.Contains(res.Injection, "db/migrations") {
		t.Errorf("Recall with the embedder refusing the key: %v, %v; want the memory found by words, and ErrPartial", res, err)
	}
	found, err := ws.Search(ctx, "migrations", 5)
	if !errors.Is(err, workspace.ErrPartial) || !errors.Is(err, memcore.ErrUnauthenticated) || found == nil || len(found.Hits) != 1 {
		t.Errorf("Search with the embedder refusing the key: %+v, %v; want the memory found by words, and ErrPartial", found, err)
	}
	// No word in common: nothing found, and the failure is the error.
	res, err = ws.Recall(ctx, []memcore.Message{{Role: memcore.RoleUser, Content: "Which colour is the logo?"}})
	if errors.Is(err, workspace.ErrPartial) || !errors.Is(err, workspace.ErrProvider) || !errors.Is(err, memcore.ErrUnauthenticated) || res != nil {
		t.Errorf("Recall of nothing with the embedder refusing the key: %v, %v; want ErrProvider alone", res, err)
	}
	if _, err := ws.Search(ctx, "logo colour", 5); errors.Is(err, workspace.ErrPartial) || !errors.Is(err, workspace.ErrProvider) {
		t.Errorf("Search of nothing with the embedder refusing the key: %v; want ErrProvider alone", err)
	}
	srv.FailWith(0)
	for name, op := range map[string]func() error{"Recall": recall, "Search": search} {
		if err := op(); err != nil {
			t.Errorf("%s with the provider back: %v", name, err)
		}
	}
}

// Recalls and searches run at once on one workspace (an MCP server's
// calls) each report their own outcome: a search whose text cannot be
// embedded fails without failing the recalls that run beside it and find
// nothing relevant.
func TestConcurrentCallsReportTheirOwnFailures(t *testing.T) {
	const poison = "POISON"
	srv, err := fakeopenai.Start((&classifier{}).reply)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	target, err := url.Parse(srv.BaseURL())
	if err != nil {
		t.Fatal(err)
	}
	// The provider, failing the embedding of the poisoned text only.
	upstream := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if bytes.Contains(body, []byte(poison)) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":{"message":"cannot embed this","type":"invalid_request_error","code":null}}`))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		upstream.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	// A minimum score no search hit reaches: the recalls find nothing, and
	// that is no failure.
	ws := open(t, "FORGEMEM_PROVIDER=openai", "FORGEMEM_BASE_URL="+proxy.URL+"/v1", "OPENAI_API_KEY=sk-test",
		"FORGEMEM_CLASSIFIER_MODEL=classifier", "FORGEMEM_EMBEDDING_MODEL=embedder", "FORGEMEM_RETRIEVAL_MODE=identity",
		"FORGEMEM_RETRIEVAL_MIN_SCORE=1", "FORGEMEM_RETRIEVAL_TIMEOUT=30s")
	ctx := context.Background()
	if _, err := ws.Remember(ctx, workspace.RememberInput{Text: "Migrations live in db/migrations.",
		Scope: memcore.ScopeRepo, Category: memcore.CategoryProjectConventions}); err != nil {
		t.Fatal(err)
	}
	// No word in common with the memory: the lexical index finds nothing
	// either.
	window := []memcore.Message{{Role: memcore.RoleUser, Content: "Which colour is the logo?"}}
	if res, err := ws.Recall(ctx, window); err != nil || res.Injection != "" {
		t.Fatalf("Recall = %+v, %v; want nothing relevant", res, err)
	}
	if _, err := ws.Search(ctx, "migrations", 5); err != nil {
		t.Fatal(err)
	}

	const rounds = 20
	var wg sync.WaitGroup
	errs := make(chan error, 2*rounds)
	for range rounds {
		wg.Add(2)
		go func() {
			defer wg.Done()
			if _, err := ws.Search(ctx, poison, 5); !errors.Is(err, workspace.ErrProvider) {
				errs <- fmt.Errorf("the poisoned search: %v; want ErrProvider", err)
			}
		}()
		go func() {
			defer wg.Done()
			if _, err := ws.Recall(ctx, window); err != nil {
				errs <- fmt.Errorf("a recall beside the failing search: %w", err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// A queued pass that fails records the provider's error in its entry and
// in forgemem stats with its secrets redacted: a provider that echoes the
// API key back in its error leaves no trace of it on disk.
func TestWorkerRecordsRedactedFailures(t *testing.T) {
	const key = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
	srv := httptest.NewServer(fakeopenai.RejectKey(key))
	t.Cleanup(srv.Close)
	ws := open(t, "FORGEMEM_PROVIDER=openai", "FORGEMEM_BASE_URL="+srv.URL+"/v1", "OPENAI_API_KEY="+key,
		"FORGEMEM_CLASSIFIER_MODEL=classifier", "FORGEMEM_EMBEDDING_MODEL=embedder")
	name := queue(t, ws, memcore.TriggerCompaction, "s1", "we keep migrations in db/migrations")
	res, err := ws.RunWorker(context.Background(), workspace.WorkerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed != 1 || len(res.Entries) != 1 {
		t.Fatalf("RunWorker = %+v", res)
	}
	sp, err := ws.Spool()
	if err != nil {
		t.Fatal(err)
	}
	e, err := sp.Read(name)
	if err != nil {
		t.Fatalf("the failed entry is gone: %v", err)
	}
	p := pending(t, ws)
	for what, text := range map[string]string{"the worker's result": res.Entries[0].Err, "the entry": e.LastError, "Pending": p.Reason} {
		if strings.Contains(text, key) || !strings.Contains(text, "[REDACTED]") || !strings.Contains(text, "401") {
			t.Errorf("%s says %q; want the 401 with the key redacted", what, text)
		}
	}
}
