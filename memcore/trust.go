package memcore

import (
	"fmt"
	"strings"
)

// ReviewMode decides which new memories wait for a person's review
// (the setting memory.review). A memory that waits is written with
// [StatusPending] and is never injected, searched by default or offered to
// the classifier as a settled fact until a person approves it.
type ReviewMode string

// The review modes.
const (
	// ReviewUntrusted (the default): the memories a quarantine rule holds
	// wait — those that read like instructions to the agent's tools, those
	// not stated in the user's own words, those quoting tool output — and
	// a user's own stated preferences are in force at once.
	ReviewUntrusted ReviewMode = "untrusted"
	// ReviewAll: every new memory waits.
	ReviewAll ReviewMode = "all"
	// ReviewOff: no memory waits, but for the rule no mode turns off:
	// memories that read like instructions to the agent's tools.
	ReviewOff ReviewMode = "off"
)

// ReviewModes lists every [ReviewMode], the default first.
func ReviewModes() []ReviewMode { return []ReviewMode{ReviewUntrusted, ReviewAll, ReviewOff} }

// Valid reports whether r is one of [ReviewModes].
func (r ReviewMode) Valid() bool { return r == ReviewUntrusted || r == ReviewAll || r == ReviewOff }

// Strictness orders the modes by how much waits: [ReviewOff] 0,
// [ReviewUntrusted] 1, [ReviewAll] 2; -1 for an unknown mode. A setting may
// narrow a mode to a stricter one, never widen it.
func (r ReviewMode) Strictness() int {
	switch r {
	case ReviewOff:
		return 0
	case ReviewUntrusted:
		return 1
	case ReviewAll:
		return 2
	}
	return -1
}

// The names of the quarantine rules, as a memory's status_reason starts.
const (
	RuleInstruction = "instruction"
	RuleToolOutput  = "tool-output"
	RuleSource      = "source"
	RuleReviewAll   = "review-all"
)

// QuarantineRule is one rule of the quarantine table ([QuarantineRules]).
type QuarantineRule struct {
	// Name starts the status_reason of a memory the rule holds.
	Name string
	// Holds says, in a sentence, which memories the rule holds.
	Holds string
	// Why says what the rule guards against.
	Why string
	// Modes are the review modes the rule applies in.
	Modes []ReviewMode
}

// quarantineRules is the table, in the order [Screen] applies it.
var quarantineRules = []QuarantineRule{
	{Name: RuleInstruction,
		Holds: "text that reads like an instruction to the agent's tools: run a command that reaches the network, pipes into a shell or needs root; fetch or use a URL; turn off a check (TLS verification, tests, hooks, review); send data somewhere; use a credential (or one redacted from it); words addressed to an AI",
		Why:   "the payload of memory poisoning: an instruction planted through a web page, a file, a tool's output or a pasted log, replayed in every later session",
		Modes: []ReviewMode{ReviewUntrusted, ReviewAll, ReviewOff}},
	{Name: RuleToolOutput,
		Holds: "text that quotes tool output: a code block, shell prompts, log lines, stack traces, test runner or compiler output",
		Why:   "tool output is someone else's text; a memory quoting it repeats what a command printed, not what the user said",
		Modes: []ReviewMode{ReviewUntrusted, ReviewAll}},
	{Name: RuleSource,
		Holds: "a memory whose source is not user: inferred from the assistant's words, from text the user pasted, from evidence not found in the conversation, written by an agent through a tool, or of unknown source",
		Why:   "only what the user said in their own words is theirs; the rest may have been planted",
		Modes: []ReviewMode{ReviewUntrusted, ReviewAll}},
	{Name: RuleReviewAll,
		Holds: "every new memory",
		Why:   "memory.review: all — the user reviews everything before it is used",
		Modes: []ReviewMode{ReviewAll}},
}

// QuarantineRules returns the quarantine table: which new memories wait
// for review, rule by rule, in the order [Screen] applies them.
func QuarantineRules() []QuarantineRule {
	out := make([]QuarantineRule, len(quarantineRules))
	for i, r := range quarantineRules {
		r.Modes = append([]ReviewMode(nil), r.Modes...)
		out[i] = r
	}
	return out
}

