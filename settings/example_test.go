package settings_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/forgemem/forgemem/settings"
)

// exampleDirs makes a fake home folder and a repository in a temporary
// folder, with the given settings files, and returns them and a clean-up.
func exampleDirs(userFile, repoFile string) (home, repo string, cleanup func()) {
	root, err := os.MkdirTemp("", "settings-example")
	if err != nil {
		panic(err)
	}
	home, repo = filepath.Join(root, "home"), filepath.Join(root, "repo")
	for dir, body := range map[string]string{home: userFile, repo: repoFile} {
		if err := os.MkdirAll(filepath.Join(dir, ".forge"), 0o750); err != nil {
			panic(err)
		}
		if body != "" {
			if err := os.WriteFile(filepath.Join(dir, ".forge", "config.yaml"), []byte(body), 0o600); err != nil {
				panic(err)
			}
		}
	}
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o750); err != nil {
		panic(err)
	}
	return home, repo, func() { os.RemoveAll(root) }
}

// An agent loads the same settings as the forgemem command: the user's
// file, the repository's, the environment and the flags, later winning.
func Example() {
	home, repo, cleanup := exampleDirs(
		"model: claude-sonnet # the host agent's own key, ignored\nmemory:\n  provider: openai\n  embedding_model: text-embedding-3-small\n  retrieval_model: gpt-4o-mini\n",
		"memory:\n  cadence_turns: 3\n  retrieval_top_k: 20\n",
	)
	defer cleanup()

	// A real host uses settings.OSOptions(); everything is an input here.
	s, err := settings.Load(settings.Options{
		WorkDir: repo,
		Home:    home,
		Env:     []string{"FORGEMEM_RETRIEVAL_TIMEOUT=1500ms", "OPENAI_API_KEY=sk-example"},
		Flags:   map[string]string{"retrieval-top-k": "25"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, key := range []string{"memory.provider", "memory.cadence_turns", "memory.retrieval_top_k", "memory.retrieval_timeout", "memory.enabled"} {
		src, _ := s.Source(key)
		fmt.Printf("%-26s from %s\n", key, src.Origin)
	}
	cfg := s.RetrieveConfig()
	fmt.Println("retrieval on:", s.RetrievalOff() == "", "-", cfg.Mode, cfg.HypothesisModel, cfg.TopK, cfg.Timeout)
	fmt.Println("capture every", s.CadenceTurns, "turns; provider", s.Provider, "with a key:", s.APIKey() != "")
	fmt.Println("repository memories:", strings.TrimPrefix(s.Paths.RepoDir, repo))
	// Output:
	// memory.provider            from user file
	// memory.cadence_turns       from repo file
	// memory.retrieval_top_k     from flag
	// memory.retrieval_timeout   from environment
	// memory.enabled             from default
	// retrieval on: true - llm gpt-4o-mini 25 1.5s
	// capture every 3 turns; provider openai with a key: true
	// repository memories: /.forge/memory
}

// Every problem is reported at once, each naming the file and line, the
// variable or the flag.
func ExampleLoad_errors() {
	home, repo, cleanup := exampleDirs(
		"memory:\n  cadence_turns: 11\n  openai_api_key: sk-do-not-write-keys-here\n",
		"memory:\n  retrieval_topk: 20\n",
	)
	defer cleanup()

	_, err := settings.Load(settings.Options{
		WorkDir: repo, Home: home,
		Env:   []string{"FORGEMEM_PROVIDR=openai"},
		Flags: map[string]string{"retrieval-timeout": "2"},
	})
	text := strings.NewReplacer(home, "~", repo, "/repo").Replace(err.Error())
	for _, line := range strings.Split(text, "\n") {
		line, _, _ = strings.Cut(line, "; known:") // drop the list of every key
		fmt.Println(line)
	}

	var first *settings.Error
	if errors.As(err, &first) {
		fmt.Println("first:", first.Key, first.Source.Line, errors.Is(err, settings.ErrInvalidValue))
	}
	// Output:
	// ~/.forge/config.yaml:2: memory.cadence_turns is 11, want 1–10
	// ~/.forge/config.yaml:3: memory.openai_api_key: API keys are not read from settings files (the value is not shown); set OPENAI_API_KEY in the environment instead and remove the key from the file
	// /repo/.forge/config.yaml:2: unknown key memory.retrieval_topk (did you mean memory.retrieval_top_k?)
	// unknown environment variable FORGEMEM_PROVIDR (did you mean FORGEMEM_PROVIDER?)
	// flag --retrieval-timeout is 2, want a duration such as 2s or 1500ms, more than 0
	// first: memory.cadence_turns 2 true
}

// A command that needs the repository scope says so outside one.
func ExamplePaths_RequireRepo() {
	dir, err := os.MkdirTemp("", "not-a-repo")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	s, err := settings.Load(settings.Options{WorkDir: dir})
	if err != nil {
		panic(err)
	}
	err = s.Paths.RequireRepo()
	fmt.Println(errors.Is(err, settings.ErrNoRepository), s.Paths.RepoDir == "")
	fmt.Println(strings.ReplaceAll(err.Error(), dir, "/x/y"))
	// Output:
	// true true
	// not inside a git repository (no .git found above /x/y); run inside one or pass --repo-dir
}

// With the fake provider, retrieval runs in identity mode and needs no
// model.
func ExampleSettings_RetrieveConfig() {
	s := settings.Default()
	cfg := s.RetrieveConfig()
	fmt.Println(s.Provider, cfg.Mode, cfg.TopK, cfg.HopDepth, cfg.InjectionTokenBudget, cfg.Timeout, cfg.Validate() == nil)
	// Output:
	// fake identity 10 1 2000 2s true
}

// The keys drive a command's flags and help.
func ExampleKeys() {
	for _, k := range settings.Keys()[:3] {
		fmt.Printf("--%-14s %-24s default %s", k.Flag, k.Env, k.Default)
		if k.Range != "" {
			fmt.Printf(", range %s", k.Range)
		}
		fmt.Println()
	}
	// Output:
	// --enabled        FORGEMEM_ENABLED         default true
	// --cadence-turns  FORGEMEM_CADENCE_TURNS   default 1, range 1–10
	// --provider       FORGEMEM_PROVIDER        default fake, range fake, openai or gemini
}
