package redact

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// checkRedactsExactly asserts that Text replaces each «marked» secret of
// tmpl (a template as in the secret corpus, its generators expanded from a
// fixed seed) with one Placeholder, changes nothing else, counts what it
// replaces, and agrees with Find. A template without marks is a
// look-alike, which Text leaves as it is.
func checkRedactsExactly(t *testing.T, tmpl string) {
	t.Helper()
	text, spans := expandTemplate(t, unescape(tmpl), rand.New(rand.NewPCG(3, 5)))
	var want strings.Builder
	last := 0
	for _, sp := range spans {
		want.WriteString(text[last:sp[0]])
		want.WriteString(Placeholder)
		last = sp[1]
	}
	want.WriteString(text[last:])
	got, n := Text(text)
	if got != want.String() || n != len(spans) {
		t.Errorf("Text(%q)\n = %q, %d\nwant %q, %d", text, got, n, want.String(), len(spans))
	}
	checkFind(t, text)
}

// runExact runs checkRedactsExactly on each template as a subtest.
func runExact(t *testing.T, templates []string) {
	t.Helper()
	for _, tmpl := range templates {
		t.Run(tmpl, func(t *testing.T) { checkRedactsExactly(t, tmpl) })
	}
}

// Passwords in variables named ..._PASS, in the Pwd of a connection string
// and in .pgpass lines; PWD, the shell's working directory, and colon-separated
// look-alikes are left alone.
func TestPasswordVariables(t *testing.T) {
	runExact(t, []string{
		"DB_PASS=«{alnum:12}»",
		"SMTP_PASS: «{alnum:10}»",
		`export MAIL_PASS="«{alnum:10}»"`,
		"--pass «{alnum:12}»",
		"Server=db;User Id=sa;Pwd=«{alnum:10}»;",
		"Driver={ODBC Driver 18};Server=db;Uid=sa;PWD=«{alnum:10}»",
		"db.internal:5432:app:deploy:«{alnum:14}»",
		"host:5432:db:user:«secretpw»",
		"*:*:*:replicator:«{alnum:12}»",
		"echo 'localhost:5432:*:postgres:«{alnum:12}»' >> ~/.pgpass",
		`db:5432:app:bob:«pa\:ss{alnum:6}»`,

		"PASSWORD_MIN_LENGTH=12 and PASSWORD_MAX_AGE_DAYS=90",
		"bypass=true; compass: north; SSL_PASSTHROUGH=true; render_pass: shadow",
		"auth: { user: process.env.SMTP_USER, pass: process.env.SMTP_PASS }",
		"PWD=/home/bob/project",
		"cd $PWD && echo $OLDPWD",
		"mac 00:11:22:33:44:55 and fe80:0:0:0:1",
		"main.go:12:5: undefined: foo",
		"redis key app:1234:user:42:profile",
		"localhost:5432:app and docker run -p 127.0.0.1:5432:5432 postgres:16",
		"the .pgpass format is hostname:port:database:username:password",
	})
}
