package spool_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/spool"
	"github.com/forgemem/forgemem/memcore"
)

// Secrets of the conversation are redacted before the entry is written:
// none is at rest in the queue, whatever the entry waits for.
func TestAddRedactsEveryMessage(t *testing.T) {
	s := open(t)
	secrets := []string{"sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z", "AKIAIOSFODNN7EXAMPLE", "ghp_16C7e42F292c6912E7710c838347Ae178B4a"}
	e := spool.Entry{Kind: memcore.TriggerCompaction, SessionID: "s", Messages: []spool.Message{
		{Role: memcore.RoleUser, Content: "My key is " + secrets[0] + ", use it."},
		{Role: memcore.RoleAssistant, Content: "Set AWS_ACCESS_KEY_ID=" + secrets[1] + " then."},
		{Role: memcore.RoleUser, Content: "And the token: " + secrets[2]},
	}}
	before := fmt.Sprint(e.Messages)
	name, err := s.Add(e)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(s.Dir(), name))
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range secrets {
		if strings.Contains(string(data), secret) {
			t.Errorf("the entry holds %s:\n%s", secret, data)
		}
	}
	got, err := s.Read(name)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 3 || !strings.Contains(got.Messages[0].Content, "[REDACTED]") || !strings.Contains(got.Messages[0].Content, "use it.") {
		t.Errorf("read back %q", got.Messages)
	}
	if fmt.Sprint(e.Messages) != before {
		t.Error("Add changed the caller's messages")
	}
}

// A turn stands for the turns of its session that wait: they are removed
// when it is added. Compactions and other sessions' turns stay.
func TestAddReplacesTheTurnsItHolds(t *testing.T) {
	s := open(t)
	add(t, s, memcore.TriggerCadence, "a", "turn 1 of a")
	c := add(t, s, memcore.TriggerCompaction, "a", "arc of a")
	b := add(t, s, memcore.TriggerCadence, "b", "turn 1 of b")
	add(t, s, memcore.TriggerCadence, "a", "turn 2 of a")
	last := add(t, s, memcore.TriggerCadence, "a", "turn 3 of a")
	items, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, it := range items {
		names = append(names, it.Name)
	}
	if want := []string{c, b, last}; fmt.Sprint(names) != fmt.Sprint(want) {
		t.Errorf("waiting %v, want %v", names, want)
	}
}

// A spool that nothing drains stops at MaxEntries entries: the next entry
// is dropped, refused with ErrFull, and counted.
func TestFullSpoolDropsAndCounts(t *testing.T) {
	s := open(t)
	if d, err := s.Dropped(); err != nil || d.Count != 0 || !d.Last.IsZero() {
		t.Fatalf("Dropped of a new spool = %+v, %v", d, err)
	}
	// Compactions are never replaced by later entries.
	for i := range spool.MaxEntries {
		add(t, s, memcore.TriggerCompaction, "s", fmt.Sprint("arc ", i))
	}
	for i := range 3 {
		_, err := s.Add(spool.Entry{Kind: memcore.TriggerCadence, SessionID: fmt.Sprint("new ", i),
			Messages: []spool.Message{{Role: memcore.RoleUser, Content: "one more"}}})
		if !errors.Is(err, spool.ErrFull) {
			t.Fatalf("Add to a full spool = %v, want ErrFull", err)
		}
	}
	if items, _ := s.List(); len(items) != spool.MaxEntries {
		t.Errorf("%d entries wait, want %d", len(items), spool.MaxEntries)
	}
	d, err := s.Dropped()
	if err != nil || d.Count != 3 || d.Saturated || d.Last.IsZero() {
		t.Errorf("Dropped = %+v, %v; want 3", d, err)
	}
	// Room again: an entry is queued, and the count stays.
	items, _ := s.List()
	if err := s.Remove(items[0].Name); err != nil {
		t.Fatal(err)
	}
	add(t, s, memcore.TriggerCadence, "s", "fits")
	if d, _ := s.Dropped(); d.Count != 3 {
		t.Errorf("Dropped after room was made = %+v", d)
	}
}

