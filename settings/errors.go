package settings

import (
	"errors"
	"io/fs"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memcore/redact"
)

// ErrInvalidConfig is memcore.ErrInvalidConfig under this package's name:
// the one sentinel every configuration error of forgemem matches, whether
// it comes from a settings file or from a library module's Config. Every
// [Error] matches it with errors.Is, as well as the one kind below that
// says what is wrong; errors.Is(err, memcore.ErrInvalidConfig) holds for
// them too.
var ErrInvalidConfig = memcore.ErrInvalidConfig

// The kinds of [Error]: every Error matches exactly one of them with
// errors.Is (and [ErrInvalidConfig]).
var (
	// ErrUnknownKey is a key inside a file's memory: section, a FORGEMEM_*
	// environment variable or a flag that names no setting.
	ErrUnknownKey = errors.New("unknown setting")
	// ErrInvalidValue is a value of the wrong type (a word where a number
	// belongs) or out of its range. Values are never clamped.
	ErrInvalidValue = errors.New("invalid setting value")
	// ErrSecretInFile is an API key (or another secret) written in a
	// settings file. API keys are read only from the environment
	// (OPENAI_API_KEY, GEMINI_API_KEY); the error never shows the value.
	ErrSecretInFile = errors.New("secret in a settings file")
	// ErrMalformedFile is a settings file that is not valid YAML, is not a
	// mapping, or sets a key twice.
	ErrMalformedFile = errors.New("malformed settings file")
	// ErrUnreadableFile is a settings file that exists but cannot be read
	// (or a file named by --config or FORGEMEM_CONFIG that does not exist).
	// The file-system error is kept: errors.Is(err, fs.ErrPermission) works.
	ErrUnreadableFile = errors.New("unreadable settings file")
)

// Error is one problem found while loading settings. It names where the
// problem is ([Source]: a file and line, an environment variable or a
// flag), the setting concerned and what is accepted, for example
//
//	/home/u/.forge/config.yaml:3: memory.cadence_turns is 11, want 1–10
//	environment variable FORGEMEM_PROVIDER is openia, want fake, openai or gemini (did you mean openai?)
//	flag --retrieval-timeout is 2, want a duration such as 2s or 1500ms, more than 0
//
// It matches its Kind with errors.Is, and its Err too when that is set.
type Error struct {
	// Kind is one of ErrUnknownKey, ErrInvalidValue, ErrSecretInFile,
	// ErrMalformedFile and ErrUnreadableFile.
	Kind error
	// Source is where the problem is: a file (with its line when known),
	// an environment variable or a flag.
	Source Source
	// Key is the full name of the setting concerned, such as
	// "memory.cadence_turns"; for ErrUnknownKey and ErrSecretInFile, the
	// name as written ("memory.cadense_turns", "FORGEMEM_CADENSE_TURNS",
	// "cadense-turns"). Empty for errors about a whole file.
	Key string
	// Value is the rejected value as written, for ErrInvalidValue, with
	// secrets redacted (memcore/redact) and a URL's password masked.
	Value string
	// Want says what is accepted, for example "1–10" or "an integer in
	// 1–10"; for ErrUnknownKey, the list of known names.
	Want string
	// Suggestion is the closest accepted name or value, as in "did you
	// mean …?", or empty.
	Suggestion string
	// Err is the underlying cause, for ErrMalformedFile (the YAML error or
	// what is wrong with the file's shape) and ErrUnreadableFile (the
	// file-system error); nil otherwise.
	Err error
}

// Error implements error.
func (e *Error) Error() string {
	var b strings.Builder
	if e.Source.Origin.isFile() {
		b.WriteString(e.Source.Name)
		if e.Source.Line > 0 {
			b.WriteString(":")
			b.WriteString(strconv.Itoa(e.Source.Line))
		}
		b.WriteString(": ")
	}
	switch e.Kind {
	case ErrUnknownKey:
		e.writeUnknown(&b)
	case ErrInvalidValue:
		e.writeInvalid(&b)
	case ErrSecretInFile:
		b.WriteString(showValue(e.Key))
		b.WriteString(": API keys are not read from settings files (the value is not shown); set ")
		b.WriteString(e.Want)
		b.WriteString(" in the environment instead and remove the key from the file")
	case ErrUnreadableFile:
		e.writeUnreadable(&b)
	default: // ErrMalformedFile and anything unforeseen
		if e.Kind != nil {
			b.WriteString(e.Kind.Error())
		}
		if e.Err != nil {
			b.WriteString(": ")
			b.WriteString(e.Err.Error())
		}
	}
	return b.String()
}

// writeUnknown writes the message of an ErrUnknownKey: the name, the
// closest known one and the known ones.
func (e *Error) writeUnknown(b *strings.Builder) {
	b.WriteString("unknown ")
	b.WriteString(e.subject())
	if e.Suggestion != "" {
		b.WriteString(" (did you mean " + e.Suggestion + "?)")
	}
	if e.Want != "" {
		b.WriteString("; known: " + e.Want)
	}
}

// writeInvalid writes the message of an ErrInvalidValue: the setting, the
// value given, the values accepted and the closest one.
func (e *Error) writeInvalid(b *strings.Builder) {
	b.WriteString(e.subject())
	b.WriteString(" is ")
	b.WriteString(showValue(e.Value))
	b.WriteString(", want ")
	b.WriteString(e.Want)
	if e.Suggestion != "" {
		b.WriteString(" (did you mean " + e.Suggestion + "?)")
	}
}

