//go:build linux

package resident

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

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
	p, err := PlaceOf(s, nil, exe)
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
