//go:build linux

package resident

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"syscall"
)

// maxPlace bounds the record of a server's place that is read back.
const maxPlace = 64 << 10

// maxScan bounds the entries of the private folder Others looks at.
const maxScan = 1024

// WritePlace records p in the server folder dir, whose lock the caller
// holds: written whole to a temporary file of the folder, then renamed
// over the record, so that a reader finds the old record or the new one,
// never a part of one.
func WritePlace(dir string, p Place) error {
	data, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("resident: %w", err)
	}
	tmp := filepath.Join(dir, placeTemp)
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("resident: %w", err)
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("resident: %w", err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, placePath(dir))
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("resident: recording the server's place: %w", err)
	}
	return nil
}

// Other is a server folder of another key, and the place its server
// recorded.
type Other struct {
	Dir   string
	Place Place
	// Recorded is false for a folder that holds no record: its server, if
	// one runs, was started by a binary that records none, or has not
	// recorded its place yet. What it serves is unknown; Place holds its
	// key (the folder's name) alone.
	Recorded bool
}

// Others returns, sorted by folder, the server folders in the private
// folder base, other than p's own, whose server recorded a place that
// serves p's work ([Place.Serves]) — those of another binary or other
// settings — and those that hold no record, which may serve it. A
// folder's server may have exited since, or be starting: the caller looks
// at each ([Look]) or asks it ([Ask], with the folder's name as the key).
// Only what the user's own processes wrote counts: a folder named by a
// key, private to the user (mode 0700, never a link), holding a regular
// file of the user's, not writable by others, that names the folder's key,
// or no file of that name at all. It looks at the first 1024 entries of
// base at most and reads at most 64 KiB of each record.
func Others(base string, p Place) ([]Other, error) {
	d, err := os.OpenFile(base, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("resident: %w", err)
	}
	entries, err := d.ReadDir(maxScan)
	d.Close()
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("resident: %w", err)
	}
	var out []Other
	for _, e := range entries {
		name := e.Name()
		if name == p.Key || !keyPattern.MatchString(name) || !e.IsDir() {
			continue
		}
		dir := filepath.Join(base, name)
		q, err := ReadPlace(dir)
		if errors.Is(err, fs.ErrNotExist) { // a private folder without a record
			out = append(out, Other{Dir: dir, Place: Place{Key: name}})
			continue
		}
		if err != nil || q.Key != name || !p.Serves(q) {
			continue
		}
		out = append(out, Other{Dir: dir, Place: q, Recorded: true})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Dir < out[j].Dir })
	return out, nil
}

// ReadPlace reads the place recorded in the server folder dir, which must
// be a folder private to the user (else an error wrapping ErrUnsafeDir),
// its record a regular file of the user's that others cannot write;
// neither is followed if a link. A folder without a record is an error
// wrapping fs.ErrNotExist.
func ReadPlace(dir string) (Place, error) {
	uid := os.Getuid()
	dfd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return Place{}, err
	}
	defer syscall.Close(dfd)
	var st syscall.Stat_t
	if err := syscall.Fstat(dfd, &st); err != nil {
		return Place{}, err
	}
	if int(st.Uid) != uid || st.Mode&0o077 != 0 {
		return Place{}, fmt.Errorf("%s: %w", dir, ErrUnsafeDir)
	}
	fd, err := syscall.Openat(dfd, placeFile, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return Place{}, err
	}
	f := os.NewFile(uintptr(fd), placePath(dir))
	defer f.Close()
	if err := syscall.Fstat(fd, &st); err != nil {
		return Place{}, err
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG || int(st.Uid) != uid || st.Mode&0o022 != 0 || st.Size > maxPlace {
		return Place{}, fmt.Errorf("%s: not a record of the user's own", placePath(dir))
	}
	data, err := io.ReadAll(io.LimitReader(f, maxPlace))
	if err != nil {
		return Place{}, err
	}
	var p Place
	if err := json.Unmarshal(data, &p); err != nil {
		return Place{}, err
	}
	return p, nil
}
