package memcore

import (
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func user(s string) Message      { return Message{Role: RoleUser, Content: s} }
func assistant(s string) Message { return Message{Role: RoleAssistant, Content: s} }

func TestStripToolContent(t *testing.T) {
	tests := []struct {
		name string
		in   []Message
		want []Message
	}{
		{"nothing to strip", []Message{user("hi"), assistant("hello")}, []Message{user("hi"), assistant("hello")}},
		{"tool role dropped", []Message{user("run it"), {Role: RoleTool, Content: "exit 0"}, assistant("done")},
			[]Message{user("run it"), assistant("done")}},
		{"system dropped", []Message{{Role: RoleSystem, Content: "You are…"}, user("hi")}, []Message{user("hi")}},
		{"unknown role dropped", []Message{{Role: "developer", Content: "x"}, user("hi")}, []Message{user("hi")}},
		{"<tool> block", []Message{assistant("before <tool>ls -la</tool> after")}, []Message{assistant("before  after")}},
		{"<tool_result> with attributes", []Message{user(`see <tool_result id="t1" status='ok'>secret=1</tool_result> end`)},
			[]Message{user("see  end")}},
		{"<tool_call> block", []Message{assistant("<tool_call>{\"name\":\"grep\"}</tool_call>I searched.")}, []Message{assistant("I searched.")}},
		{"<tool_use> block", []Message{assistant("x<tool_use name=\"edit\">\npatch\n</tool_use>y")}, []Message{assistant("xy")}},
		{"tag on its own lines", []Message{assistant("a\n<tool\n  name=\"x\">\nout\n</tool>\nb")}, []Message{assistant("a\n\nb")}},
		{"case-insensitive", []Message{user("a<TOOL>x</Tool>b<Tool_Result>y</TOOL_RESULT>c")}, []Message{user("abc")}},
		{"self-closing", []Message{assistant("a<tool_call name=\"x\"/>b<tool />c")}, []Message{assistant("abc")}},
		{"several blocks", []Message{assistant("1<tool>a</tool>2<tool_call>b</tool_call>3<tool_result>c</tool_result>4")},
			[]Message{assistant("1234")}},
		{"unclosed block removed to the end", []Message{assistant("keep <tool_result>leaked output\nmore"), user("next")},
			[]Message{assistant("keep"), user("next")}},
		{"unclosed opening tag", []Message{assistant("keep <tool_call name=")}, []Message{assistant("keep")}},
		{"close of another kind does not end it", []Message{assistant("a<tool_result>x</tool>y")}, []Message{assistant("a")}},
		{"message left empty dropped", []Message{user("<tool>only</tool>"), assistant("  <tool_result>x</tool_result>\n ")},
			[]Message{}},
		{"look-alikes kept", []Message{user("<tools> <toolbox> <tool-kit> <tooltip>x</tooltip> <tool_results> <tool_caller>")},
			[]Message{user("<tools> <toolbox> <tool-kit> <tooltip>x</tooltip> <tool_results> <tool_caller>")}},
		{"closing tag alone kept", []Message{user("stray </tool> text")}, []Message{user("stray </tool> text")}},
		{"angle brackets in prose", []Message{user("if a < b and b > c then <tool>x</tool>ok")}, []Message{user("if a < b and b > c then ok")}},
		{"text is trimmed", []Message{user("  padded \n")}, []Message{user("padded")}},
		// Lower-casing changes the byte length of some runes (the Kelvin
		// sign becomes 'k'); the cut must still land after the block.
		{"non-ASCII inside a block", []Message{user("<tool>\u212a\u212a\u212a\u212a secret</tool>after")}, []Message{user("after")}},
		{"non-ASCII around blocks", []Message{user("İstanbul \u212a <TOOL>x</TOOL> ünïcödé")}, []Message{user("İstanbul \u212a  ünïcödé")}},
		{"nested blocks of one kind", []Message{user("x<tool_result>a<TOOL_RESULT id=2>b</tool_result>LEAK</tool_result>y")}, []Message{user("xy")}},
		{"nested self-closing tag", []Message{user("x<tool>a<tool/>LEAK</tool>y")}, []Message{user("xy")}},
		{"nested, outer never closed", []Message{user("x<tool>a<tool>b</tool>LEAK")}, []Message{user("x")}},
		{"other kinds inside a block", []Message{user("x<tool>cat log: <tool_call>q</tool_call> <tool_result> LEAK</tool>y")}, []Message{user("xy")}},
		{"tag ended by CR", []Message{user("x<tool\r\n>LEAK</tool>y")}, []Message{user("xy")}},
		{"empty input", nil, []Message{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.in)
			got := StripToolContent(in)
			if !slices.Equal(got, tt.want) {
				t.Errorf("StripToolContent =\n%q\nwant\n%q", got, tt.want)
			}
			if !slices.Equal(in, tt.in) {
				t.Errorf("the input was modified: %q", in)
			}
			for _, m := range got {
				if !utf8.ValidString(m.Content) {
					t.Errorf("cut inside a rune: %q", m.Content)
				}
			}
		})
	}
}

