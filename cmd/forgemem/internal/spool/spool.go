package spool

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memcore/atomicfile"
	"github.com/forgemem/forgemem/memcore/redact"
	"github.com/forgemem/forgemem/settings"
)

// DirName is the spool's folder inside a memory folder.
const DirName = ".spool"

// gitignore keeps the spool out of git: its entries hold conversations.
const gitignore = "# forgemem capture queue: never committed.\n*\n"

// FormatVersion is the version of the entry format this package writes
// and reads. Version 2 signs each entry with the user's key (see
// [LoadKey]); an entry of version 1 is not signed, and is set aside.
const FormatVersion = 2

// File permissions: entries hold conversation text.
const (
	filePerm = 0o600
	dirPerm  = 0o750
)

// The bounds of a spool. A queue that nothing drains (no worker can run:
// the provider refuses the key, the machine is offline for days) never
// grows past them: [Spool.Add] refuses an entry that would, counts it as
// dropped ([Spool.Dropped]) and returns an error wrapping [ErrFull].
const (
	// MaxEntries bounds the entries waiting in a spool.
	MaxEntries = 200
	// MaxBytes bounds the total size of the entries waiting.
	MaxBytes = 16 << 20
	// MaxEntryBytes bounds one entry. An entry of a window capped at the
	// classifier's budget (8,000 tokens) is a few tens of kilobytes; a
	// larger file is not one this package wrote, and is not read
	// (ErrBadEntry).
	MaxEntryBytes = 1 << 20
)

// Entry is one capture trigger waiting for its pass: everything the pass
// needs, so that it does not depend on the agent's transcript, which may
// grow, be compacted or be deleted before the worker runs.
type Entry struct {
	// Version is FormatVersion.
	Version int `json:"version"`
	// Kind is memcore.TriggerCadence (a finished turn) or
	// memcore.TriggerCompaction (a compaction of the agent's context).
	Kind memcore.Trigger `json:"kind"`
	// SessionID is the agent's session, recorded in the memories written.
	SessionID string `json:"session_id"`
	// CreatedAt is when the trigger fired.
	CreatedAt time.Time `json:"created_at"`
	// Source names the agent integration that queued it ("claude-code").
	Source string `json:"source,omitempty"`
	// Transcript is the agent's transcript the messages were read from, for
	// a person reading the entry; the pass does not read it.
	Transcript string `json:"transcript,omitempty"`
	// Messages is the conversation window: the user's and the agent's text
	// since the agent's last compaction, oldest first.
	Messages []Message `json:"messages"`
	// Attempts counts the passes over this entry that failed (the model
	// provider down, refusing the key, answering nonsense); LastError is
	// the last failure. The entry waits for the next worker.
	Attempts  int    `json:"attempts,omitempty"`
	LastError string `json:"last_error,omitempty"`
}

// Message is one message of an entry's window.
type Message struct {
	Role    memcore.Role `json:"role"`
	Content string       `json:"content"`
	// At is when the message was written, when the agent said (a
	// transcript's timestamp); absent otherwise.
	At *time.Time `json:"at,omitempty"`
}

// Window returns the entry's messages as memcore messages.
func (e *Entry) Window() []memcore.Message {
	out := make([]memcore.Message, len(e.Messages))
	for i, m := range e.Messages {
		out[i] = memcore.Message{Role: m.Role, Content: m.Content}
		if m.At != nil {
			out[i].At = m.At.UTC()
		}
	}
	return out
}

// Messages converts a window to an entry's messages.
func Messages(window []memcore.Message) []Message {
	out := make([]Message, len(window))
	for i, m := range window {
		out[i] = Message{Role: m.Role, Content: m.Content}
		if !m.At.IsZero() {
			at := m.At.UTC()
			out[i].At = &at
		}
	}
	return out
}