// The bytes waiting are bounded too, and an entry too large to be read
// back is refused.
func TestFullSpoolByBytes(t *testing.T) {
	s := open(t)
	big := strings.Repeat("word ", (spool.MaxEntryBytes-4096)/5)
	var size int64
	for n := 0; ; n++ {
		name, err := s.Add(spool.Entry{Kind: memcore.TriggerCompaction, SessionID: "s",
			Messages: []spool.Message{{Role: memcore.RoleUser, Content: big}}})
		if errors.Is(err, spool.ErrFull) {
			break
		}
		if err != nil || n > spool.MaxBytes/len(big) {
			t.Fatalf("Add %d = %v", n, err)
		}
		info, err := os.Stat(filepath.Join(s.Dir(), name))
		if err != nil {
			t.Fatal(err)
		}
		size = info.Size()
	}
	var total int64
	items, _ := s.List()
	for _, it := range items {
		info, _ := os.Stat(filepath.Join(s.Dir(), it.Name))
		total += info.Size()
	}
	if total > spool.MaxBytes || total+size <= spool.MaxBytes {
		t.Errorf("%d entries of %d bytes wait, %d bytes in all; want as many as fit in %d", len(items), size, total, spool.MaxBytes)
	}
	if d, _ := s.Dropped(); d.Count != 1 {
		t.Errorf("Dropped = %+v, want 1", d)
	}
	_, err := s.Add(spool.Entry{Kind: memcore.TriggerCadence, SessionID: "t",
		Messages: []spool.Message{{Role: memcore.RoleUser, Content: strings.Repeat("x", spool.MaxEntryBytes)}}})
	if err == nil || errors.Is(err, spool.ErrFull) {
		t.Errorf("Add of an entry over MaxEntryBytes = %v", err)
	}
}

// A file in an entry's place larger than MaxEntryBytes is not read: it
// is a bad entry.
func TestReadRefusesAnOversizedEntry(t *testing.T) {
	s := open(t)
	name := "t-00000000000000000001-0123456789abcdef-01234567.json"
	f, err := os.Create(filepath.Join(s.Dir(), name))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(20 << 30); err != nil { // sparse
		t.Fatal(err)
	}
	f.Close()
	if _, err := s.Read(name); !errors.Is(err, spool.ErrBadEntry) {
		t.Errorf("Read = %v, want ErrBadEntry", err)
	}
	// It takes no room in the queue: the next Add sets it aside.
	added := add(t, s, memcore.TriggerCompaction, "s", "fits")
	if items, _ := s.List(); len(items) != 1 || items[0].Name != added {
		t.Errorf("waiting: %+v, want only %s", items, added)
	}
	if _, err := os.Stat(filepath.Join(s.Dir(), name+".bad")); err != nil {
		t.Errorf("the oversized file was not set aside: %v", err)
	}
}

