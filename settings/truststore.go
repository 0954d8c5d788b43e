package settings

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/forgemem/forgemem/memcore/atomicfile"
)

// TrustFile is the file in the user's .forge folder that records the
// settings files the user trusts: ~/.forge/trusted.json.
const TrustFile = "trusted.json"

// trustFileVersion is the format of the trust file this package writes.
const trustFileVersion = 1

// TrustState is what the user's trust records say of a settings file.
type TrustState int

// The trust states.
const (
	// Untrusted: the file was never trusted (or the trust was revoked).
	Untrusted TrustState = iota
	// Trusted: the file holds what it held when the user trusted it.
	Trusted
	// ChangedSinceTrusted: the user trusted the file, but it changed
	// since; it needs trusting again.
	ChangedSinceTrusted
)

// String returns "untrusted", "trusted" or "changed since trusted".
func (s TrustState) String() string {
	switch s {
	case Trusted:
		return "trusted"
	case ChangedSinceTrusted:
		return "changed since trusted"
	}
	return "untrusted"
}

// TrustRecord is one trusted file: its path and the SHA-256 digest of the
// content the user trusted.
type TrustRecord struct {
	// Path is the file's absolute path, its folder's symbolic links
	// resolved.
	Path string `json:"path"`
	// SHA256 is the hexadecimal SHA-256 digest of the trusted content.
	SHA256 string `json:"sha256"`
	// TrustedAt is when the user trusted it.
	TrustedAt time.Time `json:"trusted_at"`
}

// trustDoc is the trust file.
type trustDoc struct {
	Version int           `json:"version"`
	Files   []TrustRecord `json:"files"`
}

// ErrTrustRecords is returned, wrapped, when the trust file exists but
// cannot be read or is not one this package wrote.
var ErrTrustRecords = errors.New("unreadable trust records")

// TrustStore records which settings files the user trusts, the way
// direnv allow does: a file's absolute path with the SHA-256 digest of its
// content, in one JSON file in the user's folder (Path, normally
// [Paths].TrustFile, ~/.forge/trusted.json), written atomically with
// permissions 0600. A trusted file whose content changes is no longer
// trusted ([ChangedSinceTrusted]) until it is trusted again. [Load] reads
// the records to decide whether a repository's .forge/config.yaml may set
// the keys that need trust; a host offers its users [TrustStore.Trust],
// [TrustStore.Revoke] and [TrustStore.Records] as the forgemem trust
// command does.
//
// Paths are made absolute against the process's working directory; pass
// absolute ones. Trust and Revoke read, change and replace the whole
// file: of two run at the same moment by two processes, the last write
// wins.
type TrustStore struct {
	// Path is the trust file.
	Path string
}

// Records returns the trusted files, by path; none when the trust file
// does not exist. An unreadable or malformed trust file is an error
// wrapping [ErrTrustRecords].
func (t TrustStore) Records() ([]TrustRecord, error) {
	doc, err := t.read()
	if err != nil {
		return nil, err
	}
	return doc.Files, nil
}

// State says whether file is trusted, reading its content now. A missing
// file is an error wrapping fs.ErrNotExist.
func (t TrustStore) State(file string) (TrustState, error) {
	path, err := canonicalPath(file)
	if err != nil {
		return Untrusted, err
	}
	data, err := readFile(path, false)
	if err != nil {
		return Untrusted, err
	}
	return t.state(path, digest(data))
}

// state says what the records say of the file path whose content has the
// digest sum.
func (t TrustStore) state(path, sum string) (TrustState, error) {
	if t.Path == "" {
		return Untrusted, nil
	}
	doc, err := t.read()
	if err != nil {
		return Untrusted, err
	}
	for _, r := range doc.Files {
		if r.Path != path {
			continue
		}
		if r.SHA256 == sum {
			return Trusted, nil
		}
		return ChangedSinceTrusted, nil
	}
	return Untrusted, nil
}

