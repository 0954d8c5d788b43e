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

// Passwords given on a command line: mysql's attached -pVALUE, sshpass -p,
// the -p of a registry or cloud login, curl -u user:password. A -p that
// publishes a port or names a database, and a curl -u without a password
// or with a variable, are left alone.
func TestPasswordFlags(t *testing.T) {
	runExact(t, []string{
		"mysql -u root -p«{alnum:10}» app",
		"mysqldump -uroot -p'«{alnum:10}»' --all-databases",
		"docker exec db mysql -uroot -p«{alnum:10}» -e 'show databases'",
		`mariadb -u app -p"«{alnum:6} {alnum:4}»"`,
		"sshpass -p '«{alnum:10}»' ssh deploy@10.0.0.5",
		"sshpass -p«{alnum:10}» scp backup.tgz 10.0.0.5:/srv",
		"docker login -u me -p «{alnum:12}» registry.example.com",
		"podman login --username me -p «{alnum:12}» quay.io",
		"cf login -a https://api.example.com -u me -p «{alnum:12}»",
		"helm registry login -u me -p«{alnum:12}» registry.example.com",
		"curl -u deploy:«{alnum:12}» https://api.example.com/v1",
		"curl -s --user 'deploy:«{alnum:12}»' https://api.example.com/v1",
		"curl -udeploy:«{alnum:12}» http://localhost:9200",

		"mysql -u root -p",
		"mysql -u root -p mydb",
		"mysql -h db -P 3306 -u app -p$MYSQL_PWD",
		"docker run -p 8080:80 -p 127.0.0.1:5432:5432 postgres:16",
		"ssh -p 2222 bob@10.0.0.5 and sshpass -f ~/.ssh/pw ssh host",
		"docker login -u me --password-stdin registry.example.com",
		"login -p -f root",
		`curl -u "$USER" https://api.example.com`,
		`curl -u "$USER:$API_PASS" https://api.example.com`,
		"curl -u admin:$PASSWORD https://x.example.com",
		"curl -u admin https://x.example.com",
		`curl -A "Mozilla/5.0" --user-agent bot https://x.example.com`,
	})
}

// AWS secret access keys in prose, set by aws configure, beside their key
// id, and in the columns of a credentials.csv that name a secret; hashes
// near the word "secret" and CSV columns that only name one are left
// alone.
func TestAWSSecretKeys(t *testing.T) {
	runExact(t, []string{
		"my aws secret key is «{b64:40}»",
		"aws configure set aws_secret_access_key «{b64:40}»",
		"AWS Secret Access Key [None]: «{b64:40}»",
		"the AWS secret key: «{b64:40}» was rotated",
		`User name,Password,Access key ID,Secret access key\nbob,,«AKIA{upper:16}»,«{b64:40}»`,
		`User name,Password,Access key ID,Secret access key,Console login link\nbob,«{alnum:12}»,«AKIA{upper:16}»,«{b64:40}»,https://123456789012.signin.aws.amazon.com/console`,
		"Access key ID,Secret access key\r\n«AKIA{upper:16}»,«{b64:40}»\r\n",
		"keys: «AKIA{upper:16}» / «{b64:40}»",
		"«ASIA{upper:16}»,«{b64:40}»",
		`name,password,role\nbob,«{alnum:10}»,admin\nalice,«{alnum:10}»,dev\n\nnot,a,row`,
		`"user","api_token"\n"bob","«{alnum:24}»"`,

		"aws secret rotation landed in commit e83c5163316f89bfbde7d9ab23ca2e25604af290",
		"aws secretsmanager get-secret-value --secret-id prod/db --region eu-west-1",
		`id,password_hash,created_at\n1,x,2024-01-01`,
		`name,email_verified,role\nbob,true,admin`,
		`token_count,cost\n12,0.4`,
		`name,password,role\nbob,$BOB_PASSWORD,admin\nalice,,dev`,
		"User name,Password,Access key ID,Secret access key",
		"the user, the password, and the key\nbob, hunter2, and ok",
	})
}

// Twilio auth tokens beside an account SID or after "twilio … auth",
// session cookies in a Cookie or Set-Cookie header or a curl --cookie,
// and Mapbox secret tokens; hashes, other cookies and public tokens are
// left alone.
func TestServiceTokens(t *testing.T) {
	runExact(t, []string{
		`client = Client("AC{hex:32}", "«{hex:32}»")`,
		"Twilio account AC{hex:32}, auth token «{hex:32}»",
		"twilio auth: «{hex:32}»",
		"TWILIO_AUTH_TOKEN=«{hex:32}»",
		"Cookie: sessionid=«{alnum:32}»; theme=dark",
		"Cookie: theme=dark; PHPSESSID=«{alnum:26}»; lang=en",
		"cookie: __Host-next-auth.session-token=«{b64url:60}»",
		"Set-Cookie: _app_session=«{b64url:60}»; Path=/; HttpOnly; Secure",
		"curl -H 'Cookie: JSESSIONID=«{HEX:32}»' https://app.example.com",
		`curl --cookie "connect.sid=«s%3A{b64url:40}»" https://app.example.com`,
		"Cookie: theme=dark; __cf_bm=«{b64url:43}»",
		"mapbox «sk.eyJ1Ijoi{b64url:30}.{b64url:22}»",

		"md5 of twilio-python-9.2.3.tar.gz is d41d8cd98f00b204e9800998ecf8427e",
		"Cookie: theme=dark; lang=en-GB; consent=yes",
		"Set-Cookie: sessionid=; Max-Age=0; Path=/",
		"Cookie: sessionid=$SESSION_ID",
		"the session cookie is HttpOnly and Secure",
		"Mapbox public tokens start with pk.eyJ, secret ones with sk.eyJ",
		"trace id 4bf92f3577b34da6a3ce929d0e0e4736, span id 00f067aa0ba902b7",
	})
}

