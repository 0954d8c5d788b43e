//go:build linux

package workspace_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/live"
	"github.com/forgemem/forgemem/cmd/forgemem/internal/workspace"
	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/settings"
)

// liveAndNot opens two workspaces of the same folders: one keeping them
// in memory by their file events (Options.LiveDir), one reading them.
func liveAndNot(t *testing.T) (alive, reading *workspace.Workspace, run string) {
	t.Helper()
	root := t.TempDir()
	repo, home := filepath.Join(root, "repo"), filepath.Join(root, "home")
	run = filepath.Join(root, "run")
	for _, d := range []string{filepath.Join(repo, ".git"), home} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(run, 0o700); err != nil {
		t.Fatal(err)
	}
	s, err := settings.Load(settings.Options{WorkDir: repo, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	open := func(dir string) *workspace.Workspace {
		ws, err := workspace.Open(s, workspace.Options{LiveDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ws.Close(context.Background()) })
		return ws
	}
	alive, reading = open(run), open("")
	if err := alive.Live(); err != nil {
		t.Fatalf("Live() = %v", err)
	}
	if reading.Live() == nil {
		t.Fatal("a workspace without LiveDir says it is live")
	}
	return alive, reading, run
}

// liveRecalled is what of a Result two workspaces must agree on.
func liveRecalled(t *testing.T, ws *workspace.Workspace, text string) (string, []string) {
	t.Helper()
	res, err := ws.Recall(context.Background(), []memcore.Message{{Role: memcore.RoleUser, Content: text}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range res.Memories {
		got = append(got, fmt.Sprintf("%s %.6f", m.Memory.Meta.ID, m.Score))
	}
	return res.Injection, got
}

// A live workspace recalls what one reading the folders recalls, after
// every kind of change, and builds its index again only when something
// changed.
func TestLiveRecallAgreesWithReading(t *testing.T) {
	alive, reading, _ := liveAndNot(t)
	ctx := context.Background()
	check := func(step string) {
		t.Helper()
		for _, q := range []string{"tabs or spaces", "how are migrations run", "errors wrapped"} {
			gi, gm := liveRecalled(t, alive, q)
			wi, wm := liveRecalled(t, reading, q)
			if gi != wi || !reflect.DeepEqual(gm, wm) {
				t.Fatalf("%s, %q: live recalled %v\n%s\nreading the folders %v\n%s", step, q, gm, gi, wm, wi)
			}
		}
	}
	handWrite(t, alive, mem(1, memcore.ScopeRepo, "Migrations run with make migrate."),
		mem(2, memcore.ScopeUser, "The user prefers tabs."))
	check("first memories")
	if _, err := alive.Remember(ctx, workspace.RememberInput{Text: "Errors are wrapped with %w.", Scope: memcore.ScopeRepo, Category: memcore.CategoryProjectConventions}); err != nil {
		t.Fatal(err)
	}
	check("remembered")
	handWrite(t, alive, mem(3, memcore.ScopeUser, "The user prefers spaces now.", 2))
	check("a new version")
	if err := os.Remove(filepath.Join(alive.Store().Dir(memcore.ScopeRepo), id(1)+".md")); err != nil {
		t.Fatal(err)
	}
	check("a deleted file")

	builds := alive.Builds()
	check("nothing changed")
	if alive.Builds() != builds {
		t.Errorf("recalls with nothing changed built the index %d times", alive.Builds()-builds)
	}
}

// When the live view is lost (its barrier folder removed), the workspace
// says so and reads the folders, still recalling what they hold.
func TestLiveLostReadsTheFolders(t *testing.T) {
	alive, _, run := liveAndNot(t)
	handWrite(t, alive, mem(1, memcore.ScopeRepo, "Migrations run with make migrate."))
	if _, got := liveRecalled(t, alive, "migrations"); len(got) != 1 {
		t.Fatalf("recalled %v", got)
	}
	if err := os.RemoveAll(run); err != nil {
		t.Fatal(err)
	}
	handWrite(t, alive, mem(2, memcore.ScopeRepo, "Migrations are reviewed by two people."))
	if _, got := liveRecalled(t, alive, "migrations"); len(got) != 2 {
		t.Errorf("after the live view was lost, recalled %v; want both memories", got)
	}
	if err := alive.Live(); !errors.Is(err, live.ErrLost) {
		t.Errorf("Live() = %v, want ErrLost", err)
	}
}

// PrepareRecall builds the index, so that the next Recall only searches.
func TestPrepareRecall(t *testing.T) {
	alive, _, _ := liveAndNot(t)
	handWrite(t, alive, mem(1, memcore.ScopeRepo, "Migrations run with make migrate."))
	if err := alive.PrepareRecall(context.Background()); err != nil {
		t.Fatal(err)
	}
	builds := alive.Builds()
	if _, got := liveRecalled(t, alive, "migrations"); len(got) != 1 || alive.Builds() != builds {
		t.Errorf("recalled %v with %d more builds; want one memory and none", got, alive.Builds()-builds)
	}
}