// At most twenty entries are kept set aside; the oldest beyond go.
func TestSetAsideIsBounded(t *testing.T) {
	s := open(t)
	for i := range 25 {
		name := fmt.Sprintf("t-%020d-0123456789abcdef-01234567.json", i+1)
		if err := os.WriteFile(filepath.Join(s.Dir(), name), []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := s.SetAside(name); err != nil {
			t.Fatal(err)
		}
	}
	bad, _ := filepath.Glob(filepath.Join(s.Dir(), "*.bad"))
	if len(bad) != 20 || !strings.Contains(bad[0], fmt.Sprintf("%020d", 6)) {
		t.Errorf("set aside: %d, first %s; want the newest 20", len(bad), filepath.Base(bad[0]))
	}
}

// A notice is new once, until it changes or is cleared.
func TestNoticeOnce(t *testing.T) {
	s := open(t)
	for i, tt := range []struct {
		notice string
		clear  bool
		want   bool
	}{{"no model", false, true}, {"no model", false, false}, {"no key", false, true}, {"no key", true, true}, {"no key", false, false}} {
		if tt.clear {
			s.ClearNotice()
		}
		if got := s.NoticeOnce(tt.notice); got != tt.want {
			t.Errorf("%d: NoticeOnce(%q) = %v, want %v", i, tt.notice, got, tt.want)
		}
	}
}

// What a hook tells a session is told again when it changes — to another
// set, to nothing and back — and only then, whatever other sessions were
// told meanwhile; nothing to tell writes nothing unless the session was
// told something. The record keeps the last 32 sessions, as hashes only;
// one that cannot be read is started afresh, and one of another capture
// key is not the user's.
func TestTell(t *testing.T) {
	s := open(t)
	session := func(i int) string { return fmt.Sprintf("session %d", i) }
	record := func() []string {
		t.Helper()
		told, err := filepath.Glob(filepath.Join(s.Dir(), "told-*.txt"))
		if err != nil || len(told) > 1 {
			t.Fatalf("records %v, %v; want one at most", told, err)
		}
		if len(told) == 0 {
			return nil
		}
		data, err := os.ReadFile(told[0])
		if err != nil {
			t.Fatal(err)
		}
		return strings.Fields(string(data))
	}
	for i, tt := range []struct {
		session, set string
		want         bool
	}{
		{session(0), "", false}, // nothing, as before
		{session(0), "a", true},
		{session(0), "a", false},
		{session(1), "a", true}, // another session
		{session(0), "a", false},
		{session(0), "b", true}, // the set changed
		{session(0), "a", true}, // and back
		{session(0), "", true},  // all files read again
		{session(0), "", false},
		{session(0), "a", true}, // the same set again, after nothing
		{session(1), "a", false},
	} {
		if got := s.Tell(tt.session, tt.set); got != tt.want {
			t.Errorf("%d: Tell(%q, %q) = %v, want %v", i, tt.session, tt.set, got, tt.want)
		}
	}
	// Nothing to tell a session told nothing writes nothing.
	for _, l := range record() {
		if strings.Contains(l, "session") {
			t.Errorf("the record holds a session's name: %q", l)
		}
	}
	s.Tell(session(0), "")
	s.Tell(session(1), "")
	if got := record(); len(got) != 0 {
		t.Fatalf("with no session told anything, the record holds %q", got)
	}
	told, _ := filepath.Glob(filepath.Join(s.Dir(), "told-*.txt"))
	info, err := os.Stat(told[0])
	if err != nil {
		t.Fatal(err)
	}
	before := info.ModTime()
	for i := range 5 {
		if s.Tell(session(i), "") {
			t.Errorf("nothing to tell session %d, told nothing, is a change", i)
		}
	}
	if info, err := os.Stat(told[0]); err != nil || !info.ModTime().Equal(before) || info.Size() != 0 {
		t.Errorf("nothing to tell rewrote the record: %v, %v", info, err)
	}

	// The last 32 sessions told something are kept.
	for i := range 33 {
		if !s.Tell(session(i), "a") {
			t.Errorf("session %d, told nothing, is not told a set", i)
		}
	}
	if got := record(); len(got) != 2*32 {
		t.Errorf("the record holds %d fields; want 32 lines of 2 hashes", len(got))
	}
	if !s.Tell(session(0), "a") {
		t.Error("a session 32 newer ones pushed out is not told again")
	}
	if s.Tell(session(2), "a") {
		t.Error("one of the last 32 sessions is told again")
	}
	other, err := spool.Open(filepath.Dir(s.Dir()), spool.Key{0x07})
	if err != nil {
		t.Fatal(err)
	}
	if !other.Tell(session(2), "a") {
		t.Error("a session the user's record holds is told already under another capture key")
	}
	// A record too large to be one of its own is read as empty.
	told, _ = filepath.Glob(filepath.Join(s.Dir(), "told-*.txt"))
	if len(told) != 2 {
		t.Fatalf("records %v; want one per capture key", told)
	}
	for _, path := range told {
		if err := os.WriteFile(path, []byte(strings.Repeat("0123456789abcdef 0123456789abcdef\n", 100)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if !s.Tell(session(2), "a") || s.Tell(session(2), "a") {
		t.Error("a record over its bound is not started afresh")
	}
}

// The spool's records are the user's: a repository that commits a notice
// or a record of drops into its .spool folder — under the names they had,
// or as another user's forgemem wrote them — neither hides the user's
// notice nor changes the count of drops.
func TestRecordsARepositoryCommittedAreIgnored(t *testing.T) {
	s := open(t)
	const notice = "no model"
	committed := map[string]string{
		"notice.txt":  notice,
		"dropped.log": strings.Repeat("2026-01-02T03:04:05Z t\n", 5),
	}
	for name, content := range committed {
		if err := os.WriteFile(filepath.Join(s.Dir(), name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	other, err := spool.Open(filepath.Dir(s.Dir()), spool.Key{0x07})
	if err != nil {
		t.Fatal(err)
	}
	if !other.NoticeOnce(notice) {
		t.Fatal("another key's first notice is not new")
	}
	if !s.NoticeOnce(notice) {
		t.Error("a notice another key recorded, or a committed notice.txt, hid the user's")
	}
	if s.NoticeOnce(notice) {
		t.Error("the user's own notice is new again")
	}
	if d, err := s.Dropped(); err != nil || d.Count != 0 {
		t.Errorf("Dropped with a committed dropped.log = %+v, %v; want none", d, err)
	}
	for name, content := range committed {
		if got, err := os.ReadFile(filepath.Join(s.Dir(), name)); err != nil || string(got) != content {
			t.Errorf("%s: %q, %v; want it left as committed", name, got, err)
		}
	}
}