// Errors of the spool; match them with errors.Is.
var (
	// ErrLocked: another worker holds the spool's lock.
	ErrLocked = errors.New("another capture worker holds the spool")
	// ErrBadEntry: an entry file cannot be read as an entry.
	ErrBadEntry = errors.New("unreadable capture queue entry")
	// ErrUnsafe: the spool folder or a file in it is a symbolic link or
	// not what it should be; nothing is followed through a link.
	ErrUnsafe = errors.New("unsafe capture queue path")
	// ErrFull: the spool holds MaxEntries entries or MaxBytes bytes; the
	// entry was dropped and counted.
	ErrFull = errors.New("the capture queue is full")
)

// CheckMemoryDir refuses, with an error wrapping memcore.ErrUnsafeFolder
// that names the path and says what to do, a memory folder that is a
// symbolic link or not a folder, and a .forge folder holding it that is a
// symbolic link: a repository can commit either, pointing anywhere, and
// memories and queued conversations would be written where it points.
// Folders that do not exist yet pass (they are made as real folders);
// folders above .forge are the user's choice of path and may be links.
func CheckMemoryDir(memoryDir string) error {
	if parent := filepath.Dir(memoryDir); filepath.Base(parent) == settings.ForgeDir {
		if info, err := os.Lstat(parent); err == nil && info.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%w: %s is a symbolic link, which forgemem never follows (memories and queued conversations would be written where it points); replace it with a real folder holding what it points to",
				memcore.ErrUnsafeFolder, parent)
		}
	}
	info, err := os.Lstat(memoryDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case info.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%w: the memory folder %s is a symbolic link, which forgemem never follows (memories and queued conversations would be written where it points); replace it with a real folder holding what it points to",
			memcore.ErrUnsafeFolder, memoryDir)
	case !info.IsDir():
		return fmt.Errorf("%w: the memory folder %s is not a folder; move the file away", memcore.ErrUnsafeFolder, memoryDir)
	}
	return nil
}

// Spool is the capture queue of one memory folder: a folder of entry
// files, each written atomically under a name that orders it, and an OS
// lock held by the one worker that runs the passes.
//
// An entry's file name is <kind>-<time>-<session>-<random>.json: kind c
// for a compaction and t for a turn, time the nanoseconds since 1970 in 20
// digits, session a hash of the session id, random 8 hex digits. Listing
// the folder orders the entries without reading them. Hidden files (an
// entry being written) and other names are ignored; an entry that cannot
// be read is renamed to <name>.bad and left for a person.
type Spool struct {
	dir string
	key Key
	now func() time.Time
}

// Open returns the spool of the memory folder memoryDir, whose entries
// are signed and checked with key, the user's (see [LoadKey]), making its
// .spool folder with a .gitignore ignoring everything in it. A .spool that
// is a symbolic link or not a folder is refused with ErrUnsafe, and a
// memory folder (or the .forge folder holding it) that is a symbolic link
// as CheckMemoryDir refuses it, before anything is made.
func Open(memoryDir string, key Key) (*Spool, error) {
	dir, err := makeDir(memoryDir)
	if err != nil {
		return nil, err
	}
	return &Spool{dir: dir, key: key, now: time.Now}, nil
}

// makeDir makes the spool folder of memoryDir, as Open says, and returns
// its path.
func makeDir(memoryDir string) (string, error) {
	if memoryDir == "" {
		return "", errors.New("spool: no memory folder")
	}
	if err := CheckMemoryDir(memoryDir); err != nil {
		return "", fmt.Errorf("spool: %w", err)
	}
	dir := filepath.Join(memoryDir, DirName)
	if err := os.MkdirAll(memoryDir, dirPerm); err != nil {
		return "", fmt.Errorf("spool: %w", err)
	}
	if err := os.Mkdir(dir, dirPerm); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("spool: %w", err)
	}
	info, err := os.Lstat(dir)
	if err != nil {
		return "", fmt.Errorf("spool: %w", err)
	}
	if !info.IsDir() {
		return "", fmt.Errorf("spool: %s: %w: not a folder (symbolic links are never followed); remove it", dir, ErrUnsafe)
	}
	// O_EXCL never follows a symbolic link and leaves an existing file be.
	f, err := os.OpenFile(filepath.Join(dir, ".gitignore"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, filePerm)
	switch {
	case errors.Is(err, fs.ErrExist):
	case err != nil:
		return "", fmt.Errorf("spool: %w", err)
	default:
		_, err = f.WriteString(gitignore)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return "", fmt.Errorf("spool: %w", err)
		}
	}
	return dir, nil
}

