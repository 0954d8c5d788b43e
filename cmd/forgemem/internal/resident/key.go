package resident

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"os"
	"sort"
	"strings"

	"github.com/forgemem/forgemem/settings"
)

// Place is what a server serves and how it is configured: what its key
// is made of, in parts a person can compare. A server records its place
// in its folder when it starts ([WritePlace]), so that a command run with
// another binary or other settings — another key — can still find the
// servers of its memory folders ([Others]).
type Place struct {
	// Key is the server's key: its folder's name.
	Key string `json:"key"`
	// PID is the server's process id.
	PID int `json:"pid,omitempty"`
	// WorkDir is the folder the server was started in.
	WorkDir string `json:"work_dir,omitempty"`
	// RepoDir and UserDir are the memory folders it serves.
	RepoDir string `json:"repo_dir"`
	UserDir string `json:"user_dir"`
	// Executable is the path of the binary; Binary a hash of the wire
	// format's version and of the binary's path, size and modification
	// time.
	Executable string `json:"executable"`
	Binary     string `json:"binary"`
	// Settings is a hash of every effective setting, the API keys and the
	// environment variables a provider reads: equal hashes, equal
	// configuration. The API keys go into the hash only.
	Settings string `json:"settings"`
	// Revision is the wire format's revision its binary speaks (see
	// [Revision]); 0 in the record of a binary before revisions.
	Revision int `json:"revision,omitempty"`
}

// PingKeepsAlive reports whether asking the server of place p how it is
// (OpPing) would count as use, and restart its idle time: a server of a
// binary before [Revision] 1. A client that only wants to know how it is
// looks at its folder instead ([Look]).
func (p Place) PingKeepsAlive() bool { return p.Revision < 1 }

// Key names the server of a place and a configuration: a hash of the wire
// format's version, the binary (its path, size and modification time),
// the memory folders, every effective setting, the API keys and the
// environment variables a provider reads (proxies, certificates). Two
// hooks get the same key only when a server started by one answers the
// other exactly as it would answer itself. The API keys go into the hash
// only: the key cannot be turned back into them. environ is the
// process's environment.
func Key(s *settings.Settings, environ []string, executable string) (string, error) {
	p, err := PlaceOf(s, environ, executable)
	if err != nil {
		return "", err
	}
	return p.Key, nil
}

// PlaceOf is the place of the server a process of settings s, environment
// environ and binary executable asks: its key and what the key is made of
// (see [Key]), and the wire format's revision this binary speaks. PID and
// WorkDir are left empty.
func PlaceOf(s *settings.Settings, environ []string, executable string) (Place, error) {
	info, err := os.Stat(executable)
	if err != nil {
		return Place{}, fmt.Errorf("resident: the binary: %w", err)
	}
	bin := newDigest()
	bin.put("version", fmt.Sprint(Version))
	bin.put("executable", executable)
	bin.put("executable.size", fmt.Sprint(info.Size()))
	bin.put("executable.mtime", fmt.Sprint(info.ModTime().UnixNano()))
	conf := newDigest()
	for _, v := range s.Values() {
		conf.put(v.Name, v.Value)
		conf.put(v.Name+".in_effect", v.InEffect)
	}
	conf.put("openai_api_key", s.OpenAIAPIKey())
	conf.put("gemini_api_key", s.GeminiAPIKey())
	for _, kv := range providerEnv(environ) {
		k, v, _ := strings.Cut(kv, "=")
		conf.put("env."+k, v)
	}
	p := Place{RepoDir: s.Paths.RepoDir, UserDir: s.Paths.UserDir, Executable: executable, Binary: bin.sum(), Settings: conf.sum(), Revision: Revision}
	key := newDigest()
	key.put("binary", p.Binary)
	key.put("repo_dir", p.RepoDir)
	key.put("user_dir", p.UserDir)
	key.put("settings", p.Settings)
	p.Key = key.sum()
	return p, nil
}

// Serves reports whether the server of place o serves the work of p: the
// same repository memory folder, or, outside a repository, the same user
// memory folder.
func (p Place) Serves(o Place) bool {
	if p.RepoDir != "" {
		return o.RepoDir == p.RepoDir
	}
	return o.RepoDir == "" && o.UserDir == p.UserDir
}

// The parts of a place in which two places may differ (see
// [Place.Differs]).
const (
	DiffBinary   = "binary"
	DiffSettings = "settings"
	DiffUserDir  = "user_dir"
)

// Differs lists the parts in which the place o differs from p: DiffBinary
// (another binary, or the same path rebuilt), DiffSettings (other
// settings, API keys or provider environment), DiffUserDir (another user
// memory folder). It is empty when they differ only in how their keys
// were made (a binary that makes keys otherwise).
func (p Place) Differs(o Place) []string {
	var d []string
	if o.Binary != p.Binary || o.Executable != p.Executable {
		d = append(d, DiffBinary)
	}
	if o.Settings != p.Settings {
		d = append(d, DiffSettings)
	}
	if o.UserDir != p.UserDir {
		d = append(d, DiffUserDir)
	}
	return d
}

// digest hashes named values, each length-prefixed.
type digest struct{ h hash.Hash }

func newDigest() digest { return digest{sha256.New()} }

func (d digest) put(k, v string) { fmt.Fprintf(d.h, "%d:%s=%d:%s\n", len(k), k, len(v), v) }

func (d digest) sum() string { return hex.EncodeToString(d.h.Sum(nil)[:16]) }

// providerEnv returns, sorted, the variables of environ that a provider's
// client may read: forgemem's own, the providers' (OPENAI_, GEMINI_,
// GOOGLE_), proxies and certificates, and HOME.
func providerEnv(environ []string) []string {
	var out []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		u := strings.ToUpper(k)
		switch {
		case strings.HasPrefix(u, settings.EnvPrefix), strings.HasPrefix(u, "OPENAI_"), strings.HasPrefix(u, "GEMINI_"),
			strings.HasPrefix(u, "GOOGLE_"), strings.HasSuffix(u, "_PROXY"), strings.HasPrefix(u, "SSL_CERT_"), u == "HOME":
			out = append(out, kv)
		}
	}
	sort.Strings(out)
	return out
}