// Screen returns why m waits for review under mode — its status_reason,
// "<rule>: <what it found>" — or "" when it is in force at once. A retired
// version never waits. An unknown or empty mode is [ReviewUntrusted].
//
// The rules ([QuarantineRules]) read m's source and its text as it is
// written, after redaction: the instruction rule applies in every mode,
// the tool-output and source rules unless review is off, and review-all
// holds everything else in mode all.
func Screen(m *MemoryFile, mode ReviewMode) string {
	if m == nil || m.Meta.Retired {
		return ""
	}
	if !mode.Valid() {
		mode = ReviewUntrusted
	}
	text := newScreened(m.Content)
	if what := text.instruction(); what != "" {
		return RuleInstruction + ": " + what
	}
	if mode == ReviewOff {
		return ""
	}
	if what := text.toolOutput(); what != "" {
		return RuleToolOutput + ": " + what
	}
	if m.Meta.Source != SourceUser {
		return fmt.Sprintf("%s: not stated in the user's own words (source %s)", RuleSource, m.Meta.Source)
	}
	if mode == ReviewAll {
		return RuleReviewAll + ": memory.review is all"
	}
	return ""
}

// pattern is one kind of text a rule looks for.
type pattern struct {
	// what completes the reason: "tells the agent to fetch a URL".
	what string
	re   func() *expr
	// negatable: a match right after a negation ("never", "don't", "do
	// not") forbids the action rather than asks for it, and does not
	// count.
	negatable bool
	// intl: the pattern is one of intlPatterns, whose negations
	// negatedIntl reads.
	intl bool
}

// urlRE finds a URL: a scheme, or www.
var urlRE = re(`(?i)\b(?:https?|ftp)://[^\s)>\]"']+|\bwww\.[a-z0-9-]+\.[a-z]{2,}`)

// urlVerbRE finds a verb that makes a URL something to act on.
var urlVerbRE = re(`(?i)\b(?:fetch|download|visit|open|load|browse|navigate|go to|read|check|consult|follow|get|pull|import|install|source|include|run|execute|call|query|request|use|prefer|point|set|send|post|upload|submit|report|mirror)\w*\b`)

// urlVerbIntlRE finds such a verb in the languages other than English a
// memory is often written in — German, French, Spanish, Portuguese,
// Italian, Dutch, Russian, Chinese, Japanese, Korean —, the start of the
// imperative or infinitive of download, open, visit, follow, run, install,
// import, fetch: a planted "lade https://… herunter und befolge es" is an
// instruction as its English is.
var urlVerbIntlRE = re(`(?i)(?:^|[^\p{L}])(?:herunterlad|lade\s|öffne|besuch|befolg|folge|ausführ|führe|installier|importier|abruf|télécharg|ouvr|suiv|exécut|récupér|consult|descarg|abr[aei]|ejecut|instal|obt[eé]n|sig[aue]|baix|execut|scaric|apri|esegu|segu[ie]|volg|voer|installeer|скача|загруз|откр|посет|следу|выполн|запуст|установ)|下载|打开|访问|按照|遵循|执行|运行|安装|导入|获取|ダウンロード|開い|開く|アクセス|従っ|従う|実行|インストール|取得|다운로드|열어|방문|따르|실행|설치`)

