//go:build linux

package resident

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/memcore/atomicfile"
	"github.com/forgemem/forgemem/settings"
)

// key32 is a key made of the character c.
func key32(c byte) string { return strings.Repeat(string(c), 32) }

// A place is written whole, private to the user, and replaced whole; no
// temporary file stays.
func TestWritePlace(t *testing.T) {
	dir := t.TempDir()
	mustChmod(t, dir, 0o700)
	for _, pid := range []int{1, 2} {
		p := Place{Key: key32('a'), PID: pid, RepoDir: "/r/.forge/memory", Executable: "/bin/fm"}
		if err := WritePlace(dir, p); err != nil {
			t.Fatal(err)
		}
		got, err := ReadPlace(dir)
		if err != nil || got != p {
			t.Fatalf("ReadPlace = %+v, %v; want %+v", got, err, p)
		}
	}
	info, err := os.Lstat(placePath(dir))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("the record: %v, %v; want mode 0600", info, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("the folder holds %v; want the record alone", entries)
	}
}

// Others finds the servers of other keys serving the same memory
// folders, from what the user's own processes recorded in private folders
// named by their keys, and the private folders that hold no record (what
// their server serves is unknown), and nothing else: no link, no folder or
// record open to others, no record that names another key or another
// repository.
func TestOthers(t *testing.T) {
	base := t.TempDir()
	mustChmod(t, base, 0o700)
	const repo, user = "/work/shop/.forge/memory", "/home/u/.forge/memory"
	me := Place{Key: key32('0'), RepoDir: repo, UserDir: user, Executable: "/bin/forgemem", Binary: "b1", Settings: "s1"}
	// server makes the server folder of key holding the record of p.
	server := func(key string, p Place) string {
		t.Helper()
		dir := filepath.Join(base, key)
		mustMkdir(t, dir, 0o700)
		p.Key = key
		if err := WritePlace(dir, p); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	oldBinary := me
	oldBinary.Binary, oldBinary.Executable = "b0", "/old/forgemem"
	otherSettings := me
	otherSettings.Settings = "s0"
	elsewhere := me
	elsewhere.RepoDir = "/work/other/.forge/memory"

	server(me.Key, me)
	wantOld := server(key32('a'), oldBinary)
	wantSettings := server(key32('b'), otherSettings)
	server(key32('c'), elsewhere)
	liar := server(key32('d'), me)
	lied := me
	lied.Key = key32('a') // a record copied from another folder
	if err := WritePlace(liar, lied); err != nil {
		t.Fatal(err)
	}
	open := server(key32('e'), oldBinary)
	mustChmod(t, open, 0o755)
	writable := server(key32('f'), oldBinary)
	mustChmod(t, placePath(writable), 0o622)
	if err := os.Symlink(wantOld, filepath.Join(base, key32('1'))); err != nil { // a linked folder
		t.Fatal(err)
	}
	linkedRecord := filepath.Join(base, key32('2'))
	mustMkdir(t, linkedRecord, 0o700)
	elsewhereDir := t.TempDir() // a record that names the folder, kept elsewhere
	mustChmod(t, elsewhereDir, 0o700)
	if err := WritePlace(elsewhereDir, withKey(oldBinary, key32('2'))); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(placePath(elsewhereDir), placePath(linkedRecord)); err != nil {
		t.Fatal(err)
	}
	huge := server(key32('3'), oldBinary)
	if err := os.WriteFile(placePath(huge), []byte(`{"key":"`+key32('3')+`","repo_dir":"`+repo+`"}`+strings.Repeat(" ", maxPlace)), 0o600); err != nil {
		t.Fatal(err)
	}
	noRecord := filepath.Join(base, key32('4'))
	mustMkdir(t, noRecord, 0o700)                        // no record: a server of an older binary, or one not yet recorded
	mustMkdir(t, filepath.Join(base, key32('5')), 0o755) // no record, open to others
	server("barriers", oldBinary)                        // not named by a key

	got, err := Others(base, me)
	if err != nil {
		t.Fatal(err)
	}
	want := []Other{{Dir: noRecord, Place: Place{Key: key32('4')}},
		{Dir: wantOld, Place: withKey(oldBinary, key32('a')), Recorded: true}, {Dir: wantSettings, Place: withKey(otherSettings, key32('b')), Recorded: true}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Others =\n%+v\nwant\n%+v", got, want)
	}
	if _, err := Others(filepath.Join(base, "missing"), me); err == nil {
		t.Error("Others of a missing folder: no error")
	}
}

func withKey(p Place, key string) Place { p.Key = key; return p }

// A record without a revision is a binary's whose server counts a ping as
// use; this binary's place records its revision, whose ping is not.
func TestPingKeepsAlive(t *testing.T) {
	if !(Place{}).PingKeepsAlive() {
		t.Error("a place of no revision: PingKeepsAlive = false")
	}
	if (Place{Revision: Revision}).PingKeepsAlive() {
		t.Errorf("a place of revision %d: PingKeepsAlive = true", Revision)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s, err := settings.Load(settings.Options{RepoDir: t.TempDir(), UserDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	p, err := PlaceOf(privateBase(t), s, nil, exe)
	if err != nil || p.Revision != Revision {
		t.Errorf("PlaceOf = %+v, %v; want revision %d", p, err, Revision)
	}
}

func mustChmod(t *testing.T, path string, perm os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, perm); err != nil {
		t.Fatal(err)
	}
}

// A place serves the work of another when they share the repository's
// memory folder (or, outside a repository, the user's), and says what
// differs between them.
func TestPlaceServesAndDiffers(t *testing.T) {
	me := Place{RepoDir: "/r", UserDir: "/u", Executable: "/bin/fm", Binary: "b", Settings: "s"}
	tests := []struct {
		name   string
		other  Place
		serves bool
		differ []string
	}{
		{"the same", me, true, nil},
		{"another binary", Place{RepoDir: "/r", UserDir: "/u", Executable: "/old/fm", Binary: "b0", Settings: "s"}, true, []string{DiffBinary}},
		{"a rebuilt binary", Place{RepoDir: "/r", UserDir: "/u", Executable: "/bin/fm", Binary: "b0", Settings: "s"}, true, []string{DiffBinary}},
		{"other settings and user folder", Place{RepoDir: "/r", UserDir: "/u2", Executable: "/bin/fm", Binary: "b", Settings: "s0"}, true, []string{DiffSettings, DiffUserDir}},
		{"another repository", Place{RepoDir: "/r2", UserDir: "/u", Executable: "/bin/fm", Binary: "b", Settings: "s"}, false, nil},
		{"no repository", Place{UserDir: "/u", Executable: "/bin/fm", Binary: "b", Settings: "s"}, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := me.Serves(tt.other); got != tt.serves {
				t.Errorf("Serves = %v, want %v", got, tt.serves)
			}
			if got := me.Differs(tt.other); tt.serves && !reflect.DeepEqual(got, tt.differ) {
				t.Errorf("Differs = %v, want %v", got, tt.differ)
			}
		})
	}
	outside := Place{UserDir: "/u"}
	if !outside.Serves(Place{UserDir: "/u"}) || outside.Serves(Place{UserDir: "/u2"}) || outside.Serves(me) {
		t.Error("outside a repository, a place serves the places of its user folder alone")
	}
}

// privateBase is a private folder for the keys of a test.
func privateBase(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	mustChmod(t, base, 0o700)
	return base
}

// A key is made of the settings in force, not of how they were given: a
// setting given by a flag, its variable or a file, a base URL by
// --base-url or OPENAI_BASE_URL, a memory folder by --repo-dir or
// FORGEMEM_REPO_DIR, a default given or not, an API key of a provider not
// in use, are one key; another value, another API key in force, another
// proxy, are another.
func TestKeyOfTheSettingsInForce(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	base, repo, user := privateBase(t), t.TempDir(), t.TempDir()
	home, homeWith5 := t.TempDir(), t.TempDir()
	mustWrite(t, filepath.Join(homeWith5, ".forge", "config.yaml"), "memory:\n  cadence_turns: 5\n")
	// opts are the inputs of a command: the environment env, the flags
	// given as name and value.
	opts := func(env []string, flags ...string) settings.Options {
		o := settings.Options{Home: home, Env: env, RepoDir: repo, UserDir: user, Flags: map[string]string{}}
		for i := 0; i+1 < len(flags); i += 2 {
			o.Flags[flags[i]] = flags[i+1]
		}
		return o
	}
	withHome := func(o settings.Options, h string) settings.Options { o.Home = h; return o }
	noRepoFlag := func(o settings.Options) settings.Options { o.RepoDir = ""; return o }
	const url = "http://127.0.0.1:9/v1"
	openai := []string{"provider", "openai", "embedding-model", "e", "retrieval-mode", "identity"}
	def := fmt.Sprint(settings.Default().CadenceTurns)
	tests := []struct {
		name string
		a, b settings.Options
		same bool
	}{
		{"a flag or its variable", opts([]string{"FORGEMEM_CADENCE_TURNS=5"}), opts(nil, "cadence-turns", "5"), true},
		{"a variable or the user's file", opts([]string{"FORGEMEM_CADENCE_TURNS=5"}), withHome(opts(nil), homeWith5), true},
		{"--base-url or OPENAI_BASE_URL", opts(nil, append(openai, "base-url", url)...), opts([]string{"OPENAI_BASE_URL=" + url}, openai...), true},
		{"--repo-dir or FORGEMEM_REPO_DIR", opts(nil), noRepoFlag(opts([]string{"FORGEMEM_REPO_DIR=" + repo})), true},
		{"a default given or not", opts(nil), opts(nil, "cadence-turns", def), true},
		{"the API key of a provider not in use", opts([]string{"OPENAI_API_KEY=sk-a"}), opts([]string{"OPENAI_API_KEY=sk-b"}), true},
		{"another value", opts([]string{"FORGEMEM_CADENCE_TURNS=5"}), opts(nil, "cadence-turns", "6"), false},
		{"another API key in force", opts([]string{"OPENAI_API_KEY=sk-a"}, openai...), opts([]string{"OPENAI_API_KEY=sk-b"}, openai...), false},
		{"an API key in force or none", opts([]string{"OPENAI_API_KEY=sk-a"}, openai...), opts(nil, openai...), false},
		{"another proxy", opts([]string{"HTTPS_PROXY=http://a:3128"}), opts([]string{"HTTPS_PROXY=http://b:3128"}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var keys [2]string
			for i, o := range []settings.Options{tt.a, tt.b} {
				s, err := settings.Load(o)
				if err != nil {
					t.Fatal(err)
				}
				p, err := PlaceOf(base, s, o.Env, exe)
				if err != nil {
					t.Fatal(err)
				}
				keys[i] = p.Key
			}
			if same := keys[0] == keys[1]; same != tt.same {
				t.Errorf("keys %s and %s: the same %v, want %v", keys[0], keys[1], same, tt.same)
			}
		})
	}
}

// The settings are hashed under the user's key secret, made once, 32
// random bytes readable by the user only, in the private folder: the same
// settings, an API key among them, make other keys under another secret,
// so a key cannot be tried against guessed API keys by whoever sees it. A
// secret file that is a link, or damaged, is refused, and left as it is.
func TestKeySecret(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s, err := settings.Load(settings.Options{RepoDir: t.TempDir(), UserDir: t.TempDir(),
		Env: []string{"OPENAI_API_KEY=sk-guessable"}, Flags: map[string]string{"provider": "openai", "embedding-model": "e", "retrieval-mode": "identity"}})
	if err != nil {
		t.Fatal(err)
	}
	var places []Place
	for range 2 {
		base := privateBase(t)
		secret, err := KeySecret(base)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(base, secretFile))
		info, serr := os.Lstat(filepath.Join(base, secretFile))
		if err != nil || serr != nil || string(data) != hex.EncodeToString(secret)+"\n" || len(secret) != 32 || info.Mode().Perm() != 0o600 {
			t.Fatalf("the key secret file: %q (%v), %v, %v; want the secret's 64 digits, mode 0600", data, info, err, serr)
		}
		again, err := KeySecret(base)
		if err != nil || string(again) != string(secret) {
			t.Errorf("KeySecret a second time = %x, %v; want %x", again, err, secret)
		}
		for range 2 { // the same key each time, under one secret
			p, err := PlaceOf(base, s, nil, exe)
			if err != nil {
				t.Fatal(err)
			}
			places = append(places, p)
		}
	}
	if places[0] != places[1] || places[2] != places[3] {
		t.Errorf("one secret, one place: %+v, %+v", places[0:2], places[2:4])
	}
	if places[0].Settings == places[2].Settings || places[0].Key == places[2].Key {
		t.Errorf("the same settings under two secrets: settings %s and %s, keys %s and %s; want them to differ",
			places[0].Settings, places[2].Settings, places[0].Key, places[2].Key)
	}

	tests := []struct {
		name    string
		prepare func(t *testing.T, path string)
		want    error
	}{
		{"a link to a secret", func(t *testing.T, path string) {
			other := filepath.Join(t.TempDir(), "secret")
			mustWrite(t, other, strings.Repeat("ab", 32)+"\n")
			if err := os.Symlink(other, path); err != nil {
				t.Fatal(err)
			}
		}, atomicfile.ErrSymlink},
		{"a folder", func(t *testing.T, path string) { mustMkdir(t, path, 0o700) }, atomicfile.ErrNotRegular},
		{"too short", func(t *testing.T, path string) { mustWrite(t, path, "abcd\n") }, nil},
		{"not hexadecimal", func(t *testing.T, path string) { mustWrite(t, path, strings.Repeat("zz", 32)+"\n") }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := privateBase(t)
			path := filepath.Join(base, secretFile)
			tt.prepare(t, path)
			before, _ := os.Lstat(path)
			_, err := KeySecret(base)
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) {
				t.Errorf("KeySecret = %v; want an error matching %v", err, tt.want)
			}
			if _, err := PlaceOf(base, s, nil, exe); err == nil {
				t.Error("PlaceOf with a secret refused: no error")
			}
			if after, err := os.Lstat(path); err != nil || !os.SameFile(before, after) || after.ModTime() != before.ModTime() {
				t.Errorf("the refused secret file was changed: %v, %v", after, err)
			}
		})
	}
}

func mustWrite(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}
