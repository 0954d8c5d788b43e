package redact

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// The credentials below are made at run time from a fixed seed, so they
// look real to the scanner under test but no file of the repository holds
// a literal that secret scanners would flag.
const (
	alnum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	upper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b64url = alnum + "-_"
	b64    = alnum + "+/"
)

var rng = rand.New(rand.NewPCG(1, 2))

// gen returns n characters drawn from alphabet, always with at least one
// digit, one upper- and one lower-case letter where the alphabet has them,
// as real keys do.
func gen(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	for i, class := range []string{"0123456789", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz"} {
		if strings.ContainsAny(alphabet, class) && i < n {
			b[i] = class[rng.IntN(len(class))]
		}
	}
	return string(b)
}

func jwt() string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + enc([]byte(`{"sub":"1234567890","name":"Jo","iat":1516239022}`)) + "." + gen(b64url, 43)
}

func pem(kind string) string {
	return "-----BEGIN " + kind + "-----\n" + gen(b64, 64) + "\n" + gen(b64, 64) + "\n-----END " + kind + "-----"
}

func TestText(t *testing.T) {
	type tc struct {
		name, in, want string
		n              int
	}
	// secret is a case whose text is before + s + after, expected to become
	// before + [REDACTED] + after.
	secret := func(name, before, s, after string) tc {
		return tc{name, before + s + after, before + Placeholder + after, 1}
	}
	cases := []tc{
		secret("OpenAI legacy key", "key is ", "sk-"+gen(alnum, 48), " in the env"),
		secret("OpenAI project key", "OPENAI: ", "sk-proj-"+gen(b64url, 120), ""),
		secret("OpenAI service account key", "", "sk-svcacct-"+gen(b64url, 80), "."),
		secret("Anthropic key", "use ", "sk-ant-api03-"+gen(b64url, 93)+"AA", " for claude"),
		secret("AWS access key id", "id ", "AKIA"+gen(upper, 16), " ok"),
		secret("AWS temporary key id", "(", "ASIA"+gen(upper, 16), ")"),
		secret("AWS secret key", "aws_secret_access_key = ", gen(b64, 40), "\n"),
		secret("AWS secret key in prose", "the AWS secret key: ", gen(b64, 40), " was rotated"),
		secret("GitHub classic token", "GH ", "ghp_"+gen(alnum, 36), ""),
		secret("GitHub OAuth token", "", "gho_"+gen(alnum, 36), " expired"),
		secret("GitHub app token", "", "ghs_"+gen(alnum, 36), ""),
		secret("GitHub fine-grained token", "pat ", "github_pat_"+gen(alnum, 22)+"_"+gen(alnum, 59), ""),
		secret("Google API key", "maps key ", "AIza"+gen(b64url, 35), " here"),
		secret("Slack bot token", "bot: ", "xoxb-"+gen("0123456789", 12)+"-"+gen("0123456789", 13)+"-"+gen(alnum, 24), ""),
		secret("Slack user token", "", "xoxp-"+gen("0123456789", 12)+"-"+gen("0123456789", 12)+"-"+gen(alnum, 32), ""),
		secret("Slack webhook", "post to ", "https://hooks.slack.com/services/T"+gen(upper, 8)+"/B"+gen(upper, 10)+"/"+gen(alnum, 24), " daily"),
		secret("Stripe live secret key", "", "sk_live_"+gen(alnum, 24), ""),
		secret("Stripe test restricted key", "use ", "rk_test_"+gen(alnum, 24), " in CI"),
		secret("Stripe publishable key", "", "pk_live_"+gen(alnum, 24), ""),
		secret("Stripe webhook secret", "", "whsec_"+gen(alnum, 32), ""),
		secret("RSA private key block", "key:\n", pem("RSA PRIVATE KEY"), "\nend"),
		secret("OpenSSH private key block", "", pem("OPENSSH PRIVATE KEY"), ""),
		secret("PGP private key block", "", pem("PGP PRIVATE KEY BLOCK"), ""),
		secret("unterminated private key", "oops ", "-----BEGIN PRIVATE KEY-----\n"+gen(b64, 64)+"\n", ""),
		secret("JWT", "token ", jwt(), " sent"),
		secret("bearer token", "Authorization: Bearer ", gen(b64url, 40), ""),
		{"URL password", "db is postgres://admin:S3cr3t-P4ss@db.internal:5432/app ok",
			"db is postgres://admin:" + Placeholder + "@db.internal:5432/app ok", 1},
		{"URL password without user", "redis://:hunter22@cache:6379", "redis://:" + Placeholder + "@cache:6379", 1},
		{"password pair", "password=hunter2", "password=" + Placeholder, 1},
		{"plain-word password with =", "password=swordfish", "password=" + Placeholder, 1},
		{"env variable", `DB_PASSWORD="correct horse battery"`, `DB_PASSWORD="` + Placeholder + `"`, 1},
		{"passwd colon", "passwd: hunter2", "passwd: " + Placeholder, 1},
		{"secret pair", "secret=abc123def", "secret=" + Placeholder, 1},
		{"token pair", "token=0a1b2c3d4e", "token=" + Placeholder, 1},
		{"api_key pair", "api_key=live-42-key", "api_key=" + Placeholder, 1},
		{"JSON client secret", `{"client_secret": "s3cr3t value"}`, `{"client_secret": "` + Placeholder + `"}`, 1},
		{"header API key", "X-Api-Key: 9f8e7d6c5b4a", "X-Api-Key: " + Placeholder, 1},
		{"single-quoted secret", "secret: 'two words'", "secret: '" + Placeholder + "'", 1},
		{"e-mail address", "mail alice.smith+work@example.co.uk now", "mail " + Placeholder + " now", 1},
		{"several secrets", "user bob@corp.io, password=x1, key AKIA" + gen(upper, 16),
			"user " + Placeholder + ", password=" + Placeholder + ", key " + Placeholder, 3},
	}
	lookAlikes := []string{
		"a risk-based approach to task-management",
		"sk-learn-2024-release notes are out",
		"the sk- prefix marks OpenAI keys; sk_live_ marks live Stripe keys",
		"ghp_ tokens are classic PATs; AIza starts Google keys; AKIA starts AWS key ids",
		"use an xoxb- token, e.g. xoxb-token-for-the-bot",
		"commit 3f9a2c1 fixed it; full hash e83c5163316f89bfbde7d9ab23ca2e25604af290",
		"uuid 1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b and mem_1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b",
		"leave password= empty; ?password=&user=bob",
		"password=",
		"max_tokens=4096 tokenizer=bpe token_count=12 num_tokens: 7",
		"the password: required on first login; the secret: keep it simple",
		"`api_key:` is the field name",
		"https://example.com/docs?page=2#top and http://localhost:8080/api",
		"clone https://alice@example.com/repo.git",
		"git@github.com:forgemem/forgemem.git",
		"version v1.2.3-rc.1, golang.org/x/tools@v0.24.0",
		"the header starts with eyJ in base64; eyJhbGciOi alone is not a token",
		"Bearer authentication is used; a bearer token-based-scheme-for-apis",
		"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE----- and -----BEGIN PUBLIC KEY-----",
		"@mention the reviewer; npm i @scope/pkg; user@localhost",
		"Prefers errors.As over type assertions.",
		"日本語のテキスト and émojis 🙂",
	}
	for _, s := range lookAlikes {
		cases = append(cases, tc{"look-alike: " + s, s, s, 0})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, n := Text(c.in)
			if got != c.want || n != c.n {
				t.Errorf("Text(%q)\n = %q, %d\nwant %q, %d", c.in, got, n, c.want, c.n)
			}
			if again, n := Text(got); again != got || n != 0 {
				t.Errorf("redacting again changed %q to %q (%d)", got, again, n)
			}
			checkFind(t, c.in)
		})
	}
}