// OpenExisting returns the spool of memoryDir, checked with key as Open
// says, if its folder exists, and nil, nil otherwise; it creates nothing.
// A .spool that is a symbolic link or not a folder is refused with
// ErrUnsafe, and a memory folder as CheckMemoryDir refuses it.
func OpenExisting(memoryDir string, key Key) (*Spool, error) {
	if err := CheckMemoryDir(memoryDir); err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	dir := filepath.Join(memoryDir, DirName)
	info, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("spool: %w", err)
	case !info.IsDir():
		return nil, fmt.Errorf("spool: %s: %w: not a folder (symbolic links are never followed); remove it", dir, ErrUnsafe)
	}
	return &Spool{dir: dir, key: key, now: time.Now}, nil
}

// Dir is the spool's folder.
func (s *Spool) Dir() string { return s.dir }

// Item is an entry as its file name describes it.
type Item struct {
	// Name is the entry's file name in the spool folder.
	Name string
	// Kind is memcore.TriggerCompaction or memcore.TriggerCadence.
	Kind memcore.Trigger
	// Time orders the entries: when each was queued.
	Time int64
	// Session is a hash of the session id: entries of one session share it.
	Session string
}

// sessionKey is the hash of a session id that names its entries.
func sessionKey(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:8])
}

// Add writes e as a new entry, atomically (memcore/atomicfile.WriteNew:
// no reader ever sees a partial entry), and returns its name.
//
// Every message is redacted first (memcore/redact.Text): no secret of the
// conversation is kept at rest in the queue, whatever the entry waits for.
// A turn of a session replaces the turns of that session already waiting:
// its window holds theirs (latest wins, as in [Next]). An entry that would
// take the spool past [MaxEntries] or [MaxBytes] is dropped, counted
// ([Spool.Dropped]) and refused with an error wrapping [ErrFull]; one
// larger than [MaxEntryBytes] is refused too.
func (s *Spool) Add(e Entry) (string, error) {
	letter := "t"
	switch e.Kind {
	case memcore.TriggerCompaction:
		letter = "c"
	case memcore.TriggerCadence:
	default:
		return "", fmt.Errorf("spool: a trigger of kind %q is not captured", e.Kind)
	}
	e.Version = FormatVersion
	if e.CreatedAt.IsZero() {
		e.CreatedAt = s.now().UTC()
	}
	e.Messages = redactMessages(e.Messages)
	data, err := sign(s.key, &e)
	if err != nil {
		return "", err
	}
	if len(data) > MaxEntryBytes {
		return "", fmt.Errorf("spool: the entry is %d bytes, more than the %d an entry may hold", len(data), MaxEntryBytes)
	}
	session := sessionKey(e.SessionID)
	if err := s.makeRoom(e.Kind, session, int64(len(data))); err != nil {
		return "", err
	}
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	name := fmt.Sprintf("%s-%020d-%s-%s.json", letter, s.now().UnixNano(), session, hex.EncodeToString(rnd[:]))
	if err := atomicfile.WriteNew(filepath.Join(s.dir, name), data, filePerm); err != nil {
		return "", fmt.Errorf("spool: %w", err)
	}
	return name, nil
}

// redactMessages returns a copy of msgs with their secrets redacted.
func redactMessages(msgs []Message) []Message {
	out := make([]Message, len(msgs))
	for i, m := range msgs {
		out[i] = m
		out[i].Content, _ = redact.Text(m.Content)
	}
	return out
}