// Secrets broken up: a key wrapped over lines, URL-encoded, a private
// key's body without its header, a passphrase of several words in prose.
// Certificates, public keys, base64 wrapped at 76 columns, encoded URLs
// without a secret and prose about passwords are left alone.
func TestBrokenUpSecrets(t *testing.T) {
	runExact(t, []string{
		`«sk-proj-{b64url:40}\n{b64url:40}»`,
		`export OPENAI_API_KEY=«sk-proj-{b64url:60}\n{b64url:56}»\nnpm test`,
		"«ghp_{alnum:36}»\r\n«ghp_{alnum:36}»",
		`key=«{b64:64}\n{b64:24}»`,
		`client_secret: «{b64:48}\n  {b64:20}»\nclient_id: app`,
		`token «sk-proj-{b64url:60}\nAb3x»\nThanks!`,
		"the key «sk-proj-{alnum:3}%2B{alnum:30}» leaked",
		"the key «sk-proj-{alnum:24}%2B{alnum:8}» leaked",
		"https://x.example.com/login?user=bob&password%3D«{alnum:10}»",
		"https://app.example.com/login?next=%2Fhome%3Ftoken%3D«{alnum:24}»%26tab%3D2",
		"mailto:«jo.doe%40example.com»",
		`«MIIEvQIBADANBgkqhkiG9w0BAQEFAASC{b64:32}\n{b64:64}\n{b64:64}\n{b64:40}==»`,
		`key body:\n«b3BlbnNzaC1rZXktdjEAAAAA{b64:46}\n{b64:70}\n{b64:70}\n{b64:30}»\nend`,
		`    «MHcCAQEEI{b64:55}\n    {b64:64}\n    {b64:36}»`,
		"the passphrase is «correct horse battery staple»",
		"The passphrase is «purple monkey dishwasher lamp».",
		"my password is «hunter2»",

		`commit e83c5163316f89bfbde7d9ab23ca2e25604af290\nAuthor: Bob`,
		"https://example.com/search?q=password%20reset%20flow and https://x.example.com/docs/My%20Token%20Guide.pdf",
		"https://app.example.com/login?next=%2Fsettings%2Fpassword",
		"100% of the tokens were counted",
		`-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIUaAfaGv7g2XAcF+oc+ATWpO9n8f5q/+s7bM9AF2eUNy5v\nZH1zk8ukSbUFg2bw1DnJYvZiLIxbji764HSqU414EvmTOd8E4lXhYQaleqPpnEV4\nZjEAVUW8qUzqO80aOGKXgfR/Oe6WB/4nadzLu/g/BXQIs6gc8MttPA5POcAzGrDb\nKz6gEU6ji5LL9dGPJifbZKXbG3tg7i4i8GvvvHt+qyJLfHwPdCM+CTPZvpONIBti\nbCsDJ3GbeVvxzaiDVw/06EVd04h8Vjo=\n-----END CERTIFICATE-----`,
		`MIIDdzCCAl+gAwIBAgIUaAfaGv7g2XAcF+oc+ATWpO9n8f5q/+s7bM9AF2eUNy5v\nZH1zk8ukSbUFg2bw1DnJYvZiLIxbji764HSqU414EvmTOd8E4lXhYQaleqPpnEV4\nZjEAVUW8qUzqO80aOGKXgfR/Oe6WB/4nadzLu/g/BXQIs6gc8MttPA5POcAzGrDb`,
		`-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AaSt++qdeGueEyoIq7UGPZg6vlpeQk39X\nbPPJqJx27rugwDOqkcLFDL+zA580YhfjA5BctX/xkts02172AOE4keqE4nNtdCCy\nZKf3hsHAYFZOh2KIggbp3hvlQXSDtL2vo6ESHOzmWkSjLTUZmd8OztHTskQ7+qsV\n-----END PUBLIC KEY-----`,
		`-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQENBDX2V8kapgrZSJzhsDzdtpv9BT6nNssH93pM00fGJ9Z+lAU6IVrWNLEBDgqE\n4yuxhVlg+gi2ILIXLgFblhRUfJR/3hQBCFlQ9pGapSl9TQ2JCTGYrvMdMWJ6Bg+7\nDzu/Z9WEgE3kBH9GJU+J08vnaR3jCwXypHLUW61vhLRAuwozh28U+1REtgZrY4G4\n-----END PGP PUBLIC KEY BLOCK-----`,
		`Public-Lines: 3\nAAAAB3NzaC1yc2EAAAADAQABAAABAQC7aSt++qdeGueEyoIq7UGPZg6vlpeQk39X\nbPPJqJx27rugwDOqkcLFDL+zA580YhfjA5BctX/xkts02172AOE4keqE4nNtdCCy\nZKf3hsHAYFZOh2KIggbp3hvlQXSDtL2vo6ESHOzmWkSjLTUZmd8OztHTskQ7+qsV`,
		`base64 output:\ndylyLc12icqDQx1sC4e7SgdrgIbt886ByBMTpwQqLXDHmr8WjurK8qRD+XFaWFjRXdmLLTP4fH4o\nY7H6b3APQf3M6ZS+4AlJxarpTe42LGNJysGGXR3ZRZavjgPxi634zSgRcDUQocndUFWeZXtPDGea\n6eb9XPUw9PhvW3P2/pXKP0NrRX1GDY1yUcUMIBU8BZLtAdjenKNUBQHYgTjme1t7m9zxxcJlV//N`,
		"the password field is required",
		"the passphrase is required to unlock the key",
		"the password is correct and the login works",
		"the password is weak compared to the old one",
		"the password is the same as the one for staging",
		"the passphrase is long enough now",
	})
}