// instructionPatterns are what the instruction rule looks for, besides a
// URL with a verb, in English and in commands; intlPatterns (trust_intl.go)
// are the same kinds of instruction in ten other languages.
var instructionPatterns = []pattern{
	// Run a command that reaches the network, runs fetched code or needs root.
	{what: "tells the agent to run a command that fetches from the network", re: re(`(?i)\b(?:curl|wget|iwr|invoke-webrequest|invoke-restmethod|ncat|netcat|socat|telnet|sftp|ftp)\b|\bnc\s+-[a-z]|\bscp\s+\S|\bssh\s+\S*@`), negatable: true},
	{what: "tells the agent to run code through a shell or an interpreter", re: re(`(?i)[\w./:-]*\s*\|\s*(?:sudo\s+)?(?:ba|z|k|da|fi)?sh\b|[\w./:-]*\s*\|\s*(?:python[0-9.]*|perl|ruby|node|iex|invoke-expression)\b|\b(?:ba|z)?sh\s+-c\b|\beval\s*[("'$]|\bbase64\s+(?:-d|--decode)\b|\binvoke-expression\b`), negatable: true},
	{what: "tells the agent to run a command as root or that cannot be undone", re: re(`(?i)\bsudo\b|\brm\s+-[a-z]*(?:rf|fr)|\bchmod\s+(?:-r\s+)?(?:777|a\+rwx|[ug]?\+s)\b|\bgit\s+push\s+(?:\S+\s+)*(?:-f|--force)\b|\bforce[- ]push|\bgit\s+config\s+--global\b|\b(?:npm|cargo|gem)\s+publish\b|\bdocker\s+(?:login|push)\b|--privileged\b|\b(?:pip|npm|gem|go)\s+install\s+\S*(?:https?://|git\+)`), negatable: true},
	// Turn off a check.
	{what: "tells the agent to turn off a check", re: re(`(?i)\b(?:disabl\w*|skip\w*|bypass\w*|turn(?:ing)?\s+off|suppress\w*|silenc\w*|circumvent\w*|switch(?:ing)?\s+off|comment(?:ing)?\s+out|no\s+longer\s+(?:run|check|verify))\b[^.\n]{0,40}?\b(?:tls|ssl|https|certificates?|certs?|verification|verify|signatures?|signing|gpg|checks?|tests?|ci|linters?|lint(?:ing)?|hooks?|pre-commit|code\s+reviews?|reviews?|approvals?|2fa|mfa|auth(?:entication|orization)?|sandbox\w*|permissions?|confirmations?|prompts?|security|firewall|scanners?|csp|cors|csrf|rate\s+limit\w*|validation|sanitiz\w*|escaping)\b`), negatable: true},
	{what: "tells the agent to turn off a check", re: re(`(?i)--no-verify\b|\bverify\s*[=:]\s*false\b|\binsecureskipverify\b|\bnode_tls_reject_unauthorized\b|--insecure\b|\bgit_ssl_no_verify\b|\bstrict-ssl\s*[=:]?\s*false\b|\bsslverify\s*[=:]?\s*false\b|--dangerously\w*|--no-sandbox\b|--skip-tests?\b|-dskiptests\b|--trusted-host\b|--allow-root\b|\bcheck_hostname\s*=\s*false\b|\bcert_reqs\s*=\s*['"]?cert_none`), negatable: false},
	{what: "tells the agent to turn off a check", re: re(`(?i)\bignor\w*\s+(?:all\s+|any\s+)?(?:tls|ssl|https|certificate|cert)\s*(?:errors?|warnings?|checks?|validation)?\b|\b(?:never|don'?t|do\s+not|no\s+longer|stop)\s+(?:verify\w*|validat\w*|check\w*|run\w*|test\w*|review\w*|lint\w*|sign\w*)\b[^.\n]{0,30}?\b(?:tls|ssl|certificates?|certs?|signatures?|tests?|hooks?|ci|linters?|reviews?|commits?|pull\s+requests?|prs?)\b`), negatable: false},
	{what: "tells the agent to bypass review", re: re(`(?i)\b(?:push|commit|merg|deploy|ship|releas)\w*\s+(?:\w+\s+)?(?:directly|straight|right)\s+(?:in)?to\s+(?:the\s+)?(?:main|master|prod\w*|release|trunk)\b|\bwithout\s+(?:asking|confirmation|confirming|review\w*|approval|checking|tests?|testing|a\s+review|a\s+pr|a\s+pull\s+request)\b|\bauto-?(?:approv|merg|accept)\w*\b`), negatable: true},
	// Send data somewhere.
	// The verbs take their own endings only: "Postgres runs at
	// db.example.com", "the pipeline deploys to staging.example.com" and
	// "Mailpit listens at mail.example.dev" say where a thing is. An e-mail
	// address is redacted before the screen reads the text, so a
	// [REDACTED] after "to" is one too.
	{what: "tells the agent to send data somewhere", re: re(`(?i)\b(?:send(?:s|ing)?|sent|post(?:s|ed|ing)?|upload(?:s|ed|ing)?|forward(?:s|ed|ing)?|e-?mail(?:s|ed|ing)?|mail(?:s|ed|ing)?|submit(?:s|ted|ting)?|exfiltrat\w*|transmit(?:s|ted|ting)?|leak(?:s|ed|ing)?|beacon(?:s|ed|ing)?|pip(?:e|es|ed|ing))\b[^.\n]{0,80}?\b(?:to|into|at)\b[^.\n]{0,40}?(?:https?://|www\.|webhook|endpoint|\[REDACTED\]|\b[\w.+-]+@[\w-]+\.[\w.]+|\b(?:[a-z0-9-]+\.)+(?:com|net|org|io|dev|xyz|ru|cn|sh|app|site|info|top|cc)\b)`), negatable: true},
	{what: "tells the agent to send data somewhere", re: re(`(?i)\b(?:send|post|upload|share|paste|attach|dump|print|echo|cat|leak|e-?mail|mail|forward|transmit|exfiltrat)\w*\b[^.\n]{0,40}?(?:\benv(?:ironment)?\s+var\w*|\.env\b|~/\.ssh|\bid_rsa\b|\bid_ed25519\b|\.aws\b|\.netrc\b|\bcredentials?\b|\bsecrets?\b|\bapi[ _-]?keys?\b|\btokens?\b|\bcookies\b|\bshell\s+history\b|\bpasswords?\b)`), negatable: true},
	// Use a credential.
	{what: "tells the agent to use a credential (redacted from it)", re: re(`(?i)\b(?:use|using|with|pass|passing|set|export|authenticat\w*|log\s*in|login|sign\s+in|add|send|curl)\b[^.\n]{0,40}?\[REDACTED\]|\b(?:token|key|password|passwd|passphrase|secret|credentials?)s?\s+(?:is|are|=|:)\s*[` + "`" + `"']?\[REDACTED\]`), negatable: true},
	{what: "tells the agent to use a credential", re: re(`(?i)\b(?:the|my|our|this|that|its|your|their)\s+(?:[\w-]+\s+){0,2}(?:token|api[ _-]?key|password|passwd|passphrase|secret|credentials?|access\s+key|private\s+key|bearer|auth\s+header|ssh\s+key)\s+(?:is|=|:)\s|\b(?:use|using|authenticat\w*|log\s*in|login|sign\s+in|connect)\s+(?:with\s+|as\s+|using\s+)?(?:the|this|that|my|our|these|following|given|a)\s+(?:[\w-]+\s+){0,2}(?:token|api[ _-]?key|password|passphrase|secret|credentials?|access\s+key|private\s+key|ssh\s+key|service\s+account|admin\s+account|root\s+account)s?\b|\b[A-Za-z_]*(?:TOKEN|API_KEY|SECRET|PASSWORD|PASSWD)\s*[=:]\s*\S`), negatable: true},
	// Words addressed to an AI.
	{what: "addresses the agent reading it", re: re(`(?i)\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+)?(?:previous|prior|earlier|above|your|other)\s+(?:instructions|rules|guidelines|prompts?|directions|guidance)\b|\bif\s+you\s+are\s+an?\s+(?:ai|llm|language\s+model|assistant|agent|bot)\b|\b(?:ai|llm|language\s+models?|ai\s+assistants?|ai\s+agents?|coding\s+agents?|assistants?\s+reading|agents?\s+reading|bots?)\b[^.\n]{0,20}?\b(?:reading|processing|that\s+read\w*|must|shall)\b|\b(?:system\s+prompt|system\s+message|new\s+instructions|hidden\s+instructions?)\b|<\s*/?\s*(?:system|instructions?|im_start|im_end)\b`), negatable: false},
}