// checkFind asserts that Find(s) agrees with Text(s): its matches are in
// order, within s, without overlaps, named by a rule, and replacing each
// by the placeholder gives Text's result and count.
func checkFind(t *testing.T, s string) {
	t.Helper()
	want, n := Text(s)
	ms := Find(s)
	if len(ms) != n {
		t.Fatalf("Find(%q) found %d secrets, Text replaced %d", s, len(ms), n)
	}
	var b strings.Builder
	last := 0
	for _, m := range ms {
		if m.Start < last || m.End <= m.Start || m.End > len(s) {
			t.Fatalf("Find(%q): match %+v is out of order, empty or outside the text", s, m)
		}
		if !slices.ContainsFunc(rules(), func(r rule) bool { return r.name == m.Rule }) {
			t.Fatalf("Find(%q): match %+v is not named by a rule", s, m)
		}
		b.WriteString(s[last:m.Start])
		b.WriteString(Placeholder)
		last = m.End
	}
	b.WriteString(s[last:])
	if b.String() != want {
		t.Fatalf("replacing Find's matches of %q gives\n%q\nText gives\n%q", s, b.String(), want)
	}
}

func TestFind(t *testing.T) {
	ghp := "ghp_" + gen(alnum, 36)
	openai := "sk-" + gen(alnum, 48)
	tests := []struct {
		name string
		in   string
		want []Match
	}{
		{"nothing", "Prefers errors.As over type assertions.", nil},
		{"empty", "", nil},
		{"one token", "use " + ghp + " here", []Match{{"GitHub token", 4, 4 + len(ghp)}}},
		{"in order", "mail a@b.io then password=x1 and " + ghp, []Match{
			{"e-mail address", 5, 11},
			{"secret assignment", 26, 28},
			{"GitHub token", 33, 33 + len(ghp)},
		}},
		{"URL password only", "postgres://app:hunter22@db/x", []Match{{"URL password", 15, 23}}},
		// A quoted value holding a key is one secret: the whole value, not
		// the key and then the value around its placeholder.
		{"secret inside a secret", `password: "abc ` + openai + ` def"`, []Match{
			{"secret assignment", 11, 11 + len("abc "+openai+" def")},
		}},
		{"placeholder left alone", "token=" + Placeholder + " and " + Placeholder, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Find(tt.in)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Find(%q)\n = %+v\nwant %+v", tt.in, got, tt.want)
			}
			checkFind(t, tt.in)
		})
	}
	out, n := Text(`password: "abc ` + openai + ` def"`)
	if out != `password: "`+Placeholder+`"` || n != 1 {
		t.Errorf("secret inside a secret: Text = %q, %d", out, n)
	}
}