func TestEstimateTokens(t *testing.T) {
	tests := map[string]int{
		"":          0,
		"a":         1,
		"abcd":      1,
		"abcde":     2,
		"12345678":  2,
		"日本語":       1, // runes, not bytes
		"日本語です":     2,
		"🦀🦀🦀🦀🦀🦀🦀🦀🦀": 3,
	}
	for s, want := range tests {
		if got := EstimateTokens(s); got != want {
			t.Errorf("EstimateTokens(%q) = %d, want %d", s, got, want)
		}
	}
	msgs := []Message{user("abcd"), assistant("")}
	if got, want := WindowTokens(msgs), 1+2*messageOverhead; got != want {
		t.Errorf("WindowTokens = %d, want %d", got, want)
	}
	if WindowTokens(nil) != 0 {
		t.Error("WindowTokens(nil) != 0")
	}
}

func TestCapWindow(t *testing.T) {
	// Each of these costs EstimateTokens + 2: 12, 7, 4.
	m1 := user(strings.Repeat("a", 40))
	m2 := assistant(strings.Repeat("b", 20))
	m3 := user("cccccccc")
	msgs := []Message{m1, m2, m3}
	total := WindowTokens(msgs) // 23
	tests := []struct {
		name   string
		budget int
		want   []Message
	}{
		{"zero budget", 0, nil},
		{"negative budget", -5, nil},
		{"everything fits", total, msgs},
		{"generous budget", 1000, msgs},
		{"oldest cut", total - 1, []Message{user(strings.Repeat("a", 36)), m2, m3}},
		{"oldest cut to one token", 4 + 7 + 3, []Message{user("aaaa"), m2, m3}},
		{"no room for the oldest's role", 4 + 7 + 2, []Message{m2, m3}},
		{"only the newest", 4, []Message{m3}},
		{"newest cut", 3, []Message{user("cccc")}},
		{"nothing but overhead", 2, []Message{}},
		{"less than overhead", 1, []Message{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(msgs)
			got := CapWindow(in, tt.budget)
			if !slices.Equal(got, tt.want) || (tt.want == nil) != (got == nil) {
				t.Errorf("CapWindow(%d) =\n%q\nwant\n%q", tt.budget, got, tt.want)
			}
			if !slices.Equal(in, msgs) {
				t.Error("the input was modified")
			}
			if tt.budget > 0 && WindowTokens(got) > tt.budget {
				t.Errorf("CapWindow(%d) costs %d", tt.budget, WindowTokens(got))
			}
		})
	}
	if got := CapWindow(nil, 10); len(got) != 0 {
		t.Errorf("CapWindow(nil) = %q", got)
	}
}

// Cutting multi-byte text keeps whole runes and the end of the message,
// and never exceeds the budget, for every budget.
func TestCapWindowRunes(t *testing.T) {
	msgs := []Message{
		user(strings.Repeat("日本語", 30) + "🦀 end of first"),
		assistant("ünïcödé " + strings.Repeat("é", 17)),
		user("🦀🦀🦀 newest"),
	}
	for budget := 1; budget <= WindowTokens(msgs)+2; budget++ {
		got := CapWindow(msgs, budget)
		if WindowTokens(got) > budget {
			t.Errorf("budget %d: cost %d", budget, WindowTokens(got))
		}
		for i, m := range got {
			if !utf8.ValidString(m.Content) {
				t.Errorf("budget %d: message %d cut inside a rune: %q", budget, i, m.Content)
			}
		}
		if len(got) == 0 {
			continue
		}
		// The kept messages are the newest ones, the first possibly cut to
		// its end.
		offset := len(msgs) - len(got)
		for i, m := range got {
			orig := msgs[offset+i]
			if m.Role != orig.Role || (i == 0 && !strings.HasSuffix(orig.Content, m.Content)) || (i > 0 && m != orig) {
				t.Errorf("budget %d: message %d = %q, not the newest part of %q", budget, i, m, orig)
			}
		}
		// A cut message fills exactly the room left by the newer ones.
		if got[0] != msgs[offset] {
			room := budget - WindowTokens(got[1:]) - messageOverhead
			if n := utf8.RuneCountInString(got[0].Content); n != 4*room {
				t.Errorf("budget %d: the cut message keeps %d runes, want %d", budget, n, 4*room)
			}
		}
	}
}

