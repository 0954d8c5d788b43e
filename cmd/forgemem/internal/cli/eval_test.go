package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/fakeopenai"
)

// evalDataset is a small dataset whose answers are known: each query
// repeats its memory word for word, so that memory is first in both the
// vector and the lexical ranking. JSON Lines: one collection per line.
var evalDataset = oneLine(`{"collection": "coding", "memories": [
  {"id": "locking", "content": "Use optimistic locking with a version column for user updates.", "category": "architectural-decisions", "scope": "repo"},
  {"id": "migrations", "content": "Migrations live in db/migrations, one file per change."},
  {"id": "errors", "content": "Check error types with errors.As, never with a type switch."}],
 "queries": [
  {"id": "q1", "text": "Use optimistic locking with a version column for user updates.", "relevant": ["locking"]},
  {"id": "q2", "messages": [{"role": "user", "content": "Where do migrations go?"}, {"role": "assistant", "content": "Let me check."},
    {"role": "user", "content": "Migrations live in db/migrations, one file per change."}], "relevant": ["migrations", "errors"]}]}
`)

// oneLine writes a JSON document on one line.
func oneLine(doc string) string {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(doc)); err != nil {
		panic(err)
	}
	return b.String() + "\n"
}

func TestEvalJSON(t *testing.T) {
	f := newFixture(t)
	path := filepath.Join(f.root, "data.jsonl")
	f.writeFile(path, evalDataset)
	r := f.run("eval", "--dataset", path, "--k", "1,5", "--json")
	if r.code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", r.code, r.stderr)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, r.stdout)
	}
	// q1 finds its one memory first; q2 its first relevant memory first,
	// and both of them within 5 of 3.
	want := map[string]any{
		"recall@1": 0.75, "recall@5": 1.0, "hit@1": 1.0, "hit@5": 1.0, "mrr": 1.0,
		"queries": 2.0, "collections": 1.0, "memories": 3.0, "provider": "fake",
		"embedding_model": "fake-hash-v2-1024", "hypotheses": "identity", "vector_skipped": 0.0,
		// One query text for q1, three focused queries (the latest message,
		// the latest exchange, the window) for q2.
		"query_texts_embedded": 4.0, "relevant_in_injection": 1.0, "offtopic_injected_rate": 0.0,
		"gate_chance": 0.05, "max_memories": 8.0,
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %v, want %v", k, got[k], w)
		}
	}
	for _, k := range []string{"p50_ms", "p95_ms"} {
		if v, ok := got[k].(float64); !ok || v < 0 {
			t.Errorf("%s = %v, want a duration in milliseconds", k, got[k])
		}
	}
	// The three memories, the query texts, and the relevance gate's
	// probes.
	if n, _ := got["texts_embedded"].(float64); n <= 7 {
		t.Errorf("texts_embedded = %v, want the 3 memories, the 4 query texts and the gate's probes", got["texts_embedded"])
	}

	// Off-topic queries added to the collection: none gets a memory; and
	// the gate off lets the ranking in.
	off := filepath.Join(f.root, "off.jsonl")
	f.writeFile(off, `{"id": "o1", "text": "What is a good recipe for banana bread with walnuts?"}`+"\n")
	for _, tt := range []struct {
		args []string
		rate float64
	}{{nil, 0}, {[]string{"--retrieval-gate-chance", "1"}, 1}} {
		r := f.run(append([]string{"eval", "--dataset", path, "--offtopic", off, "--json"}, tt.args...)...)
		var obj map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &obj); err != nil || r.code != 0 {
			t.Fatalf("eval --offtopic %v: %d %v\n%s%s", tt.args, r.code, err, r.stdout, r.stderr)
		}
		if obj["offtopic_injected_rate"] != tt.rate || obj["queries"] != 3.0 {
			t.Errorf("eval --offtopic %v: offtopic_injected_rate %v, queries %v; want %v and 3", tt.args, obj["offtopic_injected_rate"], obj["queries"], tt.rate)
		}
	}
	if r.stderr != "" {
		t.Errorf("stderr %q, want nothing (no terminal, no progress bar)", r.stderr)
	}

	// The same from stdin, as text.
	text := f.runIn(t.Context(), f.repo, evalDataset, "eval", "--dataset", "-")
	if text.code != 0 || !strings.Contains(text.stdout, "recall@5") || !strings.Contains(text.stdout, "2 queries (2 on topic, 0 off topic) over 3 memories in 1 collections") {
		t.Errorf("eval --dataset - = %d\n%s\n%s", text.code, text.stdout, text.stderr)
	}
}

