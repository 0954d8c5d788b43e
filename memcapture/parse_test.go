package memcapture

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/providers/fake"
)

const one = `{"content":"Prefers tabs.","scope":"user","category":"coding-preferences"}`

func TestParseReply(t *testing.T) {
	cases := []struct {
		name  string
		reply string
		items int // -1: unparseable
	}{
		{"object", `{"memories":[` + one + `]}`, 1},
		{"bare array", `[` + one + `,` + one + `]`, 2},
		{"empty object list", `{"memories": []}`, 0},
		{"empty array", `[]`, 0},
		{"null list", `{"memories": null}`, 0},
		{"fence with tag", "```json\n{\"memories\":[" + one + "]}\n```", 1},
		{"fence without tag", "```\n[" + one + "]\n```", 1},
		{"fence on one line", "```{\"memories\":[" + one + "]}```", 1},
		{"unclosed fence", "```json\n[" + one + "]", 1},
		{"prose around", "Here is what I found:\n{\"memories\":[" + one + "]}\nLet me know if you need more.", 1},
		{"prose with brackets first", "Sure [1]. See {notes}. Result: [" + one + "] done", 1},
		{"prose then fence", "I found one memory.\n```json\n{\"memories\":[" + one + "]}\n```\nThanks!", 1},
		{"trailing text after JSON", `{"memories":[` + one + `]} <- that's all`, 1},
		{"wrapping object", `{"results":[` + one + `]}`, 1},
		{"wrapping object with other keys", `{"reasoning":"the user changed style","count":1,"items":[` + one + `]}`, 1},
		{"nested wrapper", `{"response":{"memories":[` + one + `]}}`, 1},
		{"capitalised key", `{"Memories":[` + one + `]}`, 1},
		{"single memory object", one, 1},
		{"byte order mark", "\ufeff" + `{"memories":[` + one + `]}`, 1},
		{"mixed array", `[` + one + `, "stray", 3]`, 3},
		{"wrapper with empty list", `{"items": []}`, 0},
		{"empty", "", -1},
		{"blank", " \n\t ", -1},
		{"prose only", "Nothing here is worth remembering.", -1},
		{"object without list", `{"status":"ok"}`, -1},
		{"array of numbers", `[1, 2, 3]`, -1},
		{"memories not a list", `{"memories": "none"}`, -1},
		{"truncated", `{"memories":[{"content":"Prefers`, -1},
		{"deeply nested, found by scanning", `{"a":{"b":{"c":{"d":{"memories":[` + one + `]}}}}}`, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			els, err := parseReply(c.reply)
			if c.items < 0 {
				if !errors.Is(err, errUnparseable) {
					t.Errorf("err = %v, want errUnparseable (items %d)", err, len(els))
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if len(els) != c.items {
				t.Errorf("%d items, want %d", len(els), c.items)
			}
		})
	}
}

func FuzzParseReply(f *testing.F) {
	for _, s := range []string{
		`{"memories":[` + one + `]}`, "```json\n[" + one + "]\n```", "text {\"x\": [" + one + "]} text",
		`[]`, `{"memories":null}`, "```", "[[[[", `{"a":{"b":{}}}`, "\ufeff[]", `[{"content": 1}]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		els, err := parseReply(reply)
		if err != nil {
			if !errors.Is(err, errUnparseable) {
				t.Fatalf("error %v does not wrap errUnparseable", err)
			}
			return
		}
		for _, e := range els {
			if !json.Valid(e) {
				t.Fatalf("element %q is not JSON", e)
			}
		}
		// A list found must survive a round trip in the canonical shape.
		canon, _ := json.Marshal(map[string]any{"memories": els})
		again, err := parseReply(string(canon))
		if err != nil || len(again) != len(els) {
			t.Fatalf("canonical form %s: %d items, %v; want %d", canon, len(again), err, len(els))
		}
		for i := range els {
			if !reflect.DeepEqual(decode(t, els[i]), decode(t, again[i])) {
				t.Fatalf("item %d changed: %s vs %s", i, els[i], again[i])
			}
		}
	})
}

func decode(t *testing.T, b []byte) any {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestUnparseableReplyAskedOnce(t *testing.T) {
	eachStore(t, func(t *testing.T, store memcore.MemoryStore) {
		llm := newLLM(t, fake.LLMConfig{Replies: []string{"I think the user likes tabs!", "```json\n{\"memories\":[" + one + "]}\n```"}})
		p := startPipeline(t, llm, store, Config{})
		p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("use tabs please")})
		s := passes(t, p, 1)
		if llm.Calls() != 2 || s.MemoriesWritten != 1 || s.ParseFailures != 0 {
			t.Fatalf("calls = %d, written = %d, ParseFailures = %d; want 2, 1, 0", llm.Calls(), s.MemoriesWritten, s.ParseFailures)
		}
		second := llm.Requests()[1]
		n := len(second.Messages)
		if n != 3 || second.Messages[1].Role != memcore.RoleAssistant || second.Messages[1].Content != "I think the user likes tabs!" ||
			second.Messages[2].Content != retryReminder || second.System != systemPrompt || second.ResponseSchema == nil {
			t.Errorf("the second request should repeat the first with the bad reply and a reminder: %+v", second.Messages)
		}
	})
}

func TestUnparseableTwiceIsCounted(t *testing.T) {
	eachStore(t, func(t *testing.T, store memcore.MemoryStore) {
		llm := newLLM(t, always("Sorry, I cannot help with that."))
		p := startPipeline(t, llm, store, Config{})
		w := win("use tabs please")
		p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: w})
		s := passes(t, p, 1)
		if llm.Calls() != 2 || s.ParseFailures != 1 || s.MemoriesWritten != 0 || s.LLMErrors != 0 {
			t.Fatalf("calls = %d, ParseFailures = %d, written = %d, LLMErrors = %d; want 2, 1, 0, 0",
				llm.Calls(), s.ParseFailures, s.MemoriesWritten, s.LLMErrors)
		}
		// Not treated as "nothing": the same window is classified again.
		p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: w})
		if s := passes(t, p, 2); s.SkippedUnchanged != 0 || llm.Calls() != 4 {
			t.Errorf("SkippedUnchanged = %d, calls = %d; want 0 and 4", s.SkippedUnchanged, llm.Calls())
		}
	})
}

func TestEmptyListIsNotAParseFailure(t *testing.T) {
	llm := newLLM(t, always("```json\n{\"memories\": []}\n```"))
	p := startPipeline(t, llm, memcore.NewMemStore(), Config{})
	p.Enqueue(TriggerEvent{Kind: memcore.TriggerCadence, Messages: win("hi")})
	if s := passes(t, p, 1); s.ParseFailures != 0 || llm.Calls() != 1 || s.MemoriesWritten != 0 {
		t.Errorf("ParseFailures = %d, calls = %d, written = %d", s.ParseFailures, llm.Calls(), s.MemoriesWritten)
	}
}
