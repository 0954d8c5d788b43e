package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/forgemem/forgemem/memcore"
)

func TestEscapeControls(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain text", "Prefers table-driven tests.", "Prefers table-driven tests."},
		{"newline and tab kept", "a\n\tb", "a\n\tb"},
		{"CRLF kept", "a\r\nb", "a\r\nb"},
		{"lone carriage return", "fake\rline", `fake\x0dline`},
		{"SGR", "\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"bell", "ding\a", `ding\x07`},
		{"OSC 8 hyperlink", "\x1b]8;;https://evil.example\x07text\x1b]8;;\x07", `\x1b]8;;https://evil.example\x07text\x1b]8;;\x07`},
		{"OSC 52 clipboard", "\x1b]52;c;cm0gLXJmIH4=\x1b\\", `\x1b]52;c;cm0gLXJmIH4=\x1b\`},
		{"NUL and backspace", "a\x00b\bc", `a\x00b\x08c`},
		{"DEL", "a\x7fb", `a\x7fb`},
		{"C1 CSI", "\u009b2J", `\u009b2J`},
		{"C1 range ends", "\u0080\u009f", `\u0080\u009f`},
		{"not C1", "\u00a0é€😀", "\u00a0é€😀"},
		{"bidirectional override", "fix \u202egnp.exe\u202c", `fix \u202egnp.exe\u202c`},
		{"bidirectional isolates and marks", "\u2066a\u2069\u200e\u200f\u061c", `\u2066a\u2069\u200e\u200f\u061c`},
		{"emoji joiner kept", "👩\u200d💻", "👩\u200d💻"},
		{"invisible characters", "pass\u200bword\ufeff\u2060\u2064", `pass\u200bword\ufeff\u2060\u2064`},
		{"tag characters spelling an instruction", "tabs\U000E0052\U000E0075\U000E006E", `tabs\U000e0052\U000e0075\U000e006e`},
		{"a stray cancel tag", "a\U000E007F", `a\U000e007f`},
		{"the flag of England kept", "\U0001F3F4\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F", "\U0001F3F4\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F"},
		{"a lone carriage return after CRLF", "a\r\nb\rc", `a` + "\r\n" + `b\x0dc`},
		{"not UTF-8", "a\xffb\xc2", `a\xffb\xc2`},
		{"replacement character kept", "\ufffd", "\ufffd"},
		{"backslash kept", `C:\x1b`, `C:\x1b`},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := escapeControls(tt.in); got != tt.want {
				t.Errorf("escapeControls(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestEscapeArgs(t *testing.T) {
	got := fmt.Sprintf("%s|%s|%v|%s|%d", escapeArgs([]any{"a\x1b", memcore.Scope("r\x07"), errors.New("e\u009b"), styled("\x1b[1mbold\x1b[0m"), 42})...)
	if want := `a\x1b|r\x07|e\u009b|` + "\x1b[1mbold\x1b[0m" + `|42`; got != want {
		t.Errorf("escaped args print %q, want %q", got, want)
	}
}

func TestEscapeJSON(t *testing.T) {
	in := map[string]string{"text": "esc \x1b del \x7f csi \u009b nbsp \u00a0 é"}
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	out := escapeJSON(data)
	if !strings.Contains(string(out), `esc \u001b del \u007f csi \u009b nbsp `+"\u00a0 é") {
		t.Errorf("escapeJSON = %s", out)
	}
	var back map[string]string
	if err := json.Unmarshal(out, &back); err != nil || back["text"] != in["text"] {
		t.Errorf("the escaped document decodes to %q, %v; want %q", back["text"], err, in["text"])
	}
}

// FuzzEscapeControls: whatever the text, the result holds no character a
// terminal acts on, is UTF-8, is the text itself when there was nothing to
// escape, and escaping it again changes nothing.
func FuzzEscapeControls(f *testing.F) {
	for _, s := range []string{"plain", "\x1b]52;c;eA==\x07", "\u009b2J", "a\r\nb\rc", "\xff\xfe", "\x7f\t\n", "\U000E0041\u200b", "\U0001F3F4\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := escapeControls(s)
		if !utf8.ValidString(got) {
			t.Fatalf("escapeControls(%q) = %q, not UTF-8", s, got)
		}
		if err := memcore.CheckText(got); err != nil {
			t.Fatalf("escapeControls(%q) = %q holds %v", s, got, err)
		}
		if hasLoneCR(got) {
			t.Fatalf("escapeControls(%q) = %q holds a lone carriage return", s, got)
		}
		if !needsEscape(s) && got != s {
			t.Fatalf("escapeControls(%q) = %q changed text with nothing to escape", s, got)
		}
		if again := escapeControls(got); again != got {
			t.Fatalf("escaping twice: %q, then %q", got, again)
		}
	})
}

// FuzzEscapeJSON: a JSON document of any string stays valid, means the
// same, and holds neither DEL nor a C1 control.
func FuzzEscapeJSON(f *testing.F) {
	for _, s := range []string{"plain", "\u009b\x7f", "\u0080\u00a0", "\xc2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		data, err := json.Marshal(s)
		if err != nil {
			t.Skip()
		}
		out := escapeJSON(data)
		var back string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("escapeJSON(%s) = %s, not JSON: %v", data, out, err)
		}
		var want string
		_ = json.Unmarshal(data, &want)
		if back != want {
			t.Fatalf("escapeJSON(%s) decodes to %q, want %q", data, back, want)
		}
		for _, r := range string(out) {
			if r == 0x7f || r >= 0x80 && r <= 0x9f {
				t.Fatalf("escapeJSON(%s) = %s holds %U", data, out, r)
			}
		}
	})
}

// The fields of a --verbose log line: strings escaped, an elapsed time
// (zerolog's Dur, in milliseconds) with its unit, other numbers as they are.
func TestEscapeLogFields(t *testing.T) {
	evt := map[string]any{"message": "a\x1b[2Jb", "elapsed": json.Number("5.969199"), "indexed": json.Number("34")}
	if err := escapeLogFields(evt); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"message": `a\x1b[2Jb`, "elapsed": "6.0ms", "indexed": json.Number("34")}
	if !reflect.DeepEqual(evt, want) {
		t.Errorf("escapeLogFields = %v, want %v", evt, want)
	}
}