// eval --dataset - never waits silently on a terminal: it says on stderr,
// before it reads, that it reads the dataset there, in what form, and how
// to end it, as recall - does. Piped, or from a file, it says nothing.
func TestEvalDatasetFromATerminal(t *testing.T) {
	f := newFixture(t)
	path := filepath.Join(f.root, "data.jsonl")
	f.writeFile(path, evalDataset)
	tests := []struct {
		name   string
		run    func(args ...string) result
		args   []string
		stderr string // the whole of it
	}{
		{"- on a terminal", func(args ...string) result { return f.runTerminal(evalDataset, args...) }, []string{"eval", "--dataset", "-"},
			"forgemem eval: reading the dataset from the terminal, JSON Lines, one collection per line; end it with " + endOfInput() + "\n"},
		{"- piped", func(args ...string) result { return f.runIn(t.Context(), f.repo, evalDataset, args...) }, []string{"eval", "--dataset", "-"}, ""},
		{"a file, on a terminal", func(args ...string) result { return f.runTerminal("", args...) }, []string{"eval", "--dataset", path}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.run(tt.args...)
			if r.code != 0 || !strings.Contains(r.stdout, "2 queries (2 on topic, 0 off topic) over 3 memories in 1 collections") || r.stderr != tt.stderr {
				t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant exit 0, the figures of the dataset and stderr %q", r.code, r.stderr, r.stdout, tt.stderr)
			}
		})
	}
}

