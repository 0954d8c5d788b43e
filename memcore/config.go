package memcore

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/forgemem/forgemem/memcore/redact"
)

// FieldError is one bad field of a configuration: a Config field, an
// argument of a constructor, or a settings key.
type FieldError struct {
	// Field names what is bad, as the caller wrote it: a Config field
	// ("TopK"), a constructor's argument ("NewEngine's store"), a settings
	// key ("memory.retrieval_top_k").
	Field string
	// Value is the rejected value.
	Value any
	// Want describes the accepted values, for example "1–100".
	Want string
}

// Description is a [FieldError] Value that describes the rejected value
// instead of repeating it, shown as written, unquoted: for a value that must
// never be printed, such as an API key ("APIKey is a key with surrounding
// white space, want …"), or one that has no short form.
type Description string

// String says what is wrong: "TopK is 0, want 1–100". Text values are
// quoted (a [Description] is not), and a value that looks like a secret (an
// API key typed into the wrong field) is redacted, so that the message can
// be printed and logged.
func (f FieldError) String() string {
	var v string
	if d, ok := f.Value.(Description); ok {
		v = string(d)
	} else if rv := reflect.ValueOf(f.Value); rv.IsValid() && rv.Kind() == reflect.String {
		v = fmt.Sprintf("%q", rv.String())
	} else {
		v = fmt.Sprint(f.Value)
	}
	v, _ = redact.Text(v)
	return fmt.Sprintf("%s is %s, want %s", f.Field, v, f.Want)
}

// ConfigError lists every bad field of one configuration, so that a caller
// fixes them all at once. It matches [ErrInvalidConfig] with errors.Is, and
// each error of Also.
type ConfigError struct {
	// Package names the package whose configuration is bad, such as
	// "memretrieve"; it begins the message.
	Package string
	// Fields are the bad fields, in the order they were checked.
	Fields []FieldError
	// Hint, when set, ends the message with what to do, such as "start
	// from memretrieve.DefaultConfig() and change only what you need".
	Hint string
	// Also holds further errors the configuration error matches, such as
	// a package's sentinel for a missing argument.
	Also []error
}

// Error names the package, then each bad field, its value and the values
// it accepts, then the hint:
//
//	memretrieve: invalid config: TopK is 0, want 1–100; HopDepth is 7, want 0–3 (start from …)
func (e *ConfigError) Error() string {
	parts := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		parts[i] = f.String()
	}
	msg := ErrInvalidConfig.Error() + ": " + strings.Join(parts, "; ")
	if e.Package != "" {
		msg = e.Package + ": " + msg
	}
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	return msg
}

// Unwrap returns [ErrInvalidConfig] and the errors of Also.
func (e *ConfigError) Unwrap() []error {
	return append([]error{ErrInvalidConfig}, e.Also...)
}

// FieldErrors collects the bad fields of one configuration; a Validate
// method checks every field with [FieldErrors.Check] and returns
// [FieldErrors.Err]:
//
//	var bad memcore.FieldErrors
//	bad.Check(c.TopK >= 1 && c.TopK <= 100, "TopK", c.TopK, "1–100")
//	return bad.Err("memretrieve", "start from memretrieve.DefaultConfig()")
type FieldErrors []FieldError

// Check records field as bad, with its value and the values it accepts,
// unless ok; it returns ok.
func (b *FieldErrors) Check(ok bool, field string, value any, want string) bool {
	if !ok {
		*b = append(*b, FieldError{Field: field, Value: value, Want: want})
	}
	return ok
}

// Err returns a *[ConfigError] of pkg listing b with the hint, or nil when
// b is empty.
func (b FieldErrors) Err(pkg, hint string) error {
	if len(b) == 0 {
		return nil
	}
	return &ConfigError{Package: pkg, Fields: b, Hint: hint}
}
