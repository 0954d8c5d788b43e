package settings_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/memcore/atomicfile"
	"github.com/forgemem/forgemem/settings"
)

// symlink makes link point at target, or skips the test where links need
// privileges.
func symlink(t *testing.T, target, link string) {
	t.Helper()
	mkdir(t, filepath.Dir(link))
	if err := os.Symlink(target, link); err != nil {
		t.Skip("no symbolic links:", err)
	}
}

// A repository's settings file that is a symbolic link is refused, to
// /dev/zero (which would never end) or to a regular file alike.
func TestRepositoryFileLinkIsRefused(t *testing.T) {
	f := newFixture(t)
	real := filepath.Join(f.home, "elsewhere.yaml")
	write(t, real, "memory:\n  cadence_turns: 2\n")
	for name, target := range map[string]string{"to /dev/zero": "/dev/zero", "to a regular file": real} {
		t.Run(name, func(t *testing.T) {
			if runtime.GOOS == "windows" {
				t.Skip("no /dev/zero")
			}
			_ = os.Remove(f.repoFile())
			symlink(t, target, f.repoFile())
			e := oneErr(t, f.options(nil, nil))
			if !errors.Is(e, settings.ErrUnreadableFile) || !errors.Is(e, atomicfile.ErrSymlink) || e.Source.Name != f.repoFile() {
				t.Fatalf("got %v; want ErrUnreadableFile and ErrSymlink naming %s", e, f.repoFile())
			}
			want := f.repoFile() + ": cannot read the settings file: a symbolic link, which is never followed; " +
				"a repository's settings file must be a regular file: replace the link with the file itself"
			if e.Error() != want {
				t.Errorf("message\n%s\nwant\n%s", e, want)
			}
		})
	}
}

// The user's own file may be a symbolic link (dotfile managers make them),
// but what it leads to must still be a regular file within the size cap.
func TestUserFileLink(t *testing.T) {
	f := newFixture(t)
	real := filepath.Join(f.home, "dotfiles", "forge.yaml")
	write(t, real, "memory:\n  provider: openai\n")
	symlink(t, real, f.userFile())
	if s := mustLoad(t, f.options(nil, nil)); s.Provider != settings.ProviderOpenAI {
		t.Errorf("through the link: provider %s; want openai", s.Provider)
	}
	if runtime.GOOS == "windows" {
		return
	}
	if err := os.Remove(f.userFile()); err != nil {
		t.Fatal(err)
	}
	symlink(t, "/dev/zero", f.userFile())
	if e := oneErr(t, f.options(nil, nil)); !errors.Is(e, atomicfile.ErrNotRegular) {
		t.Errorf("a link to /dev/zero: %v; want ErrNotRegular", e)
	}
	// A dangling link is a missing file.
	if err := os.Remove(f.userFile()); err != nil {
		t.Fatal(err)
	}
	symlink(t, filepath.Join(f.home, "gone.yaml"), f.userFile())
	mustLoad(t, f.options(nil, nil))
}

// A file larger than MaxFileSize is refused with an error naming the file
// and the cap; one of exactly MaxFileSize bytes is read.
func TestFileSizeCap(t *testing.T) {
	f := newFixture(t)
	body := "memory:\n  cadence_turns: 2\n# "
	exact := body + strings.Repeat("x", settings.MaxFileSize-len(body)-1) + "\n"
	write(t, f.repoFile(), exact)
	if s := mustLoad(t, f.options(nil, nil)); s.CadenceTurns != 2 {
		t.Errorf("a file of exactly %d bytes: cadence %d", settings.MaxFileSize, s.CadenceTurns)
	}
	write(t, f.repoFile(), exact+"\n")
	e := oneErr(t, f.options(nil, nil))
	want := f.repoFile() + ": cannot read the settings file: larger than 1 MiB, the most a settings file may hold; keep only settings in it"
	if !errors.Is(e, settings.ErrFileTooLarge) || !errors.Is(e, settings.ErrUnreadableFile) || e.Error() != want {
		t.Errorf("got %v\nwant %s", e, want)
	}
}

// manyKeys is a settings file of n keys no one knows: under memory:
// (where they are forgemem's problems) or, where is "top", beside a
// misspelt section (where they are the host agent's).
func manyKeys(where string, n int) string {
	var b strings.Builder
	indent := ""
	if where == "memory" {
		b.WriteString("memory:\n")
		indent = "  "
	} else {
		b.WriteString("memroy: {}\n")
	}
	for i := range n {
		fmt.Fprintf(&b, "%s%s:\n", indent, strconv.FormatInt(int64(i), 36))
	}
	return b.String()
}