// A dataset or off-topic file that starts with a byte order mark is read
// as the same file without; one that holds something else than its lines
// of JSON objects gets an error that names the line, the field, what was
// found and what is wanted, in the file's terms.
func TestEvalSaysWhatIsWrongWithAFile(t *testing.T) {
	f := newFixture(t)
	path := filepath.Join(f.root, "data.jsonl")
	f.writeFile(path, evalDataset)
	off := filepath.Join(f.root, "off.jsonl")
	f.writeFile(off, `{"id": "o1", "text": "What is a good recipe for banana bread with walnuts?"}`+"\n")
	want := f.run("eval", "--dataset", path, "--offtopic", off, "--json")
	if want.code != 0 {
		t.Fatalf("eval: exit %d\n%s", want.code, want.stderr)
	}

	bomData := filepath.Join(f.root, "data-bom.jsonl")
	f.writeFile(bomData, "\ufeff"+evalDataset)
	bomOff := filepath.Join(f.root, "off-bom.jsonl")
	f.writeFile(bomOff, "\ufeff"+`{"id": "o1", "text": "What is a good recipe for banana bread with walnuts?"}`+"\r\n")
	// The figures but the latencies.
	figures := func(stdout string) map[string]any {
		var m map[string]any
		if err := json.Unmarshal([]byte(stdout), &m); err != nil {
			t.Fatalf("stdout is not one JSON object: %v\n%s", err, stdout)
		}
		delete(m, "p50_ms")
		delete(m, "p95_ms")
		return m
	}
	if r := f.run("eval", "--dataset", bomData, "--offtopic", bomOff, "--json"); r.code != 0 || !reflect.DeepEqual(figures(r.stdout), figures(want.stdout)) {
		t.Errorf("files with a byte order mark: exit %d, stderr %q, stdout\n%s\nwant\n%s", r.code, r.stderr, r.stdout, want.stdout)
	}

	for _, tt := range []struct {
		name, dataset, offTopic string
		file, want              string // the file named, and what is said of it
	}{
		{"a dataset line that is an array", `[{"collection": "c"}]`, "",
			"bad.jsonl", "line 1: invalid evaluation dataset: want a JSON object with collection, memories and queries, got an array"},
		{"a memory's content that is not text", "\n" + strings.Replace(evalDataset, `"content":"Migrations live in db/migrations, one file per change."`, `"content":["Migrations"]`, 1), "",
			"bad.jsonl", "line 2: invalid evaluation dataset: memory 2: content: want a string, got an array"},
		{"a dataset line followed by the end of an array", strings.TrimSuffix(evalDataset, "\n") + "]\n", "",
			"bad.jsonl", fmt.Sprintf(`line 1: invalid evaluation dataset: not valid JSON: unexpected "]" at column %d, after the object; want one {"collection": …, "memories": […], "queries": […]} object per line`, utf8.RuneCountInString(strings.TrimSuffix(evalDataset, "\n"))+1)},
		{"an off-topic line with an unknown field", evalDataset, `{"id": "o1", "question": "banana bread?"}`,
			"bad-off.jsonl", `off-topic queries: line 1: invalid evaluation dataset: unknown field "question"; the fields are id, text, messages and relevant`},
		{"an off-topic line of two queries", evalDataset, `{"id": "o1", "text": "banana bread?"} {"id": "o2", "text": "scones?"}`,
			"bad-off.jsonl", `off-topic queries: line 1: invalid evaluation dataset: more than one JSON value on the line; want one {"id": …, "text": …} object per line`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := filepath.Join(f.root, "bad.jsonl")
			f.writeFile(data, tt.dataset)
			args := []string{"eval", "--dataset", data}
			if tt.offTopic != "" {
				off := filepath.Join(f.root, "bad-off.jsonl")
				f.writeFile(off, tt.offTopic)
				args = append(args, "--offtopic", off)
			}
			r := f.run(args...)
			if want := "forgemem eval: " + filepath.Join(f.root, tt.file) + ": " + tt.want + "\n"; r.code != 1 || r.stdout != "" || r.stderr != want {
				t.Errorf("exit %d, stdout %q, stderr\n%q\nwant 1 and\n%q", r.code, r.stdout, r.stderr, want)
			}
		})
	}
}

func TestEvalMADial(t *testing.T) {
	f := newFixture(t)
	f.check("eval_madial", f.run("eval", "--madial", "../eval/testdata/madial-sample"), 0)
}

func TestEvalLoCoMo(t *testing.T) {
	f := newFixture(t)
	r := f.run("eval", "--locomo", "../eval/testdata/locomo-sample/locomo.json")
	f.check("eval_locomo", r, 0)
	if want := "forgemem eval: 4 queries in 2 collections; left out 1 adversarial question (category 5) and 1 question whose evidence no observation cites\n"; r.stderr != want {
		t.Errorf("stderr %q, want %q", r.stderr, want)
	}
	// What it writes is a dataset eval reads.
	path := filepath.Join(f.root, "locomo.jsonl")
	f.writeFile(path, r.stdout)
	if run := f.run("eval", "--dataset", path); run.code != 0 || !strings.Contains(run.stdout, "4 queries (4 on topic, 0 off topic) over 6 memories in 2 collections") {
		t.Errorf("eval --dataset (converted) = %d\n%s\n%s", run.code, run.stdout, run.stderr)
	}
}

