package redact

import (
	"strings"
	"testing"
)

// conversation returns about n bytes of a coding conversation: prose, code,
// commands, URLs, e-mail addresses, words that name credentials, and a few
// secrets.
func conversation(n int) string {
	turns := []string{
		"User: how do we configure the database? The token budget is 2000 and max_tokens=4096.\n",
		"Assistant: Use the connection pool; read the password from os.Getenv(\"DB_PASSWORD\") and never log it. " +
			"See https://example.com/docs?page=2 and mail bob@example.com.\n",
		"```go\nfunc connect(ctx context.Context, cfg Config) (*sql.DB, error) {\n\tdsn := fmt.Sprintf(\"%s:%s@tcp(%s)/%s\", cfg.User, cfg.Password, cfg.Host, cfg.Name)\n\treturn sql.Open(\"mysql\", dsn)\n}\n```\n",
		"User: the CI token is in the vault; the deploy key rotates weekly. Run `go test ./...` then `git push origin main`.\n",
		"Assistant: commit e83c5163316f89bfbde7d9ab23ca2e25604af290 pinned golang.org/x/tools@v0.24.0 " +
			"(h1:9A9LHSqF/7dyVVX6g0U9cwm9pG3kP9gSzcuIPHPsaIE=); uuid 1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b.\n",
		"export API_TOKEN=" + gen(alnum, 32) + " && curl -H \"Authorization: Bearer " + gen(b64url, 40) + "\" https://api.example.com/v1\n",
		"Assistant: the GitHub token " + "ghp_" + gen(alnum, 36) + " must not be committed; use secrets.GITHUB_TOKEN instead.\n",
	}
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString(turns[i%len(turns)])
	}
	return b.String()
}

// BenchmarkText redacts a 100 KB conversation.
func BenchmarkText(b *testing.B) {
	s := conversation(100_000)
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		Text(s)
	}
}
