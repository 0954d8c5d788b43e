// Package redact finds secrets in text and replaces them with
// [Placeholder], so that no write path of forgemem — the capture pipeline,
// a command that remembers something by hand, command-line tools, a server
// — stores a credential or a personal identifier in a memory file, and no
// log line repeats one.
//
// [Text] redacts a text; [Find] reports where the secrets of a text are,
// for an audit of files already on disk. Both are deterministic: the rules
// are regular expressions and small scanners fixed at compile time, applied
// in a fixed order, specific formats first. They find:
//
//   - tokens recognised by their format: AWS access key ids (and the
//     secret access key beside one, or after "aws … secret"), Google API
//     keys, OAuth client secrets and tokens, Azure storage, Service Bus,
//     SAS and AD client secrets, GitHub (ghp_, gho_, ghu_, ghs_, ghr_,
//     github_pat_), GitLab (glpat-, gldt-, glrt-, glptt-, glft-, glcbt-,
//     glsoat-, gloas-, glimt-, glagent-, glffct-, GR1348941), Bitbucket and
//     Atlassian, Slack (every xox… kind, xapp-, web hooks), Discord (bot
//     tokens, web hooks), Telegram bot tokens, Stripe, Square, Shopify,
//     Twilio (API keys, and auth tokens beside an account SID), SendGrid,
//     Mailgun, Mailchimp, Brevo, npm, PyPI, NuGet,
//     RubyGems, Clojars, Hugging Face, OpenAI, Anthropic, Perplexity, Groq,
//     xAI, Replicate, DigitalOcean, Heroku, Alibaba, Fly.io, Scalingo,
//     OpenShift, HashiCorp Vault and Terraform Cloud, Pulumi, Doppler,
//     Databricks, Dynatrace, Grafana, New Relic, Sentry, Postman, JFrog,
//     PlanetScale, Prefect, ReadMe, Infracost, Octopus Deploy, Contentful,
//     Typeform, Linear, Notion, Airtable, Adobe, Shippo, EasyPost,
//     Flutterwave, Duffel, Mapbox secret tokens, 1Password service
//     accounts; where a format
//     leaves room for words (sk-…, xoxb-…, hf_…) the part after the prefix
//     must look machine-made;
//   - private keys: PEM blocks (RSA, EC, PKCS #8, encrypted, OpenSSH, PGP;
//     an unterminated one to the end of the text), their bodies without
//     the -----BEGIN line (lines of 64 or 70 characters of base64; not a
//     certificate's or a public key's), the private lines of PuTTY key
//     files, age secret keys; JSON Web Tokens;
//   - credentials in standard places: Bearer tokens, Basic credentials
//     (Authorization: Basic, the auth of a Docker config.json, _auth in
//     .npmrc; base64 of user:password), session cookies (in a Cookie or
//     Set-Cookie header, curl --cookie), the password of a URL
//     (scheme://user:password@host keeps user and host), .netrc and
//     .pgpass passwords, the Pwd of a connection string, passwords on a
//     command line (mysql -pVALUE, sshpass -p, docker login -p and other
//     logins, curl -u user:password), the columns of a CSV table whose
//     header names a secret (an AWS credentials.csv);
//   - assigned values of keys that name a secret — password, passwd,
//     passphrase, passcode, secret, token, api_key, access_key, secret_key,
//     private_key, signing_key, encryption_key, credentials and the like,
//     with any prefix (DB_PASSWORD, client_secret, X-Api-Key, _authToken),
//     and _pass (SMTP_PASS):
//     key=value (any value, up to white space, whatever it holds; in a URL
//     query up to the next '&'), a quoted value (backslash escapes
//     honoured), key: value and key = value unless the value is a plain
//     word or code (a YAML block scalar, password: |, on the lines that
//     follow), key := value when quoted or machine-made, command-line
//     flags (--api-key VALUE), XML elements (<password>…</password>); a
//     machine-made value of any other key that names a credential;
//   - "the password is …" in prose (unless a word that reads as prose
//     follows; "the passphrase is correct horse battery staple" gives
//     several words), a password right after the word ("the DB password
//     hunter2secret": a word of 8 characters or more mixing letters and
//     digits, not the name of a hash or of code), a user name and its
//     password after a word that names a login ("login admin /
//     Sup3rS3cret!", "user bob:hunter2secret"), and e-mail addresses (but
//     not git@host remotes or a URL's user name);
//   - any of these URL-encoded: a word holding percent-escapes is decoded
//     and scanned again (password%3D…, sk-proj-abc%2Bdef…).
//
// A machine-made secret goes on past the escapes of its characters
// (…abc%2Bdef) and over the lines that continue it alone (a key wrapped by
// a terminal or an editor).
//
// Look-alikes are left alone: UUIDs, git and other hashes, lock-file
// checksums (go.sum, package-lock.json, Cargo.lock, pip --hash), base64
// images, versions, memory ids, hex colours, URLs without a password,
// public keys and certificates, and code or configuration that names a
// secret without holding one: os.Getenv("TOKEN"), ${{ secrets.X }}, $VAR,
// {{ var }}, <your-api-key>, ********, login(password=pw), password ==
// "", Field(..., env='API_KEY').
//
// Redaction is idempotent: a redacted text holds no more secrets, and a
// [Placeholder] is never redacted again.
//
// Rules look only where they can match: a rule runs only on the lines that
// hold one of its keywords, and the token formats only inside the
// machine-made words of the text, which are found in one pass; a 100 KB
// conversation is redacted in about 10 ms.
package redact