func TestEvalUsage(t *testing.T) {
	f := newFixture(t)
	path := filepath.Join(f.root, "data.jsonl")
	f.writeFile(path, evalDataset)
	bad := filepath.Join(f.root, "bad.jsonl")
	f.writeFile(bad, `{"collection": "c", "memories": [], "queries": []}`)
	tests := []struct {
		name string
		args []string
		code int
		says string
	}{
		{"neither", []string{"eval"}, 2, "exactly one of --dataset FILE, --madial DIR and --locomo FILE"},
		{"both", []string{"eval", "--dataset", path, "--madial", "."}, 2, "exactly one of"},
		{"two converters", []string{"eval", "--madial", ".", "--locomo", path}, 2, "exactly one of"},
		{"bad k", []string{"eval", "--dataset", path, "--k", "5,x"}, 2, `--k "5,x"`},
		{"bad hypotheses", []string{"eval", "--dataset", path, "--hypotheses", "hyde"}, 2, `--hypotheses "hyde"`},
		{"llm with fake", []string{"eval", "--dataset", path, "--hypotheses", "llm"}, 2, "the fake provider has none"},
		{"missing file", []string{"eval", "--dataset", filepath.Join(f.root, "none.jsonl")}, 2, "--dataset: open"},
		{"invalid dataset", []string{"eval", "--dataset", bad}, 1, "line 1"},
		{"madial not a folder", []string{"eval", "--madial", path}, 2, "not a folder"},
		{"missing locomo file", []string{"eval", "--locomo", filepath.Join(f.root, "none.json")}, 2, "--locomo: open"},
		{"not a locomo file", []string{"eval", "--locomo", path}, 1, "invalid LoCoMo data"},
		{"bad gate chance", []string{"eval", "--dataset", path, "--retrieval-gate-chance", "2"}, 2, "--retrieval-gate-chance is 2, want 0.0001–1"},
		{"missing off-topic file", []string{"eval", "--dataset", path, "--offtopic", filepath.Join(f.root, "none.jsonl")}, 2, "--offtopic: open"},
		{"off-topic with relevant", []string{"eval", "--dataset", path, "--offtopic", bad}, 1, "off-topic queries: line 1"},
		{"openai without key", []string{"eval", "--dataset", path, "--provider", "openai", "--model", "m"}, 1, "OPENAI_API_KEY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.run(tt.args...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.says) {
				t.Errorf("exit %d, stderr %q; want %d saying %q", r.code, r.stderr, tt.code, tt.says)
			}
			if strings.Contains(r.stderr, "eval: eval:") {
				t.Errorf("the command's prefix is doubled: %q", r.stderr)
			}
		})
	}
}

// eval shows the settings flags it uses in its help, and takes them.
func TestEvalSettingsFlags(t *testing.T) {
	f := newFixture(t)
	help := f.run("eval", "--help").stdout
	for _, flag := range []string{"--base-url URL", "--retrieval-model string", "--retrieval-top-k integer", "--retrieval-lexical-weight number", "--retrieval-fusion-k integer"} {
		if !strings.Contains(help, flag) {
			t.Errorf("eval --help lacks %s", flag)
		}
	}
	path := filepath.Join(f.root, "data.jsonl")
	f.writeFile(path, evalDataset)
	r := f.run("eval", "--dataset", path, "--retrieval-top-k", "7", "--retrieval-fusion-k", "20", "--retrieval-lexical-weight", "0.5", "--json")
	var got map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("exit %d: %v\n%s", r.code, err, r.stderr)
	}
	if got["top_k"] != 7.0 || got["fusion_k"] != 20.0 || got["lexical_weight"] != 0.5 {
		t.Errorf("top_k %v, fusion_k %v, lexical_weight %v; want the flags' 7, 20 and 0.5", got["top_k"], got["fusion_k"], got["lexical_weight"])
	}
	// --base-url reaches the provider: an OpenAI-compatible server needs no key.
	srv, err := fakeopenai.Start(func(fakeopenai.ChatRequest) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	r = f.run("eval", "--dataset", path, "--provider", "openai", "--base-url", srv.BaseURL(), "--model", "m", "--json")
	if r.code != 0 || len(srv.Embedded()) == 0 {
		t.Errorf("eval --base-url: exit %d, %d texts embedded by the server; stderr %s", r.code, len(srv.Embedded()), r.stderr)
	}
	if r := f.run("eval", "--dataset", path, "--retrieval-top-k", "0"); r.code != 2 || !strings.Contains(r.stderr, "flag --retrieval-top-k is 0, want 1–100") {
		t.Errorf("a bad value: exit %d, stderr %q", r.code, r.stderr)
	}
}