// Trust records file's current content as trusted at now, replacing an
// earlier record of it. The file is read as [Load] reads a repository's
// (a regular file, never through a symbolic link, at most [MaxFileSize])
// and must load: a file with problems is refused with its [Errors], so
// that what is trusted is what will apply. It returns the record and the
// keys the file sets whose values needed trust (see [Trust]), which now
// apply.
func (t TrustStore) Trust(file string, now time.Time) (TrustRecord, []Key, error) {
	if t.Path == "" {
		return TrustRecord{}, nil, errors.New("settings: no trust file: no home folder is known")
	}
	path, err := canonicalPath(file)
	if err != nil {
		return TrustRecord{}, nil, err
	}
	data, err := readFile(path, false)
	if err != nil {
		return TrustRecord{}, nil, &Error{Kind: ErrUnreadableFile, Source: Source{Origin: OriginRepoFile, Name: path}, Err: explainRead(err, OriginRepoFile)}
	}
	s := Default()
	if errs := parseFile(s, data, Source{Origin: OriginRepoFile, Name: path}, nil); len(errs) > 0 {
		return TrustRecord{}, nil, errs
	}
	doc, err := t.read()
	if err != nil {
		return TrustRecord{}, nil, err
	}
	rec := TrustRecord{Path: path, SHA256: digest(data), TrustedAt: now.UTC()}
	doc.Files = slices.DeleteFunc(doc.Files, func(r TrustRecord) bool { return r.Path == path })
	doc.Files = append(doc.Files, rec)
	if err := t.write(doc); err != nil {
		return TrustRecord{}, nil, err
	}
	var unlocked []Key
	for i := range table {
		if k := &table[i]; k.trust.kind != TrustNotNeeded && s.sources[k.fullName()].Origin == OriginRepoFile {
			unlocked = append(unlocked, k.public())
		}
	}
	return rec, unlocked, nil
}

// Revoke removes file's record; it reports whether there was one.
func (t TrustStore) Revoke(file string) (bool, error) {
	path, err := canonicalPath(file)
	if err != nil {
		return false, err
	}
	doc, err := t.read()
	if err != nil {
		return false, err
	}
	n := len(doc.Files)
	doc.Files = slices.DeleteFunc(doc.Files, func(r TrustRecord) bool { return r.Path == path })
	if len(doc.Files) == n {
		return false, nil
	}
	return true, t.write(doc)
}

// read reads the trust file; a missing one holds no records.
func (t TrustStore) read() (*trustDoc, error) {
	doc := &trustDoc{Version: trustFileVersion}
	if t.Path == "" {
		return doc, nil
	}
	data, err := readFile(t.Path, false)
	if errors.Is(err, fs.ErrNotExist) {
		return doc, nil
	}
	if err != nil {
		return nil, &trustRecordsError{path: t.Path, err: explainRead(err, OriginUserFile)}
	}
	const redo = "delete it and trust your repositories' settings files again"
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(doc); err != nil {
		return nil, &trustRecordsError{path: t.Path, err: fmt.Errorf("not valid JSON (%w); %s", err, redo)}
	}
	if doc.Version != trustFileVersion {
		return nil, &trustRecordsError{path: t.Path, err: fmt.Errorf("format version %d, want %d; %s", doc.Version, trustFileVersion, redo)}
	}
	for _, r := range doc.Files {
		if !filepath.IsAbs(r.Path) || len(r.SHA256) != sha256.Size*2 {
			return nil, &trustRecordsError{path: t.Path, err: fmt.Errorf("a record without an absolute path and a SHA-256 digest; %s", redo)}
		}
	}
	return doc, nil
}

// trustRecordsError is a trust file that cannot be used.
type trustRecordsError struct {
	path string
	err  error // what is wrong and what to do
}

func (e *trustRecordsError) Error() string {
	return "settings: the trust records " + e.path + ": " + e.err.Error()
}

func (e *trustRecordsError) Unwrap() []error { return []error{ErrTrustRecords, e.err} }

// write replaces the trust file with doc, its records sorted by path.
func (t TrustStore) write(doc *trustDoc) error {
	slices.SortFunc(doc.Files, func(a, b TrustRecord) int { return strings.Compare(a.Path, b.Path) })
	doc.Version = trustFileVersion
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("settings: the trust records: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(t.Path), 0o700); err != nil {
		return fmt.Errorf("settings: the trust records: %w", err)
	}
	if err := atomicfile.Replace(t.Path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("settings: writing the trust records: %w", err)
	}
	return nil
}

// canonicalPath is file made absolute, with its folder's symbolic links
// resolved (when the folder exists), so that one file has one record
// however its repository was reached.
func canonicalPath(file string) (string, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return "", fmt.Errorf("settings: %s: %w", file, err)
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(dir, filepath.Base(abs)), nil
	}
	return abs, nil
}

// digest is the hexadecimal SHA-256 digest of data.
func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