// FuzzText: Text never panics, keeps valid UTF-8 valid, counts what it
// replaces, is idempotent, and agrees with Find.
func FuzzText(f *testing.F) {
	for _, s := range []string{"password=hunter2", "sk-" + gen(alnum, 48), "a@b.co", "x://u:p@h", jwt(), pem("RSA PRIVATE KEY"), "token: ab1",
		`password: "abc sk-` + gen(alnum, 48) + ` def"`, "secret=" + Placeholder + "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, n := Text(in)
		if n == 0 && out != in {
			t.Fatalf("no redaction counted but %q became %q", in, out)
		}
		if n > 0 && strings.Count(out, Placeholder) < n {
			t.Fatalf("%d redactions counted, %d markers in %q", n, strings.Count(out, Placeholder), out)
		}
		if utf8.ValidString(in) && !utf8.ValidString(out) {
			t.Fatalf("redaction broke UTF-8: %q", out)
		}
		if again, n := Text(out); n != 0 || again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", in, out, again)
		}
		checkFind(t, in)
	})
}

// TestError: Error redacts the message and keeps the cause reachable.
func TestError(t *testing.T) {
	cause := errors.New("rate limited")
	key := "ghp_" + gen(alnum, 36)
	tests := []struct {
		name string
		in   error
		want string
		same bool
	}{
		{"nil", nil, "", true},
		{"no secret", fmt.Errorf("call: %w", cause), "call: rate limited", true},
		{"secret", fmt.Errorf("request %q: %w", "token "+key, cause), `request "token ` + Placeholder + `": rate limited`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Error(tt.in)
			if tt.in == nil {
				if got != nil {
					t.Fatalf("Error(nil) = %v", got)
				}
				return
			}
			if got.Error() != tt.want || (got == tt.in) != tt.same || !errors.Is(got, cause) {
				t.Errorf("Error(%v) = %v (same %v); want %q, same %v, wrapping the cause", tt.in, got, got == tt.in, tt.want, tt.same)
			}
		})
	}
}
