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

	"github.com/forgemem/forgemem/memcore"
	"github.com/rs/zerolog"
)

// escapeControls returns s with every character a terminal acts on, or a
// person cannot see, shown as a visible escape, so that text from memory
// files — a teammate's committed memory, a captured one, a file's name —
// can neither move the cursor, clear the screen, retitle the window, write
// to the clipboard (OSC 52), hide a link behind text (OSC 8) nor ring the
// bell, nor hide text from the person reading it. It escapes what
// memcore.CheckText refuses (one list, memcore.EscapeText), and a lone
// carriage return:
//
//   - C0 controls other than newline and tab, and DEL: \x1b, \x07, \x7f;
//     a carriage return is kept only right before a newline (CRLF);
//   - C1 controls, U+0080–U+009F (U+009B is a CSI of its own): \u009b;
//   - the bidirectional formatting characters (U+202E, …): \u202e;
//   - the invisible U+200B, U+FEFF and U+2060–U+2064: \u200b;
//   - tag characters outside a flag, which a model reads as ASCII
//     ("ASCII smuggling"): \U000e0041;
//   - bytes that are not UTF-8: \xff.
//
// An escape sequence loses the character that starts it, so the rest of
// it is printed as plain text: ESC ] 52 ; c ; … BEL is shown as
// \x1b]52;c;…\x07. A backslash in the text is left as it is, so the
// escapes are for reading, not a reversible encoding; --json output is
// exact. Text without such characters is returned as it is, and escaping
// twice changes nothing more.
func escapeControls(s string) string {
	s = memcore.EscapeText(s, func(c *memcore.CharError) string {
		switch {
		case c.Kind() == memcore.CharNotUTF8:
			return fmt.Sprintf(`\x%02x`, c.Byte)
		case c.Rune < 0x80:
			return fmt.Sprintf(`\x%02x`, c.Rune)
		case c.Rune > 0xffff:
			return fmt.Sprintf(`\U%08x`, c.Rune)
		}
		return fmt.Sprintf(`\u%04x`, c.Rune)
	})
	if !hasLoneCR(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		if s[i] == '\r' && !strings.HasPrefix(s[i+1:], "\n") {
			b.WriteString(`\x0d`)
		} else {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// hasLoneCR reports whether s holds a carriage return that is not right
// before a newline, which a terminal acts on: it moves the cursor back to
// overwrite the line.
func hasLoneCR(s string) bool {
	for i := strings.IndexByte(s, '\r'); i >= 0; {
		if !strings.HasPrefix(s[i+1:], "\n") {
			return true
		}
		j := strings.IndexByte(s[i+1:], '\r')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

// needsEscape reports whether escapeControls would change s.
func needsEscape(s string) bool { return memcore.CheckText(s) != nil || hasLoneCR(s) }

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