// A file of 100,000 unknown keys is refused with a bounded message: the
// first 20 problems, then how many more. That it takes linear time is
// BenchmarkManyUnknownKeys's to show.
func TestManyUnknownKeys(t *testing.T) {
	for _, where := range []string{"memory", "top"} {
		t.Run(where, func(t *testing.T) {
			f := newFixture(t)
			const n = 100_000
			write(t, f.repoFile(), manyKeys(where, n))
			_, err := settings.Load(f.options(nil, nil))
			var errs settings.Errors
			if !errors.As(err, &errs) {
				t.Fatalf("Load = %v; want Errors", err)
			}
			want := 1 // memroy
			if where == "memory" {
				want = n
			}
			if len(errs) != want {
				t.Errorf("%d problems; want %d", len(errs), want)
			}
			lines := strings.Split(err.Error(), "\n")
			if want > 20 && (len(lines) != 21 || lines[20] != fmt.Sprintf("and %d more problems", want-20)) {
				t.Errorf("%d lines, the last %q; want 20 problems and how many more", len(lines), lines[len(lines)-1])
			}
			for _, l := range lines {
				if len(l) > 1024 {
					t.Errorf("a line of %d bytes: %.100s…", len(l), l)
				}
			}
		})
	}
}

// BenchmarkManyUnknownKeys loads files of 10,000 and 100,000 unknown keys:
// linear work takes about ten times as long for the second, quadratic work
// a hundred times.
func BenchmarkManyUnknownKeys(b *testing.B) {
	for _, where := range []string{"memory", "top"} {
		for _, n := range []int{10_000, 100_000} {
			b.Run(fmt.Sprintf("%s/%d", where, n), func(b *testing.B) {
				f := newFixture(b)
				write(b, f.repoFile(), manyKeys(where, n))
				opts := f.options(nil, nil)
				for b.Loop() {
					if _, err := settings.Load(opts); err == nil {
						b.Fatal("Load accepted unknown keys")
					}
				}
			})
		}
	}
}

// An unknown key's name is shortened in the message, however long.
func TestLongUnknownKeyIsShortened(t *testing.T) {
	f := newFixture(t)
	write(t, f.repoFile(), "memory:\n  ? "+strings.Repeat("k", 500_000)+"\n  : 1\n")
	e := oneErr(t, f.options(nil, nil))
	if len(e.Error()) > 1024 || !strings.Contains(e.Error(), "…") {
		t.Errorf("message of %d bytes: %.200s", len(e.Error()), e)
	}
}

// Top-level keys: the host agent's are left alone, forgemem's outside
// memory: and a misspelt memory: are errors.
func TestTopLevelKeys(t *testing.T) {
	for _, body := range []string{
		"provider: anthropic\nenabled: true\nbase_url: https://api.example\nmemory:\n  provider: openai\n",
		"memo: x\nmemos: y\nmemories: z\nmodel: claude\nmemory_dir: /x\n",
	} {
		f := newFixture(t)
		write(t, f.userFile(), body)
		mustLoad(t, f.options(nil, nil))
	}
	tests := []struct{ body, key, suggestion string }{
		{"memroy:\n  cadence_turns: 2\n", "memroy", "memory:"},
		{"memry: {}\n", "memry", "memory:"},
		{"MEMORY: {}\n", "MEMORY", "memory:"},
		{"retrieval_top_k: 5\n", "retrieval_top_k", "memory.retrieval_top_k"},
		{"cadence-turns: 5\n", "cadence-turns", "memory.cadence_turns"},
		{"FORGEMEM_EMBEDDING_MODEL: e\n", "FORGEMEM_EMBEDDING_MODEL", "memory.embedding_model"},
	}
	for _, tt := range tests {
		f := newFixture(t)
		write(t, f.userFile(), tt.body)
		e := oneErr(t, f.options(nil, nil))
		if !errors.Is(e, settings.ErrUnknownKey) || e.Key != tt.key || e.Suggestion != tt.suggestion || e.Source.Line != 1 {
			t.Errorf("%q: got %+v; want unknown key %s suggesting %s on line 1", tt.body, e, tt.key, tt.suggestion)
		}
	}
}

// With the fake provider, memory.retrieval_mode llm is not what retrieval
// uses: Values says what is in effect and why.
func TestValuesSayWhatIsInEffect(t *testing.T) {
	f := newFixture(t)
	s := mustLoad(t, f.options(nil, nil))
	v := valueAt(t, s, "memory.retrieval_mode")
	if v.Value != "llm" || v.InEffect != "identity" || !strings.Contains(v.Why, "fake provider") {
		t.Errorf("fake provider: %+v; want llm, in effect identity", v)
	}
	if !strings.Contains(s.String(), "memory.retrieval_mode: llm (default); in effect: identity (the fake provider always retrieves in identity mode)\n") {
		t.Errorf("String() = %s", s)
	}
	s = mustLoad(t, f.options(nil, map[string]string{"provider": "openai"}))
	if v := valueAt(t, s, "memory.retrieval_mode"); v.InEffect != "" || v.Why != "" {
		t.Errorf("openai: %+v; want llm in effect", v)
	}
}

func valueAt(t *testing.T, s *settings.Settings, name string) settings.Value {
	t.Helper()
	for _, v := range s.Values() {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("no value %s", name)
	return settings.Value{}
}