// writeUnreadable writes the message of an ErrUnreadableFile: the file
// system's reason, without repeating the path.
func (e *Error) writeUnreadable(b *strings.Builder) {
	if e.Source.Name == "" {
		b.WriteString("settings file: ")
	}
	b.WriteString("cannot read the settings file: ")
	var pe *fs.PathError
	if errors.As(e.Err, &pe) && pe.Path == e.Source.Name {
		b.WriteString(pe.Err.Error())
	} else if e.Err != nil {
		b.WriteString(e.Err.Error())
	}
}

// subject names what is wrong in the source's own terms: the key in a file,
// the variable in the environment, the flag on the command line.
func (e *Error) subject() string {
	switch e.Source.Origin {
	case OriginEnv:
		return "environment variable " + showValue(e.Source.Name)
	case OriginFlag:
		return "flag --" + showValue(e.Source.Name)
	}
	if e.Kind == ErrUnknownKey {
		return "key " + showValue(e.Key)
	}
	return showValue(e.Key)
}

// Unwrap returns Kind and, when set, Err.
func (e *Error) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrInvalidConfig, e.Kind, e.Err}
	}
	return []error{ErrInvalidConfig, e.Kind}
}

// Errors is every problem [Load] found, in the order of the sources (user
// file, repository file, --config file, environment, flags) and, within a
// file, of its lines. Load returns it, never empty, as its error; use
// errors.As with a *[Error] for the first problem, or range over it. Past
// the first problems of a file, an unknown key gets no suggestion, so that
// a file of thousands of them is read in linear time.
type Errors []*Error

// maxListed is how many problems Errors.Error lists.
const maxListed = 20

// Error implements error: one problem per line, the first 20 of them, then
// "and N more problems".
func (es Errors) Error() string {
	n := min(len(es), maxListed)
	lines := make([]string, n, n+1)
	for i, e := range es[:n] {
		lines[i] = e.Error()
	}
	switch more := len(es) - n; {
	case more == 1:
		lines = append(lines, "and 1 more problem")
	case more > 1:
		lines = append(lines, "and "+strconv.Itoa(more)+" more problems")
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the problems, for errors.Is and errors.As.
func (es Errors) Unwrap() []error {
	errs := make([]error, len(es))
	for i, e := range es {
		errs[i] = e
	}
	return errs
}

// maxShownValue bounds how much of a rejected value an error repeats.
const maxShownValue = 64

// showValue writes a rejected value, a key or a name readably: secrets
// redacted (memcore/redact), plain when it is one simple word or number,
// quoted otherwise, and shortened when long.
func showValue(v string) string {
	v, _ = redact.Text(v)
	if utf8.RuneCountInString(v) > maxShownValue {
		r := []rune(v)
		v = string(r[:maxShownValue]) + "…"
	}
	plain := v != ""
	for _, r := range v {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(".-_+:/@~…{}[]*", r)) {
			plain = false
			break
		}
	}
	if plain {
		return v
	}
	return strconv.Quote(v)
}

// suggest returns the candidate closest to name, or "" when none is close
// enough to be what was meant. Names are compared without case, "-", "_"
// and "." (so cadenceTurns and cadence-turns find cadence_turns); a
// candidate is close when it is within a few edits, or when it is the only
// one that ends or starts with what was written ("top_k" finds
// "retrieval_top_k").
func suggest(name string, candidates []string) string {
	n := normalize(name)
	if n == "" {
		return ""
	}
	best, bestDist := "", -1
	for _, c := range candidates {
		d := editDistance(n, normalize(c))
		if bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	if bestDist >= 0 && (bestDist <= 2 || bestDist*3 <= len(n)) && bestDist < len(n) {
		return best
	}
	if len(n) < 3 {
		return ""
	}
	only := ""
	for _, c := range candidates {
		nc := normalize(c)
		if strings.HasSuffix(nc, n) || strings.HasPrefix(nc, n) {
			if only != "" {
				return ""
			}
			only = c
		}
	}
	return only
}

// normalize lowers name and drops the separators people mix up.
func normalize(name string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '-', '_', '.', ' ':
			return -1
		}
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, name)
}

// editDistance is the edit distance between a and b in bytes, counting a
// swap of two neighbours as one edit (the optimal string alignment
// distance: "memroy" is one edit from "memory"). Names longer than 64
// bytes are never close to a setting's name.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 20
	}
	before := make([]int, len(b)+1) // the row before prev
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], before[j-2]+1)
			}
		}
		before, prev, cur = prev, cur, before
	}
	return prev[len(b)]
}

// secretWords mark a name as holding a secret: such a key in a file is
// [ErrSecretInFile], not merely unknown.
var secretWords = []string{"apikey", "secret", "password", "accesstoken", "authtoken", "bearer"}

// isSecretName reports whether an unknown key's name suggests that its
// value is a secret.
func isSecretName(name string) bool {
	n := normalize(name)
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// apiKeyVariables says which variables to use instead of a secret named
// name.
func apiKeyVariables(name string) string {
	n := normalize(name)
	switch {
	case strings.Contains(n, "openai"):
		return EnvOpenAIAPIKey
	case strings.Contains(n, "gemini"), strings.Contains(n, "google"):
		return EnvGeminiAPIKey
	}
	return EnvOpenAIAPIKey + " or " + EnvGeminiAPIKey
}
