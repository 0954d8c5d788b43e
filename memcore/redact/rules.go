package redact

import (
	"regexp"
	"strings"
	"sync"
)

// secretKeys are the key names whose values are secrets in assignments
// (key=value, key: value, key = value, key := value, JSON, XML elements,
// command-line flags). A key may carry a prefix (DB_PASSWORD,
// client_secret, aws_secret_access_key, X-Api-Key, _authToken, SMTP_PASS)
// and one of a few suffixes (SECRET_KEY_BASE), but must otherwise end with
// one of these.
const secretKeys = `(?:password|passwd|passphrase|passcode|[_.-]pass|[_.-]pwd|secret|token|api[_-]?key|apikey|access[_-]?key|` +
	`secret[_-]?key|private[_-]?key|signing[_-]?key|encryption[_-]?key|master[_-]?key|session[_-]?key|auth[_-]?key|` +
	`client[_-]?key|credentials?)(?:[_.-]?(?:base|b64|hex|value|raw))?`

// passwordOption holds the keywords of the rules of a password given with
// the option -p.
var passwordOption = []string{" -p", "\t-p"}

// secretKeyWords are the keywords of the rules built on secretKeys.
var secretKeyWords = []string{"pass", "pwd", "secret", "token", "key", "credential"}

// rules are applied in order, each to the text the previous ones left.
// Specific formats come before generic ones so that, for example, the
// Anthropic key is not half-matched as an OpenAI key, and a token inside an
// assignment is named by its format. They are compiled on first use: a
// process that never redacts (a prompt hook answered by the recall server)
// does not pay for compiling some hundred patterns when it starts.
var rules = sync.OnceValue(func() []rule {
	return []rule{
		// Key material.
		{name: "private key block", keywords: []string{"private key"}, multiline: true, re: regexp.MustCompile(
			`-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)`)},
		{name: "PuTTY private key", keywords: []string{"private-lines:"}, multiline: true, re: regexp.MustCompile(
			`Private-Lines:[ \t]*\d+\r?\n((?:[A-Za-z0-9+/=]+(?:\r?\n|\z))+)`),
			value: func(t string, m []int) (int, int, bool) {
				return m[2], m[2] + len(strings.TrimRight(t[m[2]:m[3]], "\r\n")), true
			}},
		{name: "private key body", scan: keyBodies},
		token("age secret key", "age-secret-key-1", `AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}`, 0),
		token("JWT", "eyj", `eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`, 0),
		token("Grafana API key", "eyjrijoi", `eyJrIjoi[A-Za-z0-9+/]{40,}={0,2}`, 0),
		token("1Password service account token", "ops_eyj", `ops_eyJ[A-Za-z0-9+/=_-]{100,}`, 0),

		// AI providers.
		token("Anthropic key", "sk-ant-", `sk-ant-[A-Za-z0-9_-]{20,}`, 0),
		{name: "OpenAI key", inToken: true, keywords: []string{"sk-"}, re: regexp.MustCompile(`sk-(?:proj-|svcacct-|admin-)?([A-Za-z0-9_-]{20,})`), bounded: true,
			keep: func(t string, m []int) bool { return !randomish(t[m[2]:m[3]]) }},
		{name: "Hugging Face token", inToken: true, keywords: []string{"hf_", "api_org_"}, re: regexp.MustCompile(`(?:hf|api_org)_([A-Za-z0-9]{30,})`), bounded: true,
			keep: func(t string, m []int) bool { return !randomish(t[m[2]:m[3]]) }},
		token("Perplexity key", "pplx-", `pplx-[A-Za-z0-9]{48}\b`, 0),
		token("Groq key", "gsk_", `gsk_[A-Za-z0-9]{52}\b`, 0),
		token("xAI key", "xai-", `xai-[A-Za-z0-9]{80}\b`, 0),
		token("Replicate token", "r8_", `r8_[A-Za-z0-9]{37}\b`, 0),

		// Cloud providers.
		// An AWS secret access key beside its key id — a row of a
		// credentials.csv, "AKIA… / wJal…" — whatever surrounds them. The key
		// id stays for the next rule.
		{name: "AWS secret key beside its key id", scan: awsSecretsBesideIDs},
		{name: "AWS access key id", inToken: true, keywords: awsKeyIDWords, bounded: true, re: awsKeyID()},
		// "aws … secret …" then 40 characters of base64 in upper and lower
		// case: an assignment, a prompt, "my aws secret key is …", aws
		// configure set aws_secret_access_key …; not a 40-digit hex hash.
		{name: "AWS secret key", keywords: []string{"aws"}, groups: []int{1}, re: regexp.MustCompile(
			`(?i)aws.{0,30}?secret.{0,30}?[:= \t][ \t]*["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`),
			keep: func(t string, m []int) bool { return !mixedCase(t[m[2]:m[3]]) }},
		token("Google API key", "aiza", `AIza[0-9A-Za-z_-]{35}`, 0),
		token("Google OAuth client secret", "gocspx-", `GOCSPX-[A-Za-z0-9_-]{28}`, 0),
		token("Google OAuth token", "ya29.", `ya29\.[A-Za-z0-9_-]{30,}`, 0),
		token("Google OAuth refresh token", "1//0", `1//0[A-Za-z0-9_-]{40,}`, 0),
		{name: "Azure storage key", keywords: []string{"accountkey=", "sharedaccesskey="}, groups: []int{1}, re: regexp.MustCompile(
			`(?i)\b(?:AccountKey|SharedAccessKey)=([A-Za-z0-9+/]{40,}={0,2})`)},
		{name: "Azure SAS signature", keywords: []string{"sig="}, groups: []int{1}, re: regexp.MustCompile(
			`[?&]sig=([A-Za-z0-9%+/_-]{30,}={0,2})`)},
		{name: "Azure AD client secret", inToken: true, keywords: []string{"q~"}, re: regexp.MustCompile(`\b[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}`)},
		token("DigitalOcean token", "_v1_", `do[opr]_v1_[a-f0-9]{64}\b`, 0),
		token("Heroku API key", "hrku-", `HRKU-[A-Za-z0-9_-]{58,}`, 0),
		token("Alibaba access key id", "ltai", `LTAI[A-Za-z0-9]{20}\b`, 0),
		token("Fly.io token", "fo1_", `fo1_[A-Za-z0-9_-]{43,}`, 0),
		token("Scalingo token", "tk-us-", `tk-us-[A-Za-z0-9_-]{48,}`, 0),
		token("OpenShift token", "sha256~", `sha256~[A-Za-z0-9_-]{43,}`, 0),

		// Source hosting, CI, infrastructure.
		{name: "GitHub token", inToken: true, keywords: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}, bounded: true,
			re: regexp.MustCompile(`(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})`)},
		{name: "GitLab token", inToken: true, keywords: []string{"glpat-", "gldt-", "glrt-", "glptt-", "glft-", "glsoat-", "glcbt-", "glimt-", "glagent-", "gloas-", "glffct-", "gr1348941"},
			bounded: true, re: regexp.MustCompile(
				`(?:(?:glpat|gldt|glrt|glptt|glft|glsoat|glcbt|glimt|glagent|gloas|glffct)-[A-Za-z0-9_.-]{20,}|GR1348941[A-Za-z0-9_-]{20,})`)},
		token("Bitbucket app password", "atbb", `ATBB[A-Za-z0-9_=.-]{28,}`, 0),
		token("Atlassian API token", "atatt3", `ATATT3[A-Za-z0-9_=.-]{50,}`, 0),
		{name: "HashiCorp Vault token", inToken: true, keywords: []string{"hvs.", "hvb.", "hvr."}, bounded: true, re: regexp.MustCompile(`hv[sbr]\.[A-Za-z0-9_-]{24,}`)},
		token("Terraform Cloud token", "atlasv1", `[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}`, 0),
		token("Pulumi token", "pul-", `pul-[a-f0-9]{40}\b`, 0),
		token("Doppler token", "dp.", `dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9_.]{40,}`, 0),
		token("Databricks token", "dapi", `dapi[a-f0-9]{32}(?:-\d)?\b`, 0),
		token("Dynatrace token", "dt0", `dt0[a-z]\d{2}\.[A-Z0-9]{24}\.[A-Z0-9]{64}\b`, 0),
		token("Grafana Cloud token", "glc_", `glc_[A-Za-z0-9+/]{32,}={0,2}`, 0),
		token("Grafana service account token", "glsa_", `glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b`, 0),
		{name: "New Relic key", inToken: true, keywords: []string{"nrak-", "nrjs-", "nrii-"}, bounded: true, re: regexp.MustCompile(`NR(?:AK|JS|II)-[A-Za-z0-9_-]{19,}`)},
		token("Sentry token", "sntry", `sntry[su]_[A-Za-z0-9+/=_-]{40,}`, 0),
		token("Postman API key", "pmak-", `PMAK-[a-f0-9]{24}-[a-f0-9]{34}\b`, 0),
		token("JFrog Artifactory key", "akcp", `AKCp[A-Za-z0-9]{69}\b`, 0),
		token("PlanetScale token", "pscale_", `pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{32,}`, 0),
		token("Prefect API key", "pnu_", `pnu_[A-Za-z0-9]{36}\b`, 0),
		token("ReadMe API key", "rdme_", `rdme_[a-z0-9]{70}\b`, 0),
		token("Infracost API key", "ico-", `ico-[A-Za-z0-9]{32}\b`, 0),
		token("Octopus Deploy API key", "api-", `API-[A-Z0-9]{26}\b`, 0),
		token("Contentful token", "cfpat-", `CFPAT-[A-Za-z0-9_-]{43,}`, 0),
		token("Typeform token", "tfp_", `tfp_[A-Za-z0-9_.=-]{59,}`, 0),

		// Package registries.
		token("npm token", "npm_", `npm_[A-Za-z0-9]{36}\b`, 0),
		token("PyPI token", "pypi-", `pypi-AgE[A-Za-z0-9_-]{50,}`, 0),
		token("NuGet API key", "oy2", `oy2[a-z0-9]{43}\b`, 0),
		token("RubyGems key", "rubygems_", `rubygems_[a-f0-9]{48}\b`, 0),
		token("Clojars token", "clojars_", `CLOJARS_[a-z0-9]{60}\b`, 0),

		// Messaging, mail, payments, productivity.
		{name: "Slack token", inToken: true, keywords: []string{"xox", "xapp-"}, bounded: true,
			re:   regexp.MustCompile(`(?:xox[abposre](?:\.xox[bp])?|xapp-\d)-([A-Za-z0-9-]{10,})`),
			keep: func(t string, m []int) bool { return !randomish(t[m[2]:m[3]]) }},
		{name: "Slack webhook", keywords: []string{"hooks.slack.com"}, re: regexp.MustCompile(
			`https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]+`)},
		{name: "Discord webhook", keywords: []string{"discord"}, groups: []int{1}, re: regexp.MustCompile(
			`https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/([A-Za-z0-9_-]{60,})`)},
		{name: "Discord bot token", inToken: true, keywords: []string{"."}, re: regexp.MustCompile(
			`\b[MNO][A-Za-z0-9_-]{23,27}\.([A-Za-z0-9_-]{6})\.([A-Za-z0-9_-]{27,40})\b`),
			keep: func(t string, m []int) bool { return !randomish(t[m[0]:m[2]-1]) || !randomish(t[m[4]:m[5]]) }},
		{name: "Telegram bot token", inToken: true, keywords: []string{":aa"}, re: regexp.MustCompile(`\b\d{8,10}:AA[A-Za-z0-9_-]{33}`)},
		token("Twilio API key", "sk", `SK[0-9a-fA-F]{32}\b`, 0),
		{name: "Twilio auth token", scan: twilioAuthTokens},
		token("SendGrid API key", "sg.", `SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}`, 0),
		token("Mailgun API key", "key-", `(?:pub)?key-[0-9a-f]{32}\b`, 0),
		{name: "Mailchimp API key", inToken: true, keywords: []string{"-us"}, re: regexp.MustCompile(`\b[0-9a-f]{32}-us\d{1,2}\b`)},
		token("Brevo API key", "xkeysib-", `xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}\b`, 0),
		{name: "Stripe key", inToken: true, keywords: []string{"_live_", "_test_", "_prod_", "whsec_"}, bounded: true, re: regexp.MustCompile(
			`(?:sk|rk|pk)_(?:live|test|prod)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,}`)},
		token("Square token", "sq0", `sq0(?:atp|csp|idp)-[0-9A-Za-z_-]{22,}`, 0),
		token("Square access token", "eaaa", `EAAA[A-Za-z0-9_=+-]{56,}`, 20),
		token("Shopify token", "shp", `shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b`, 0),
		token("Shippo token", "shippo_", `shippo_(?:live|test)_[a-f0-9]{40}\b`, 0),
		{name: "EasyPost key", inToken: true, keywords: []string{"ezak", "eztk"}, bounded: true, re: regexp.MustCompile(`EZ[AT]K[A-Za-z0-9]{54}\b`)},
		{name: "Flutterwave key", inToken: true, keywords: []string{"flwseck", "flwpubk"}, bounded: true, re: regexp.MustCompile(`FLW(?:SECK|PUBK)(?:_TEST)?-[a-f0-9]{32}-X\b`)},
		token("Duffel token", "duffel_", `duffel_(?:test|live)_[A-Za-z0-9_=-]{43,}`, 0),
		token("Linear API key", "lin_", `lin_(?:api|oauth)_[A-Za-z0-9]{40,64}\b`, 0),
		token("Notion token", "ntn_", `ntn_[A-Za-z0-9]{40,}`, 0),
		token("Notion token", "secret_", `secret_[A-Za-z0-9]{43}\b`, 43),
		{name: "Mapbox secret token", inToken: true, keywords: []string{"sk.eyj", "tk.eyj"}, bounded: true,
			re: regexp.MustCompile(`[st]k\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}`)},
		token("Airtable token", "pat", `pat[A-Za-z0-9]{14}\.[a-f0-9]{64}\b`, 0),
		token("Adobe client secret", "p8e-", `p8e-[A-Za-z0-9]{32}\b`, 0),

		// Credentials in standard places.
		{name: "registry auth", keywords: []string{`"auth"`, "_auth"}, groups: []int{1}, re: regexp.MustCompile(
			`(?:"auth"[ \t]*:[ \t]*"|\b_auth[ \t]*=[ \t]*)([A-Za-z0-9+/]{4,}={0,2})`),
			keep: func(t string, m []int) bool { return !userPassword(t[m[2]:m[3]]) }},
		{name: "basic auth", keywords: []string{"basic"}, groups: []int{1}, re: regexp.MustCompile(
			`(?i)\bbasic[ \t]+([A-Za-z0-9+/]{4,}={0,2})`),
			keep: func(t string, m []int) bool { return !userPassword(t[m[2]:m[3]]) }},
		{name: "bearer token", keywords: []string{"bearer"}, groups: []int{1}, re: regexp.MustCompile(
			`(?i)\bbearer[ \t]+([A-Za-z0-9._~+/-]{16,}=*)`),
			keep: func(t string, m []int) bool { return !randomish(t[m[2]:m[3]]) }},
		{name: "session cookie", scan: sessionCookies},
		// The password is everything up to the last '@' of the authority, so
		// one holding an unencoded '@' is redacted whole.
		{name: "URL password", keywords: []string{"://"}, groups: []int{1}, re: regexp.MustCompile(
			`\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#@]*:([^\s/?#]+)@`)},
		// Passwords given on a command line: mysql's -pVALUE (only attached:
		// mysql -p db prompts, and db is the database), sshpass -p, the -p of
		// a registry or cloud login, and the password of curl -u user:password.
		// The keywords are the options, rarer than the commands' names.
		commandArg("mysql password", passwordOption, `\b(?:mysql|mariadb)[a-z-]*\b[^\n]*?[ \t]-p`, nil),
		commandArg("sshpass password", passwordOption, `\bsshpass(?:[ \t]+-[ev])*[ \t]+-p[ \t]*`, nil),
		commandArg("login password", passwordOption,
			`\b(?:docker|podman|nerdctl|buildah|skopeo|oras|crane|regctl|registry|cf|oc|acr|az)[ \t]+login\b[^\n]*?[ \t]-p(?:[ \t]+)?`, nil),
		commandArg("curl password", []string{" -u", "\t-u", "--user"}, `\bcurl\b[^\n]*?[ \t](?:-u[ \t]*|--user(?:[ \t]+|=))`, userPasswordArg),
		{name: "CSV secret column", scan: csvSecretColumns},
		{name: "netrc password", keywords: []string{"machine"}, multiline: true, groups: []int{1}, re: regexp.MustCompile(
			`(?i)\bmachine[ \t]+\S+\s+(?:login[ \t]+\S+\s+)?password[ \t]+(\S+)`)},
		{name: "secret element", keywords: []string{"</"}, groups: []int{1}, re: regexp.MustCompile(
			`(?i)<[A-Za-z0-9_.:-]*` + secretKeys + `>([^<\n]+)</`),
			keep: func(t string, m []int) bool { return reference(strings.TrimSpace(t[m[2]:m[3]])) }},
		// key=value: any value. key: value, key = value: a value that is not a
		// plain word or code. key := value: a quoted or machine-made value.
		// See assignedValue.
		{name: "secret assignment", scan: func(text, lower string, _ [][2]int) [][2]int {
			return scanKeys(text, lower, secretKeyWords, secretKeyName, assignment)
		}},
		{name: "secret flag", scan: func(text, lower string, _ [][2]int) [][2]int {
			return scanKeys(text, lower, secretKeyWords, secretKeyName, flag)
		}},
		// Pwd=… is a password in a connection string, where ';' separates the
		// settings; PWD=/home/bob, the shell's working directory, is not.
		{name: "connection string password", scan: func(text, lower string, _ [][2]int) [][2]int {
			return scanKeys(text, lower, []string{"pwd"}, func(key string) bool { return key == "pwd" }, connectionPassword)
		}},
		{name: ".pgpass password", scan: pgpassPasswords},
		{name: "password in prose", keywords: []string{"pass"}, re: regexp.MustCompile(
			`(?i)\b(?:password|passwd|passphrase|passcode)(?:[ \t]+(?:for|of|on|to)[ \t]+[^\n.;:=!?]{1,40}?)?[ \t]+(?:is|was|are|were)[ \t]+` +
				`(?:now[ \t]+|still[ \t]+|set[ \t]+to[ \t]+|changed[ \t]+to[ \t]+)?`),
			value: func(t string, m []int) (int, int, bool) { return proseValue(t, m[1]) }},
		// "the DB password hunter2secret": a password right after the word,
		// with neither "is" nor ':' or '=', when it cannot be a word of the
		// sentence (see wordAfterPassword).
		{name: "password after the word", keywords: []string{"pass"}, re: regexp.MustCompile(
			`(?i)\b(?:password|passwd|passphrase|passcode)[ \t]+`),
			value: func(t string, m []int) (int, int, bool) { return wordAfterPassword(t, m[1]) }},
		// "login admin / Sup3rS3cret!", "credentials: deploy/Xk9pq7Lm2", "user
		// bob:hunter2secret": a user name and its password after a word that
		// names a login, separated by a slash (space around it allowed) or a
		// colon (none), the password as wordAfterPassword wants it.
		{name: "login and password", keywords: []string{"log", "cred", "user"}, re: regexp.MustCompile(
			`(?i)\b(?:login|log[ \t]+in[ \t]+(?:as|with)|credentials?|creds|username|user)(?:[ \t]+(?:is|was))?[ \t]*[:=]?[ \t]+[\w.@+-]{1,40}(?:[ \t]*/[ \t]*|:)`),
			value: func(t string, m []int) (int, int, bool) { return wordAfterPassword(t, m[1]) }},
		// Any other assignment to a key that names a credential, when the
		// value looks machine-made: at least 16 characters, mixed, with high
		// entropy.
		{name: "high-entropy secret", scan: func(text, lower string, _ [][2]int) [][2]int {
			return scanKeys(text, lower, credentialWords, credentialKeyName, highEntropy)
		}},

		{name: "e-mail address", keywords: []string{"@"}, re: regexp.MustCompile(`\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b`),
			keep: func(t string, m []int) bool {
				// git@host is an SSH remote; user@host after "://" is a URL's
				// user name, kept as the URL rule keeps it.
				return strings.HasPrefix(t[m[0]:m[1]], "git@") || strings.HasSuffix(t[:m[0]], "://")
			}},

		// Last: the secrets the rules above find in URL-encoded words once
		// decoded (see encodedSecrets), which must stay the last rule.
		{name: "URL-encoded secret", scan: encodedSecrets},
	}
})