// FuzzStripToolContent: never panics, never changes its input, keeps only
// user and assistant messages, only deletes text (the result is a
// subsequence of the message), keeps valid UTF-8 valid, and leaves nothing
// of a well-formed block's content.
func FuzzStripToolContent(f *testing.F) {
	f.Add("before ", "tool_result", ` id="1"`, " after", "user")
	f.Add("\u212a\u212a", "TOOL", "", "İ", "assistant")
	f.Add("<tool", "tool_call", "/", "</tool>", "user")
	f.Add("", "tool_use", "\n", "<tool_use>unclosed", "tool")
	f.Fuzz(func(t *testing.T, prefix, tag, attrs, suffix, role string) {
		const secret = "\x01SECRET\x01"
		content := prefix + "<" + tag + attrs + ">" + secret + "</" + tag + ">" + suffix
		in := []Message{{Role: Role(role), Content: content}}
		out := StripToolContent(in)
		if in[0].Content != content {
			t.Fatal("the input was modified")
		}
		if Role(role) != RoleUser && Role(role) != RoleAssistant {
			if len(out) != 0 {
				t.Fatalf("role %q kept", role)
			}
			return
		}
		if len(out) == 0 {
			return
		}
		got := out[0].Content
		if len(out) != 1 || out[0].Role != Role(role) || !isSubsequence(got, content) {
			t.Fatalf("StripToolContent(%q) = %q: not what is left of it", content, out)
		}
		if utf8.ValidString(content) && !utf8.ValidString(got) {
			t.Errorf("invalid UTF-8 made from valid: %q", got)
		}
		// A known tag, attributes that neither close nor self-close it, and
		// nothing before it that could end a block early: the content goes.
		wellFormed := slices.Contains(toolTags, strings.ToLower(tag)) &&
			(attrs == "" || strings.ContainsAny(attrs[:1], " \t\n")) &&
			!strings.Contains(attrs, ">") && !strings.HasSuffix(attrs, "/") &&
			!strings.Contains(prefix+attrs+suffix, "\x01")
		if wellFormed && strings.Contains(got, "SECRET") {
			t.Errorf("tool content leaked: %q from %q", got, content)
		}
	})
}

// isSubsequence reports whether sub can be made by deleting bytes of s.
func isSubsequence(sub, s string) bool {
	for i := 0; i < len(sub); i++ {
		j := strings.IndexByte(s, sub[i])
		if j < 0 {
			return false
		}
		s = s[j+1:]
	}
	return true
}

// The time of a message survives every window helper.
func TestWindowKeepsTimes(t *testing.T) {
	at := time.Date(2025, 1, 15, 9, 29, 41, 0, time.UTC)
	msgs := []Message{
		{Role: RoleUser, Content: "first <tool_result>x</tool_result> words", At: at},
		{Role: RoleTool, Content: "dropped", At: at.Add(time.Second)},
		{Role: RoleAssistant, Content: "a long reply " + strings.Repeat("word ", 400), At: at.Add(2 * time.Second)},
	}
	for name, got := range map[string][]Message{
		"StripToolContent": StripToolContent(msgs),
		"CapWindow":        CapWindow(msgs, 50),
		"RedactWindow": func() []Message {
			w, _ := RedactWindow(msgs, func(m []Message) []Message { return CapWindow(m, 50) })
			return w
		}(),
	} {
		for _, m := range got {
			if want := map[Role]time.Time{RoleUser: at, RoleAssistant: at.Add(2 * time.Second)}[m.Role]; !m.At.Equal(want) {
				t.Errorf("%s: %s message at %v, want %v", name, m.Role, m.At, want)
			}
		}
	}
}
