package settings

import (
	"strconv"
	"strings"
)

// Trust is what a repository's .forge/config.yaml may do with a key before
// the user trusts that file. A repository is someone else's input: a clone
// can commit any settings file. Such a file may narrow what happens — send
// less, and to fewer places — at once, but it may not redirect the user's
// data or API keys, choose models or turn anything on until the user runs
// forgemem trust on it (see [TrustStore]); until then those values are
// ignored, each with a [Warning]. The user's own ~/.forge/config.yaml, the
// file named by --config or FORGEMEM_CONFIG, the environment and the flags
// are the user's choices and always apply.
//
// Every key of [Keys] declares its Trust; [Key].Untrusted says it in words.
type Trust int

// The trust rules, from the most to the least a repository may set.
const (
	// TrustNotNeeded: the key only tunes work done on this machine — how
	// memories are ranked and how many are considered, within a budget
	// that is itself a key — so any value in range applies from any file.
	TrustNotNeeded Trust = iota + 1
	// TrustToWiden: a value that narrows what happens applies from an
	// untrusted repository file (memory.enabled: false, a lower budget, a
	// rarer capture); a value that widens it needs trust.
	TrustToWiden
	// TrustRequired: the key decides where data and keys go or which
	// models they are used with (memory.provider, memory.base_url, the
	// models); a repository's file sets it only once the user trusts it.
	TrustRequired
)

// String returns "not needed", "to widen" or "required".
func (t Trust) String() string {
	switch t {
	case TrustNotNeeded:
		return "not needed"
	case TrustToWiden:
		return "to widen"
	case TrustRequired:
		return "required"
	}
	return "trust(" + strconv.Itoa(int(t)) + ")"
}

// The reasons a warning gives for the keys that need trust, completing "a
// repository's settings cannot …".
const (
	reasonWhere  = "choose where your data and keys go"
	reasonModels = "choose your models"
)

// trustRule is one key's [Trust] and what narrows.
type trustRule struct {
	kind Trust
	// to is the one value that narrows (enabled: false), or "".
	to string
	// dir is +1 when higher values narrow, -1 when lower ones do, 0
	// otherwise; the key's cmp compares the values.
	dir int
	// would completes "a repository's settings cannot …" in a warning.
	would string
}

// anyValue is the rule of keys that tune work on this machine only.
var anyValue = trustRule{kind: TrustNotNeeded}

// needsTrust is the rule of keys a repository's file sets only once
// trusted; would completes "a repository's settings cannot …".
func needsTrust(would string) trustRule { return trustRule{kind: TrustRequired, would: would} }

// narrowsTo is the rule of a key whose value to narrows and every other
// widens.
func narrowsTo(to, would string) trustRule {
	return trustRule{kind: TrustToWiden, to: to, would: would}
}

// narrowsUp is the rule of a number whose higher values narrow.
func narrowsUp(would string) trustRule { return trustRule{kind: TrustToWiden, dir: 1, would: would} }

// narrowsDown is the rule of a number whose lower values narrow.
func narrowsDown(would string) trustRule { return trustRule{kind: TrustToWiden, dir: -1, would: would} }

// untrusted writes k's rule for the reference's column ([Key].Untrusted).
func (k *key) untrusted() string {
	r := k.trust
	switch {
	case r.kind == TrustNotNeeded:
		return "any value"
	case r.kind == TrustRequired:
		return "needs trust"
	case r.to != "":
		var others []string
		for _, v := range k.values {
			if v != r.to {
				others = append(others, "`"+v+"`")
			}
		}
		verb := " needs trust"
		if len(others) != 1 {
			verb = " need trust"
		}
		return "`" + r.to + "` applies; " + strings.Join(others, " or ") + verb
	case r.dir > 0 && k.values != nil:
		return "a stricter value applies (" + quotedList(k.values) + ", strictest last); a looser one needs trust"
	case r.dir > 0:
		return "a higher value applies; a lower one needs trust"
	case r.dir < 0:
		return "a lower value applies; a higher one needs trust"
	}
	return "needs trust"
}

// quotedList writes values as `a`, `b`, `c`.
func quotedList(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = "`" + v + "`"
	}
	return strings.Join(q, ", ")
}

// narrows reports whether next's value of k narrows what cur's does (an
// equal value is no change, and narrows).
func (k *key) narrows(cur, next *Settings) bool {
	r := k.trust
	switch {
	case k.get(next) == k.get(cur):
		return true
	case r.kind == TrustNotNeeded:
		return true
	case r.kind == TrustRequired:
		return false
	case r.to != "":
		return k.get(next) == r.to
	case r.dir != 0 && k.cmp != nil:
		return r.dir*k.cmp(next, cur) > 0
	}
	return false
}

// Warning is a setting [Load] ignored: a value in a repository's
// .forge/config.yaml that needs the user's trust (see [Trust]) in a file
// the user has not trusted, or that changed since it was trusted. The
// loaded settings go on without it; [Settings.Warnings] lists one per
// ignored key, and a host shows them to the user (the forgemem command
// prints them on stderr). No value is ever kept in a warning.
type Warning struct {
	// Key is the full name of the ignored key: "memory.base_url".
	Key string
	// Source is the file and line of the ignored value.
	Source Source
	// Changed is set when the user trusted the file, but it changed since.
	Changed bool
	// Reason completes "a repository's settings cannot …": "choose where
	// your data and keys go".
	Reason string
	// Command is what the user runs to trust the file, from
	// [Options].TrustCommand: "forgemem trust".
	Command string
}

// String is the warning for people, one line:
//
//	ignoring memory.base_url in /r/.forge/config.yaml: a repository's settings cannot choose where your data and keys go until you trust the file (forgemem trust)
func (w Warning) String() string {
	msg := "ignoring " + showValue(w.Key) + " in " + w.Source.Name + ": "
	if w.Changed {
		msg += "the file changed since you trusted it, and a repository's settings cannot " + w.Reason +
			" until you trust the file again"
	} else {
		msg += "a repository's settings cannot " + w.Reason + " until you trust the file"
	}
	if w.Command != "" {
		msg += " (" + w.Command + ")"
	}
	return msg
}

// DefaultTrustCommand is what warnings tell the user to run when
// [Options].TrustCommand is empty.
const DefaultTrustCommand = "forgemem trust"

// repoGate holds back the values of an untrusted repository file that
// need trust. The trust records are read once, when a value needs them.
type repoGate struct {
	// state reads what the trust records say of the file.
	state   func() (TrustState, error)
	command string

	resolved bool
	st       TrustState
	// err is why the trust records could not be read; the values that
	// needed them are held back.
	err error
}

// holds reports whether k's value text, from src, is held back, and
// records the warning when it is. A value that does not parse is never
// held: applying it reports the error.
func (g *repoGate) holds(s *Settings, k *key, text string, src Source) bool {
	if k.trust.kind == TrustNotNeeded {
		return false
	}
	next := *s
	if err := k.set(&next, text); err != nil || k.narrows(s, &next) {
		return false
	}
	if !g.resolved {
		g.resolved = true
		g.st, g.err = g.state()
	}
	if g.err != nil {
		return true
	}
	if g.st == Trusted {
		return false
	}
	s.Warnings = append(s.Warnings, Warning{Key: k.fullName(), Source: src, Changed: g.st == ChangedSinceTrusted,
		Reason: k.trust.would, Command: g.command})
	return true
}
