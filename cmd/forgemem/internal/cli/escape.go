package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rs/zerolog"
)

// escapeControls returns s with every character a terminal acts on shown
// as a visible escape, so that text from memory files — a teammate's
// committed memory, a captured one, a file's name — can neither move the
// cursor, clear the screen, retitle the window, write to the clipboard
// (OSC 52), hide a link behind text (OSC 8) nor ring the bell:
//
//   - C0 controls other than newline and tab, and DEL: \x1b, \x07, \x7f;
//     a carriage return is kept only right before a newline (CRLF);
//   - C1 controls, U+0080–U+009F (U+009B is a CSI of its own): \u009b;
//   - the bidirectional formatting characters (U+202E, …): \u202e;
//   - bytes that are not UTF-8: \xff.
//
// An escape sequence loses the character that starts it, so the rest of
// it is printed as plain text: ESC ] 52 ; c ; … BEL is shown as
// \x1b]52;c;…\x07. A backslash in the text is left as it is, so the
// escapes are for reading, not a reversible encoding; --json output is
// exact. Text without such characters is returned as it is, and escaping
// twice changes nothing more.
func escapeControls(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\r' && strings.HasPrefix(s[i+1:], "\n"):
			b.WriteByte('\r')
		case isControl(r):
			if r < 0x80 {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// needsEscape reports whether escapeControls would change s.
func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || isControl(r) && !(r == '\r' && strings.HasPrefix(s[i+1:], "\n")) {
			return true
		}
		i += size
	}
	return false
}

// isControl reports whether r is a character escapeControls escapes: C0
// but newline and tab, DEL, C1, and the bidirectional controls, which
// reorder what a terminal shows (the "Trojan Source" trick: text that
// reads one way and is another).
func isControl(r rune) bool {
	return r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f || isBidiControl(r)
}

// isBidiControl reports whether r is one of Unicode's bidirectional
// formatting characters: ALM, LRM, RLM, the embeddings and overrides
// U+202A–U+202E and the isolates U+2066–U+2069.
func isBidiControl(r rune) bool {
	return r == 0x061c || r == 0x200e || r == 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

// escapeLine is escapeControls for text that must stay on one line, or in
// one cell of a table: line breaks and tabs are written as escapes too.
func escapeLine(s string) string { return escapeControls(lineBreaks.Replace(s)) }

var lineBreaks = strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`)

// styled is text ready to print as it is: escaped by escapeControls, and
// then given the printer's own emphasis (bold, dim), which escaping again
// would undo. Only the printer makes one.
type styled string

// escapeArgs returns args for a fmt call with every string in them
// escaped (see escapeControls): strings and named string types (a scope,
// a category), and errors by their message. A styled value is passed as
// it is; numbers, times and the like cannot hold control characters.
func escapeArgs(args []any) []any { return escapeArgsWith(escapeControls, args) }

// escapeArgsWith is escapeArgs escaping each string with escape.
func escapeArgsWith(escape func(string) string, args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case styled:
			out[i] = string(v)
		case string:
			out[i] = escape(v)
		case error:
			out[i] = escape(v.Error())
		default:
			if rv := reflect.ValueOf(a); rv.Kind() == reflect.String {
				out[i] = escape(rv.String())
			} else {
				out[i] = a
			}
		}
	}
	return out
}

// escapeJSON escapes, in the JSON text data, the control characters
// encoding/json writes as they are — DEL and the C1 controls
// U+0080–U+009F, which it need not escape (it escapes the C0 ones, as
// \u001b) — as \u007f and \u0080–\u009f. Those characters occur in JSON
// only inside strings, so the document means exactly what it meant.
func escapeJSON(data []byte) []byte {
	if bytes.IndexByte(data, 0x7f) < 0 && bytes.IndexByte(data, 0xc2) < 0 {
		return data
	}
	var b bytes.Buffer
	b.Grow(len(data) + 16)
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == 0x7f || r >= 0x80 && r <= 0x9f {
			fmt.Fprintf(&b, `\u%04x`, r)
		} else {
			b.Write(data[i : i+size])
		}
		i += size
	}
	return b.Bytes()
}

// escapeLogFields escapes the string fields of a log event (its message,
// a file's path, an error) before --verbose prints it: the libraries log
// the names of the files they skip, which a repository chooses. An
// elapsed time gets its unit.
func escapeLogFields(evt map[string]any) error {
	for k, v := range evt {
		if s, ok := v.(string); ok {
			evt[k] = escapeControls(s)
		}
		// The libraries log durations with zerolog's Dur, in milliseconds
		// (zerolog.DurationFieldUnit): say so.
		if n, ok := v.(json.Number); ok && k == "elapsed" && zerolog.DurationFieldUnit == time.Millisecond {
			if f, err := n.Float64(); err == nil {
				evt[k] = strconv.FormatFloat(f, 'f', 1, 64) + "ms"
			}
		}
	}
	return nil
}
