package spool

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memcore/atomicfile"
)

// The spool's records — what a full spool dropped, the last notice, what
// hooks said once —
// are named after the user's capture key (see recordName): a repository
// can commit files into its .spool folder, but not under names it cannot
// know, so it can neither hide a notice nor make up a count of drops.

// recordName is the name of the spool record base+ext: base, a dash and
// 16 hexadecimal digits of the HMAC-SHA256 of base under the spool's key,
// then ext ("dropped-3fa9c1d2e4b5a6f7.log").
func (s *Spool) recordName(base, ext string) string {
	return base + "-" + hex.EncodeToString(mac(s.key, []byte("forgemem spool record "+base))[:8]) + ext
}

// droppedPath is the record of the entries a full spool dropped
// (recordName "dropped", ".log"): one fixed-width line per entry,
// "<time, RFC 3339 UTC> <c|t>\n", appended in one write (appends of a few
// bytes do not interleave), so that hooks dropping entries at the same
// moment are all counted and the count is the file's size over the line's.
func (s *Spool) droppedPath() string {
	return filepath.Join(s.dir, s.recordName("dropped", ".log"))
}

// droppedLine is the width of a line of the dropped record, and
// maxDropped the number of lines it keeps: past it, drops are no longer
// recorded and the count says "at least".
const (
	droppedLine = len("2006-01-02T15:04:05Z t\n")
	maxDropped  = 100_000
)

// Dropped says what a full spool dropped.
type Dropped struct {
	// Count is the number of entries dropped; when Saturated is true, at
	// least that many.
	Count     int
	Saturated bool
	// Last is when the last one was dropped; zero when none was.
	Last time.Time
}

// countDrop records that an entry of kind was dropped. A failure to
// record it is not reported: the caller's error says the entry was
// dropped.
func (s *Spool) countDrop(kind memcore.Trigger) {
	f, err := openRegular(s.droppedPath(), os.O_WRONLY|os.O_APPEND|os.O_CREATE)
	if err != nil {
		return
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || info.Size() >= int64(maxDropped*droppedLine) {
		return
	}
	letter := 't'
	if kind == memcore.TriggerCompaction {
		letter = 'c'
	}
	_, _ = fmt.Fprintf(f, "%s %c\n", s.now().UTC().Format("2006-01-02T15:04:05Z"), letter)
}

// Dropped returns how many entries the spool dropped because it was full,
// and when the last one was; it reads the record's size and last line
// only. A record that is not a regular file is an error wrapping
// ErrUnsafe.
func (s *Spool) Dropped() (Dropped, error) {
	var d Dropped
	f, err := openRegular(s.droppedPath(), os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		return d, nil
	}
	if err != nil {
		return d, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return d, fmt.Errorf("spool: %w", err)
	}
	d.Count = int(info.Size() / int64(droppedLine))
	d.Saturated = d.Count >= maxDropped
	if d.Count > 0 {
		line := make([]byte, droppedLine)
		if _, err := f.ReadAt(line, int64(d.Count-1)*int64(droppedLine)); err == nil {
			d.Last, _ = time.Parse(time.RFC3339, string(line[:20]))
		}
	}
	return d, nil
}

// maxNotice bounds what is read of the record of the last notice said
// about this spool (see [Spool.NoticeOnce]).
const maxNotice = 4 << 10

// noticePath is the record of the last notice said about this spool
// (recordName "notice", ".txt").
func (s *Spool) noticePath() string {
	return filepath.Join(s.dir, s.recordName("notice", ".txt"))
}

// NoticeOnce records notice, the reason a hook gives for not queueing
// (no model to capture with), and reports whether it is new: a hook says
// a reason once per spool, not at every turn. A notice that differs from
// the recorded one is new again; [Spool.ClearNotice] forgets it, so that
// it is said again if it comes back. When the notice cannot be recorded,
// it is new (said again next time rather than never).
func (s *Spool) NoticeOnce(notice string) (isNew bool) {
	path := s.noticePath()
	if old, err := readCapped(path, maxNotice); err == nil && string(old) == notice {
		return false
	}
	_ = atomicfile.Replace(path, []byte(notice), filePerm)
	return true
}

// ClearNotice forgets the recorded notice.
func (s *Spool) ClearNotice() {
	_ = os.Remove(s.noticePath())
}

// maxSaid is how many keys the record of what hooks said keeps (see
// [Spool.FirstTime]): the newest.
const maxSaid = 32

// saidLine is the length of a line of the record of what hooks said: 16
// hexadecimal digits and a line feed.
const saidLine = 17

// saidPath is the record of what hooks said once (recordName "said",
// ".txt"): a line per key, 16 hexadecimal digits of its HMAC-SHA256
// under the spool's key, newest last.
func (s *Spool) saidPath() string {
	return filepath.Join(s.dir, s.recordName("said", ".txt"))
}

// FirstTime reports whether key — what a hook says once, such as a warning
// to one session about one set of files — is not among the last maxSaid
// keys recorded in this spool, and records it: a key said is not new again
// until maxSaid newer ones pushed it out. Only keyed hashes are recorded,
// never the key. When the record cannot be read it is started afresh, and
// when it cannot be written the key is new again next time: said again
// rather than never.
func (s *Spool) FirstTime(key string) (isNew bool) {
	path := s.saidPath()
	line := hex.EncodeToString(mac(s.key, []byte("forgemem said "+key))[:8])
	var lines []string
	if old, err := readCapped(path, maxSaid*saidLine); err == nil {
		lines = strings.Fields(string(old))
	}
	if slices.Contains(lines, line) {
		return false
	}
	lines = append(lines, line)
	lines = lines[max(0, len(lines)-maxSaid):]
	_ = atomicfile.Replace(path, []byte(strings.Join(lines, "\n")+"\n"), filePerm)
	return true
}
