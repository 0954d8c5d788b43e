package resident

import (
	"crypto/hmac"
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
	// Settings is a hash, under the user's key secret ([KeySecret]), of
	// every setting in force, the API key in force and the environment
	// variables a provider reads that are no setting: equal hashes, equal
	// configuration. The API key goes into the hash only.
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
// the memory folders, every setting in force, the API key in force and
// the environment variables a provider's client or git may read
// (proxies, certificates, HOME). Two hooks get the same key only when a
// server started by one answers the other exactly as it would answer
// itself. base is the private folder ([PrivateDir]), which keeps the
// user's key secret; environ is the process's environment.
func Key(base string, s *settings.Settings, environ []string, executable string) (string, error) {
	p, err := PlaceOf(base, s, environ, executable)
	if err != nil {
		return "", err
	}
	return p.Key, nil
}

// PlaceOf is the place of the server a process of settings s, environment
// environ and binary executable asks: its key and what the key is made of
// (see [Key]), and the wire format's revision this binary speaks. PID and
// WorkDir are left empty. base is the private folder ([PrivateDir]).
//
// The settings are those in force — their values as [settings.Load]
// resolved them from the defaults, the files, the environment and the
// flags — not how they were given: a setting given by a flag or by its
// FORGEMEM_* variable, or a base URL by --base-url or OPENAI_BASE_URL, is
// one key, and one server. So the variables the settings are read from
// (FORGEMEM_*, OPENAI_API_KEY, GEMINI_API_KEY, OPENAI_BASE_URL) are left
// out of the environment hashed beside them.
//
// Secrets are among what the key is made of: the API key in force, and a
// base URL or a proxy may carry a password. Two API keys are two servers
// (a server answers with its own key: it would otherwise bill another
// account, or use a key since revoked), so their values count, not only
// whether they are set. But a plain hash of values that can be guessed
// would let whoever sees a key — in --status's output pasted into an
// issue, in a folder's name — try candidate API keys against it at the
// speed of SHA-256. So the settings are hashed under the user's key
// secret ([KeySecret], 32 random bytes in the private folder, readable by
// the user only), HMAC-SHA256: without it, a key or a recorded Settings
// hash tells nothing of the values, and whoever can read it can read the
// servers' environments anyway.
func PlaceOf(base string, s *settings.Settings, environ []string, executable string) (Place, error) {
	info, err := os.Stat(executable)
	if err != nil {
		return Place{}, fmt.Errorf("resident: the binary: %w", err)
	}
	secret, err := KeySecret(base)
	if err != nil {
		return Place{}, err
	}
	bin := newDigest()
	bin.put("version", fmt.Sprint(Version))
	bin.put("executable", executable)
	bin.put("executable.size", fmt.Sprint(info.Size()))
	bin.put("executable.mtime", fmt.Sprint(info.ModTime().UnixNano()))
	conf := digest{hmac.New(sha256.New, secret)}
	for _, v := range s.Values() {
		conf.put(v.Name, v.Value)
		conf.put(v.Name+".in_effect", v.InEffect)
	}
	conf.put("api_key", s.APIKey())
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
// client or git may read and that are no setting: the providers' (OPENAI_,
// GEMINI_, GOOGLE_) but for those the settings are read from, proxies and
// certificates, and HOME. What the settings are read from (FORGEMEM_*,
// the API keys, OPENAI_BASE_URL) counts as the values in force instead.
func providerEnv(environ []string) []string {
	var out []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case settings.EnvOpenAIAPIKey, settings.EnvGeminiAPIKey, settings.EnvOpenAIBaseURL:
			continue
		}
		u := strings.ToUpper(k)
		switch {
		case strings.HasPrefix(k, settings.EnvPrefix):
		case strings.HasPrefix(u, "OPENAI_"), strings.HasPrefix(u, "GEMINI_"),
			strings.HasPrefix(u, "GOOGLE_"), strings.HasSuffix(u, "_PROXY"), strings.HasPrefix(u, "SSL_CERT_"), u == "HOME":
			out = append(out, kv)
		}
	}
	sort.Strings(out)
	return out
}