// secretKeyName reports whether key, a key name in lower case, ends with
// one of secretKeys (see there), or is "pass".
func secretKeyName(key string) bool {
	if key == "pass" {
		return true
	}
	for _, suffix := range []string{"base", "b64", "hex", "value", "raw"} {
		if k, ok := strings.CutSuffix(key, suffix); ok {
			key = strings.TrimRight(k, "_.-")
			break
		}
	}
	for _, end := range secretKeyEnds {
		if strings.HasSuffix(key, end) {
			return true
		}
	}
	return false
}

// secretKeyEnds are the endings of secretKeys, spelled out.
var secretKeyEnds = func() []string {
	ends := []string{"password", "passwd", "passphrase", "passcode", "_pass", ".pass", "-pass", "_pwd", ".pwd", "-pwd",
		"secret", "token", "apikey", "credential", "credentials"}
	for _, k := range []string{"api", "access", "secret", "private", "signing", "encryption", "master", "session", "auth", "client"} {
		ends = append(ends, k+"key", k+"_key", k+"-key")
	}
	return ends
}()

// credentialWords are the words of which a key name that names a
// credential holds one.
var credentialWords = []string{"key", "token", "secret", "passw", "pwd", "auth", "credential", "creds"}

// notCredentialEnds are the endings of key names that hold something about
// a credential rather than the credential: its id, where it is, its type,
// its size, a hash.
var notCredentialEnds = strings.Fields(`id ids url uri path file dir name type version count size len length hash
	digest checksum sha sha1 sha256 header method mode endpoint host domain region scope scopes expiry expires ttl
	timeout format prefix kind algorithm alg enabled required policy`)

// credentialKeyName reports whether key (lower case) names a credential
// for the high-entropy rule.
func credentialKeyName(key string) bool {
	for _, end := range notCredentialEnds {
		if strings.HasSuffix(key, end) {
			return false
		}
	}
	return true
}

// highEntropy is the value of an assignment to a credential key when it
// looks machine-made: at least 16 characters, mixed (see randomish), with
// an entropy of at least 3 bits per character.
func highEntropy(text string, a keyAt) (int, int, bool) {
	start, end, ok := assignment(text, a)
	if !ok {
		return 0, 0, false
	}
	v := text[start:end]
	if len(v) < 16 || !randomish(v) || entropy(v) < 3.0 {
		return 0, 0, false
	}
	return start, end, true
}
