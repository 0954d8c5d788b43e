// Package redact finds secrets in text and replaces them with
// [Placeholder], so that no write path of forgemem — the capture pipeline,
// a command that remembers something by hand, command-line tools, a server
// — stores a credential or a personal identifier in a memory file.
//
// [Text] redacts a text; [Find] reports where the secrets of a text are,
// for an audit of files already on disk. Both are deterministic: the rules
// are regular expressions compiled once, applied in a fixed order, specific
// formats first. They find:
//
//   - API keys and tokens of OpenAI (sk-…, sk-proj-…, sk-svcacct-…,
//     sk-admin-…; the part after the prefix must look machine-made),
//     Anthropic (sk-ant-…), AWS (access key ids AKIA…/ASIA…/ABIA…/ACCA…,
//     and 40-character secret access keys next to an "aws … secret" key),
//     GitHub (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_), Google (AIza…),
//     Slack (xoxb-, xoxp-, xoxa-, xoxr-, xoxs-, xoxo-, xapp-, and
//     hooks.slack.com web hooks) and Stripe (sk_/rk_/pk_ live and test
//     keys, whsec_);
//   - PEM private key blocks (an unterminated one to the end of the text);
//   - JSON Web Tokens (eyJ….….…) and other bearer tokens;
//   - the password of a URL (scheme://user:password@host keeps user and
//     host);
//   - the values of password, passwd, passphrase, secret, token, api_key,
//     apikey, access_key, secret_key, private_key and credential(s) keys,
//     with any key prefix (DB_PASSWORD, client_secret, X-Api-Key):
//     key=value always, a quoted value always, key: value and key = value
//     when the value is not a plain word;
//   - e-mail addresses (but not git@host remotes or a URL's user name).
//
// Look-alikes are left alone: "sk-" inside words ("risk-based"),
// hyphenated prose after sk-, prefixes named in prose, commit hashes, UUIDs
// and memory ids, a key with no value ("password=", "password= empty"),
// max_tokens=4096, "the password: required", URLs without a password,
// version strings, "eyJ" in prose, public keys and certificates.
//
// Redaction is idempotent: a redacted text holds no more secrets, and a
// [Placeholder] is never redacted again.
package redact
