package resident

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/forgemem/forgemem/settings"
)

// Key names the server of a place and a configuration: a hash of the wire
// format's version, the binary (its path, size and modification time),
// the memory folders, every effective setting, the API keys and the
// environment variables a provider reads (proxies, certificates). Two
// hooks get the same key only when a server started by one answers the
// other exactly as it would answer itself. The API keys go into the hash
// only: the key cannot be turned back into them. environ is the
// process's environment.
func Key(s *settings.Settings, environ []string, executable string) (string, error) {
	h := sha256.New()
	put := func(k, v string) { fmt.Fprintf(h, "%d:%s=%d:%s\n", len(k), k, len(v), v) }
	put("version", fmt.Sprint(Version))
	info, err := os.Stat(executable)
	if err != nil {
		return "", fmt.Errorf("resident: the binary: %w", err)
	}
	put("executable", executable)
	put("executable.size", fmt.Sprint(info.Size()))
	put("executable.mtime", fmt.Sprint(info.ModTime().UnixNano()))
	put("repo_dir", s.Paths.RepoDir)
	put("user_dir", s.Paths.UserDir)
	for _, v := range s.Values() {
		put(v.Name, v.Value)
		put(v.Name+".in_effect", v.InEffect)
	}
	put("openai_api_key", s.OpenAIAPIKey())
	put("gemini_api_key", s.GeminiAPIKey())
	env := providerEnv(environ)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		put("env."+k, v)
	}
	return hex.EncodeToString(h.Sum(nil)[:16]), nil
}

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