// makeRoom removes the turns of session that a new entry of kind, size
// bytes, replaces, sets aside files over MaxEntryBytes, and refuses the
// entry (ErrFull, counted) when the spool has no room left for it.
func (s *Spool) makeRoom(kind memcore.Trigger, session string, size int64) error {
	items, sizes, err := s.listSized()
	if err != nil {
		return err
	}
	n, total := 0, size
	for i, it := range items {
		switch {
		case sizes[i] > MaxEntryBytes:
			// Not an entry this package wrote, and never readable: it
			// takes no room, and is set aside for a person.
			if err := s.SetAside(it.Name); err != nil {
				return err
			}
			continue
		case kind == memcore.TriggerCadence && it.Kind == memcore.TriggerCadence && it.Session == session:
			if err := s.Remove(it.Name); err != nil {
				return err
			}
			continue
		}
		n++
		total += sizes[i]
	}
	if n < MaxEntries && total <= MaxBytes {
		return nil
	}
	s.countDrop(kind)
	return fmt.Errorf("spool: %w (%d entries, %d bytes; at most %d entries and %d bytes wait); the capture was dropped: "+
		"forgemem stats says why the queue is not drained", ErrFull, n, total-size, MaxEntries, MaxBytes)
}

// listSized is List with each entry's size.
func (s *Spool) listSized() ([]Item, []int64, error) {
	items, err := s.List()
	if err != nil {
		return nil, nil, err
	}
	sizes := make([]int64, len(items))
	for i, it := range items {
		if info, err := os.Lstat(filepath.Join(s.dir, it.Name)); err == nil {
			sizes[i] = info.Size()
		}
	}
	return items, sizes, nil
}

// parseName reads an entry's file name; ok is false for any other name.
func parseName(name string) (it Item, ok bool) {
	base, found := strings.CutSuffix(name, ".json")
	if !found {
		return it, false
	}
	parts := strings.Split(base, "-")
	if len(parts) != 4 || len(parts[1]) != 20 || len(parts[2]) != 16 || len(parts[3]) != 8 {
		return it, false
	}
	switch parts[0] {
	case "c":
		it.Kind = memcore.TriggerCompaction
	case "t":
		it.Kind = memcore.TriggerCadence
	default:
		return it, false
	}
	t, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return it, false
	}
	it.Name, it.Time, it.Session = name, t, parts[2]
	return it, true
}

// List returns the entries waiting, oldest first.
func (s *Spool) List() ([]Item, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	var items []Item
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if it, ok := parseName(e.Name()); ok {
			items = append(items, it)
		}
	}
	slices.SortFunc(items, func(a, b Item) int {
		if a.Time != b.Time {
			return compareInt(a.Time, b.Time)
		}
		return strings.Compare(a.Name, b.Name)
	})
	return items, nil
}

func compareInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Read reads an entry. One that is not a regular file (never followed
// through a link, never waited on), is larger than MaxEntryBytes, does not
// parse, is not signed with the spool's key (ErrForeignEntry too) or has
// another format version is an error wrapping ErrBadEntry (or ErrUnsafe
// for a symbolic link or a special file); a missing one wraps
// fs.ErrNotExist.
func (s *Spool) Read(name string) (*Entry, error) {
	path := filepath.Join(s.dir, name)
	data, err := readCapped(path, MaxEntryBytes)
	if errors.Is(err, errTooLarge) {
		return nil, fmt.Errorf("spool: %s: %w: %v", path, ErrBadEntry, err)
	}
	if err != nil {
		return nil, err
	}
	e, err := verify(s.key, data)
	if err != nil {
		return nil, fmt.Errorf("spool: %s: %w", path, err)
	}
	switch {
	case e.Version != FormatVersion:
		return nil, fmt.Errorf("spool: %s: %w: format version %d, want %d", path, ErrBadEntry, e.Version, FormatVersion)
	case e.Kind != memcore.TriggerCadence && e.Kind != memcore.TriggerCompaction:
		return nil, fmt.Errorf("spool: %s: %w: kind %q", path, ErrBadEntry, e.Kind)
	}
	return e, nil
}

// errTooLarge: a file is larger than its reader's bound.
var errTooLarge = errors.New("larger than its bound")

// readCapped reads the file at path, at most limit bytes of it: only a
// regular file, never through a symbolic link and never waiting on a FIFO
// (memcore/atomicfile.Open; ErrUnsafe otherwise). A larger file is an
// error wrapping errTooLarge, a missing one fs.ErrNotExist.
func readCapped(path string, limit int64) ([]byte, error) {
	f, err := openRegular(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("spool: %s: %w (%d bytes)", path, errTooLarge, limit)
	}
	return data, nil
}

// openRegular opens the file at path with flag (creating it 0600 with
// O_CREATE) if it is a regular file (memcore/atomicfile.Open): a symbolic
// link, a FIFO or another special file is an error wrapping ErrUnsafe.
func openRegular(path string, flag int) (*os.File, error) {
	f, err := atomicfile.Open(path, flag, filePerm)
	switch {
	case errors.Is(err, atomicfile.ErrSymlink), errors.Is(err, atomicfile.ErrNotRegular):
		return nil, fmt.Errorf("spool: %w: %w; remove it", ErrUnsafe, err)
	case err != nil:
		return nil, fmt.Errorf("spool: %w", err)
	}
	return f, nil
}

// Update rewrites an entry in one step (memcore/atomicfile.Replace), to
// record a failed attempt.
func (s *Spool) Update(name string, e *Entry) error {
	data, err := sign(s.key, e)
	if err != nil {
		return err
	}
	if err := atomicfile.Replace(filepath.Join(s.dir, name), data, filePerm); err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	return nil
}

// Remove deletes an entry; one already gone is not an error.
func (s *Spool) Remove(name string) error {
	if err := os.Remove(filepath.Join(s.dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("spool: %w", err)
	}
	return nil
}

// maxSetAside bounds the entries set aside: beyond it, the oldest go.
const maxSetAside = 20

// SetAsideCount counts the entries set aside (<name>.bad, see
// [Spool.SetAside]): at most 20 are kept.
func (s *Spool) SetAsideCount() (int, error) {
	bad, err := filepath.Glob(filepath.Join(s.dir, "*.json.bad"))
	if err != nil {
		return 0, fmt.Errorf("spool: %w", err)
	}
	return len(bad), nil
}

// SetAside renames an unreadable entry to <name>.bad, so that it is no
// longer listed and a person can look at it. At most 20 are kept: the
// oldest beyond them are removed.
func (s *Spool) SetAside(name string) error {
	if err := os.Rename(filepath.Join(s.dir, name), filepath.Join(s.dir, name+".bad")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("spool: %w", err)
	}
	bad, err := filepath.Glob(filepath.Join(s.dir, "*.json.bad"))
	if err != nil || len(bad) <= maxSetAside {
		return nil
	}
	// Entry names order them by time; other names sort first and go first.
	slices.SortFunc(bad, func(a, b string) int {
		ia, oka := parseName(strings.TrimSuffix(filepath.Base(a), ".bad"))
		ib, okb := parseName(strings.TrimSuffix(filepath.Base(b), ".bad"))
		if oka != okb {
			return compareBool(oka, okb)
		}
		return compareInt(ia.Time, ib.Time)
	})
	for _, p := range bad[:len(bad)-maxSetAside] {
		_ = os.Remove(p)
	}
	return nil
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// Next chooses the entry to process next among items (as List returns
// them), leaving out those skip reports true for: the oldest compaction,
// else the newest turn of the session whose newest turn is oldest. covered
// are that session's older turns: the newest turn's window holds theirs
// (latest wins), so they are removed once its pass has finished. A session
// whose newest turn is skipped has all its turns skipped. ok is false when
// nothing is left.
func Next(items []Item, skip func(Item) bool) (next Item, covered []Item, ok bool) {
	if skip == nil {
		skip = func(Item) bool { return false }
	}
	newest := map[string]Item{}
	for _, it := range items {
		if it.Kind == memcore.TriggerCompaction {
			if !skip(it) {
				return it, nil, true
			}
			continue
		}
		newest[it.Session] = it // items are oldest first
	}
	for _, it := range items {
		if it.Kind != memcore.TriggerCadence || newest[it.Session] != it || skip(it) {
			continue
		}
		if !ok || it.Time < next.Time {
			next, ok = it, true
		}
	}
	if !ok {
		return Item{}, nil, false
	}
	for _, it := range items {
		if it.Kind == memcore.TriggerCadence && it.Session == next.Session && it != next {
			covered = append(covered, it)
		}
	}
	return next, covered, true
}