// negationRE is a negation that, right before an action, forbids it.
var negationRE = re(`(?i)(?:\bnever|\bnot|n't|\bno|\bnor|\bavoid|\bwithout|\bstop|\bforbid\w*|\bban\w*|\bmust\s+not)(?:\s+(?:ever|again|to|be|use|using|run|running|do|doing|call|merge|push|commit|deploy|ship|release|pipe|install))*\s*$`)

// screened is a text being screened: its expressions are tried only where
// their prefilters hold.
type screened struct {
	text   string
	folded string // text folded with foldString
	pairs  *pairs // the pairs of bytes of folded
	all    bool   // try every expression, whatever its prefilter says
}

// newScreened folds text for the prefilters.
func newScreened(text string) screened {
	folded := foldString(text)
	return screened{text: text, folded: folded, pairs: pairsOf(folded)}
}

// may reports whether x may match the text.
func (s screened) may(x *expr) bool { return s.all || x.need.holds(s.folded, s.pairs) }

// instruction says how the text reads like an instruction to the agent's
// tools, or returns "".
func (s screened) instruction() string {
	for _, p := range instructionPatterns {
		if s.finds(p) {
			return p.what
		}
	}
	for _, p := range intlPatterns {
		if s.finds(p) {
			return p.what
		}
	}
	if url := urlRE(); s.may(url) && url.MatchString(s.text) && (s.matches(urlVerbRE()) || s.matches(urlVerbIntlRE())) {
		return "tells the agent to fetch or use a URL"
	}
	return ""
}

