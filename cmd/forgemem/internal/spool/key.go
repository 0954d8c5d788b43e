package spool

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/forgemem/forgemem/memcore/atomicfile"
)

// A repository can commit files into its .forge/memory/.spool/ folder (its
// .gitignore only keeps a user's own entries out of git), and a worker
// would run a capture pass over each: memories written as the user's own
// words, from a conversation the user never had, with the user's API key.
// So every entry is signed with a key that only the user has, kept in the
// spool folder of the user's memory folder, and an entry whose signature
// does not match is never run (ErrForeignEntry).

// KeyFile is the name of the user's capture key, in the spool folder of the
// user's memory folder (~/.forge/memory/.spool/, ignored by git).
const KeyFile = "capture.key"

// Key is the secret that signs the entries the user's hooks queue: an
// entry is run only when its signature matches (see [LoadKey]).
type Key [32]byte

// ErrForeignEntry: an entry is not signed with the user's key, so no hook
// of this user queued it — a repository may have committed it. It is
// never run.
var ErrForeignEntry = errors.New("not queued by this user's forgemem (its signature does not match the user's capture key)")

// LoadKey returns the user's capture key, kept in KeyFile in the spool
// folder of the user's memory folder userMemoryDir, and makes it — 32
// random bytes, written as 64 hexadecimal digits, readable by the user
// only — when there is none yet. The folder is made as [Open] makes it. A
// key file that is a symbolic link or not a regular file is refused with
// ErrUnsafe; one that holds no key is an error saying to remove it (the
// entries queued meanwhile are then set aside when a worker reads them).
func LoadKey(userMemoryDir string) (Key, error) {
	var k Key
	dir, err := makeDir(userMemoryDir)
	if err != nil {
		return k, err
	}
	path := filepath.Join(dir, KeyFile)
	if k, err := readKey(path); !errors.Is(err, fs.ErrNotExist) {
		return k, err
	}
	if _, err := rand.Read(k[:]); err != nil {
		return k, fmt.Errorf("spool: making the capture key: %w", err)
	}
	err = atomicfile.WriteNew(path, []byte(hex.EncodeToString(k[:])+"\n"), filePerm)
	switch {
	case err == nil:
		return k, nil
	case errors.Is(err, fs.ErrExist): // another process made it meanwhile
		return readKey(path)
	}
	return k, fmt.Errorf("spool: making the capture key: %w", err)
}

// ReadKey returns the user's capture key as [LoadKey] does, but makes
// nothing: when there is no key yet (nor, perhaps, the folders that would
// hold it) it returns an error wrapping fs.ErrNotExist. A memory folder or
// a spool folder that is a symbolic link or not a folder is refused as
// LoadKey refuses it, and so is a key file that is one.
func ReadKey(userMemoryDir string) (Key, error) {
	if userMemoryDir == "" {
		return Key{}, errors.New("spool: no memory folder")
	}
	if err := CheckMemoryDir(userMemoryDir); err != nil {
		return Key{}, fmt.Errorf("spool: %w", err)
	}
	dir := filepath.Join(userMemoryDir, DirName)
	info, err := os.Lstat(dir)
	switch {
	case err != nil:
		return Key{}, fmt.Errorf("spool: %w", err)
	case !info.IsDir():
		return Key{}, fmt.Errorf("spool: %s: %w: not a folder (symbolic links are never followed); remove it", dir, ErrUnsafe)
	}
	return readKey(filepath.Join(dir, KeyFile))
}

// readKey reads the key of the key file at path.
func readKey(path string) (Key, error) {
	var k Key
	f, err := openRegular(path, os.O_RDONLY)
	if err != nil {
		return k, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(2*len(k)+2)))
	if err != nil {
		return k, fmt.Errorf("spool: reading the capture key: %w", err)
	}
	n, err := hex.Decode(k[:], bytes.TrimSpace(data))
	if err != nil || n != len(k) || len(bytes.TrimSpace(data)) != 2*len(k) {
		return Key{}, fmt.Errorf("spool: the capture key %s is damaged (want %d hexadecimal digits); remove it, and a new one is made (captures queued meanwhile are set aside)", path, 2*len(k))
	}
	return k, nil
}

// signedEntry is an entry file: the entry and its signature, an HMAC-SHA256
// under the user's key of the entry's compact JSON.
type signedEntry struct {
	Signature string          `json:"signature"`
	Entry     json.RawMessage `json:"entry"`
}

// sign returns the file of e, signed with k.
func sign(k Key, e *Entry) ([]byte, error) {
	body, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	data, err := json.MarshalIndent(signedEntry{Signature: hex.EncodeToString(mac(k, body)), Entry: body}, "", " ")
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	return append(data, '\n'), nil
}

// verify returns the entry of the file data when its signature under k
// matches; otherwise an error wrapping ErrForeignEntry, or ErrBadEntry for
// a file that is not a signed entry.
func verify(k Key, data []byte) (*Entry, error) {
	var se signedEntry
	if err := json.Unmarshal(data, &se); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadEntry, err)
	}
	if len(se.Entry) == 0 || se.Signature == "" {
		return nil, fmt.Errorf("%w: %w", ErrBadEntry, ErrForeignEntry)
	}
	// The entry was signed in its compact form; the file indents it.
	var body bytes.Buffer
	if err := json.Compact(&body, se.Entry); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadEntry, err)
	}
	got, err := hex.DecodeString(se.Signature)
	if err != nil || !hmac.Equal(got, mac(k, body.Bytes())) {
		return nil, fmt.Errorf("%w: %w", ErrBadEntry, ErrForeignEntry)
	}
	var e Entry
	if err := json.Unmarshal(body.Bytes(), &e); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadEntry, err)
	}
	return &e, nil
}

// Derive returns a secret for purpose made from k: the HMAC-SHA256 of
// purpose under k, so that the user's key serves another use (naming the
// embedding cache's files, for one) without that use learning the key or
// being able to sign an entry.
func (k Key) Derive(purpose string) []byte {
	return mac(k, []byte("forgemem derived secret: "+purpose))
}

// mac is the HMAC-SHA256 of data under k.
func mac(k Key, data []byte) []byte {
	h := hmac.New(sha256.New, k[:])
	h.Write(data)
	return h.Sum(nil)
}
