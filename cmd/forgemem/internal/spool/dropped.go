package spool

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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

// maxTold is how many sessions the record of what hooks last told them
// keeps (see [Spool.Tell]): the last told.
const maxTold = 32

// toldLine is the length of a line of the record of what hooks told: 16
// hexadecimal digits for the session, a space, 16 for what it was told,
// and a line feed.
const toldLine = 34

// toldPath is the record of what hooks last told each session (recordName
// "told", ".txt"): a line per session, "<session> <set>\n", each 16
// hexadecimal digits of an HMAC-SHA256 under the spool's key, the last
// told last.
func (s *Spool) toldPath() string {
	return filepath.Join(s.dir, s.recordName("told", ".txt"))
}

// Tell reports whether set — what a hook tells one session, such as the
// set of memory files it cannot read, named by a digest; "" for nothing —
// differs from what this spool recorded as last told to session, and
// records it: a hook tells a session once, and again when what it has to
// tell changes, also after it had nothing to tell. The record keeps the
// last maxTold (32) sessions told something, as keyed hashes only, never
// the session or the set; a session with nothing recorded was told
// nothing (or so long ago that 32 others pushed it out). Recording ""
// removes the session's line, and writes nothing when there is none: a
// hook with nothing to tell costs a read. When the record cannot be read
// it is started afresh, and when it cannot be written the set is new again
// next time: told again rather than never.
func (s *Spool) Tell(session, set string) (changed bool) {
	path := s.toldPath()
	id := hex.EncodeToString(mac(s.key, []byte("forgemem told session "+session))[:8])
	var lines []string
	if old, err := readCapped(path, maxTold*toldLine); err == nil {
		lines = strings.Split(strings.TrimSuffix(string(old), "\n"), "\n")
	}
	last, kept := "", lines[:0]
	for _, l := range lines {
		sid, told, ok := strings.Cut(l, " ")
		switch {
		case !ok || len(l) != toldLine-1:
			// not a line of the record: dropped
		case sid == id:
			last = told
		default:
			kept = append(kept, l)
		}
	}
	value := ""
	if set != "" {
		value = hex.EncodeToString(mac(s.key, []byte("forgemem told set "+set))[:8])
	}
	if value == last {
		return false
	}
	if value != "" {
		kept = append(kept, id+" "+value)
		kept = kept[max(0, len(kept)-maxTold):]
	}
	data := ""
	if len(kept) > 0 {
		data = strings.Join(kept, "\n") + "\n"
	}
	_ = atomicfile.Replace(path, []byte(data), filePerm)
	return true
}