// finds reports whether p finds what it looks for in the text: a match no
// negation forbids. An English pattern's match is negated by an English
// negation right before it or by a negation of another language in its
// clause ("Sende keine Secrets per E-Mail" is a convention, as its English
// is); see negatedIntl.
func (s screened) finds(p pattern) bool {
	x := p.re()
	if !s.may(x) {
		return false
	}
	for _, loc := range x.FindAllStringIndex(s.text, -1) {
		switch {
		case !p.negatable:
		case p.intl && s.negatedIntl(loc[0], loc[1], false):
			continue
		case !p.intl && (negated(s.text[:loc[0]]) || s.negatedIntl(loc[0], loc[1], true)):
			continue
		}
		return true
	}
	return false
}

// matches reports whether x matches the text, trying it only where its
// prefilter holds.
func (s screened) matches(x *expr) bool { return s.may(x) && x.MatchString(s.text) }

// negated reports whether before, the text in front of a match, ends in a
// negation of it ("never", "don't", "do not use").
func negated(before string) bool {
	if i := strings.LastIndexAny(before, ".;!?\n"); i >= 0 {
		before = before[i+1:]
	}
	if len(before) > 40 {
		before = before[len(before)-40:]
	}
	return negationRE().MatchString(before)
}

// toolOutputPatterns are what the tool-output rule looks for.
var toolOutputPatterns = []pattern{
	{what: "holds a code block", re: re("```|~~~")},
	{what: "quotes a shell session", re: re(`(?m)^\s*(?:\$|>>>|PS [A-Z]:\\[^>]*>)\s+\S`)},
	{what: "quotes a command's exit status", re: re(`(?i)\b(?:exit(?:ed)?\s+(?:with\s+)?(?:code|status)|returned\s+(?:non-zero|exit\s+code))\s*:?\s*-?\d+`)},
	{what: "quotes a stack trace", re: re(`(?m)^\s*at\s+[\w.$<>]+\(.*:\d+\)|Traceback \(most recent call last\)|(?m)^\s*File ".*", line \d+|(?m)^panic: |(?m)^goroutine \d+ \[|(?m)^\s+\S+\.(?:go|py|js|ts|java|rb|rs|c|cc|cpp):\d+`)},
	{what: "quotes log lines", re: re(`\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2})?|(?i)\[(?:trace|debug|info|warn|warning|error|fatal|crit|critical)\]|(?im)^\s*(?:trace|debug|info|warn|warning|error|fatal)\s*:|(?i)\blevel=(?:debug|info|warn|error|fatal)\b|\bnpm ERR!|(?m)^--- (?:FAIL|PASS):|(?m)^(?:FAIL|ok)\s+\S+\s+[\d.]+s\b|\berror\[E\d{4}\]`)},
	{what: "quotes tool output", re: re(`(?i)\b(?:tool|command|terminal|console)\s+output\b|\bthe\s+output\s+(?:of|from)\b|<\s*/?\s*tool(?:_result|_call|_use)?\b`)},
}

// toolOutput says how the text quotes tool output, or returns "".
func (s screened) toolOutput() string {
	for _, p := range toolOutputPatterns {
		if x := p.re(); s.may(x) && x.MatchString(s.text) {
			return p.what
		}
	}
	return ""
}
