package eval

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memretrieve"
	"github.com/forgemem/forgemem/providers/fake"
)

func TestScore(t *testing.T) {
	ks := []int{1, 3, 5}
	tests := []struct {
		name     string
		ranking  []string
		relevant []string
		recall   map[int]float64
		hit      map[int]float64
		mrr      float64
	}{
		{"first place", []string{"a", "b", "c"}, []string{"a"},
			map[int]float64{1: 1, 3: 1, 5: 1}, map[int]float64{1: 1, 3: 1, 5: 1}, 1},
		{"second and fourth of two", []string{"x", "a", "y", "b", "z"}, []string{"a", "b"},
			map[int]float64{1: 0, 3: 0.5, 5: 1}, map[int]float64{1: 0, 3: 1, 5: 1}, 0.5},
		{"one of three, third place", []string{"x", "y", "c", "z"}, []string{"a", "b", "c"},
			map[int]float64{1: 0, 3: 1.0 / 3, 5: 1.0 / 3}, map[int]float64{1: 0, 3: 1, 5: 1}, 1.0 / 3},
		{"beyond every cut-off", []string{"u", "v", "w", "x", "y", "z", "a"}, []string{"a"},
			map[int]float64{1: 0, 3: 0, 5: 0}, map[int]float64{1: 0, 3: 0, 5: 0}, 1.0 / 7},
		{"not ranked", []string{"x"}, []string{"a"},
			map[int]float64{1: 0, 3: 0, 5: 0}, map[int]float64{1: 0, 3: 0, 5: 0}, 0},
		{"empty ranking", nil, []string{"a"},
			map[int]float64{1: 0, 3: 0, 5: 0}, map[int]float64{1: 0, 3: 0, 5: 0}, 0},
		{"a repeated id counts once", []string{"a", "a", "b"}, []string{"a", "b"},
			map[int]float64{1: 0.5, 3: 1, 5: 1}, map[int]float64{1: 1, 3: 1, 5: 1}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Score(tt.ranking, tt.relevant, ks)
			if !reflect.DeepEqual(s.Recall, tt.recall) || !reflect.DeepEqual(s.Hit, tt.hit) || s.MRR != tt.mrr {
				t.Errorf("Score = recall %v hit %v MRR %v; want %v %v %v", s.Recall, s.Hit, s.MRR, tt.recall, tt.hit, tt.mrr)
			}
		})
	}
	m := meanScores([]Scores{Score([]string{"a"}, []string{"a"}, ks), Score([]string{"x", "a"}, []string{"a", "b"}, ks)}, ks)
	if m.Recall[1] != 0.5 || m.Recall[3] != 0.75 || m.Hit[1] != 0.5 || m.Hit[3] != 1 || m.MRR != 0.75 {
		t.Errorf("meanScores = %+v, want recall@1 0.5, recall@3 0.75, hit@1 0.5, hit@3 1, MRR 0.75", m)
	}
}

func TestPercentile(t *testing.T) {
	vals := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}
	for _, tt := range []struct{ p, want float64 }{{50, 10}, {95, 19}, {100, 20}, {0, 1}, {1, 1}} {
		if got := percentile(vals, tt.p); got != tt.want {
			t.Errorf("percentile(1..20, %v) = %v, want %v", tt.p, got, tt.want)
		}
	}
	if got := percentile(nil, 50); got != 0 {
		t.Errorf("percentile of nothing = %v, want 0", got)
	}
}

// TestPublishedBaselines scores the benchmark authors' own top-20 rankings
// with Score and finds the figures published with the data: the metrics
// mean what the published ones mean.
func TestPublishedBaselines(t *testing.T) {
	published := map[string][4]float64{ // recall@5, recall@10, hit@5, MRR
		"baseline-openai_top_20_bottom.jsonl": {0.695, 0.806, 0.906, 0.750},
		"baseline-bge_m3_top_20.jsonl":        {0.553, 0.705, 0.787, 0.638},
		"baseline-gte_top_20.jsonl":           {0.525, 0.657, 0.756, 0.582},
		"baseline-jina_top_20.jsonl":          {0.448, 0.622, 0.675, 0.509},
	}
	ks := []int{5, 10}
	for file, want := range published {
		f, err := os.Open("testdata/madial/" + file)
		if err != nil {
			t.Fatal(err)
		}
		var all []Scores
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var line struct {
				Relevant []int `json:"relevant-id"`
				Top      []int `json:"top-20-ids"`
			}
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				t.Fatal(err)
			}
			all = append(all, Score(strs(line.Top), strs(line.Relevant), ks))
		}
		f.Close()
		m := meanScores(all, ks)
		got := [4]float64{m.Recall[5], m.Recall[10], m.Hit[5], m.MRR}
		for i := range got {
			if math.Abs(got[i]-want[i]) > 0.0005 {
				t.Errorf("%s: %v, want the published %v", file, got, want)
				break
			}
		}
		if len(all) != 160 {
			t.Errorf("%s: %d dialogues, want 160", file, len(all))
		}
	}
}

func strs(ids []int) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = strconv.Itoa(id)
	}
	return out
}

func TestReadDataset(t *testing.T) {
	good := `{"collection": "c", "memories": [{"id": "m1", "content": "x"}], "queries": [{"id": "q", "text": "x", "relevant": ["m1"]}]}`
	tests := []struct {
		name, text string
		line       int    // of the error; 0: no error
		says       string // in the error
	}{
		{"one collection", good + "\n", 0, ""},
		{"blank lines", "\n" + good + "\n\n", 0, ""},
		{"no collection", "\n\n", 0, "no collection"},
		{"not JSON", good + "\n{", 2, "the line ends inside a value"},
		{"unknown field", `{"collection": "c", "memories": [], "queries": [], "extra": 1}`, 1, "unknown field"},
		{"no name", strings.Replace(good, `"c"`, `""`, 1), 1, "without a name"},
		{"repeated name", good + "\n" + good, 2, "also on line 1"},
		{"no queries", `{"collection": "c", "memories": [{"id": "m1", "content": "x"}], "queries": []}`, 1, "at least one of each"},
		{"memory without content", strings.Replace(good, `"content": "x"`, `"content": " "`, 1), 1, "has no content"},
		{"bad category", strings.Replace(good, `"content": "x"`, `"content": "x", "category": "trivia"`, 1), 1, "unknown category"},
		{"bad scope", strings.Replace(good, `"content": "x"`, `"content": "x", "scope": "team"`, 1), 1, "unknown scope"},
		{"text and messages", strings.Replace(good, `"text": "x"`, `"text": "x", "messages": [{"role": "user", "content": "y"}]`, 1), 1, "exactly one"},
		{"neither", strings.Replace(good, `"text": "x", `, ``, 1), 1, "exactly one"},
		{"bad role", strings.Replace(good, `"text": "x"`, `"messages": [{"role": "tool", "content": "y"}]`, 1), 1, `role "tool"`},
		{"unknown relevant id", strings.Replace(good, `["m1"]`, `["m2"]`, 1), 1, `"m2" is not in the collection`},
		{"off topic: no relevant id", strings.Replace(good, `["m1"]`, `[]`, 1), 0, ""},
		{"relevant id twice", strings.Replace(good, `["m1"]`, `["m1", "m1"]`, 1), 1, `"m1" is listed twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cols, err := ReadDataset(strings.NewReader(tt.text))
			if tt.says == "" {
				if err != nil || len(cols) != 1 {
					t.Fatalf("ReadDataset = %v, %v; want one collection", cols, err)
				}
				return
			}
			if !errors.Is(err, ErrDataset) || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("ReadDataset error = %v, want ErrDataset saying %q", err, tt.says)
			}
			if tt.line > 0 && !strings.Contains(err.Error(), "line "+strconv.Itoa(tt.line)+":") {
				t.Errorf("error %q does not name line %d", err, tt.line)
			}
		})
	}
}

func TestDatasetRoundTrip(t *testing.T) {
	cols, err := MADial(os.DirFS("testdata/madial-sample"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteDataset(&b, cols); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "\n"); n != len(cols) {
		t.Errorf("%d lines for %d collections", n, len(cols))
	}
	back, err := ReadDataset(strings.NewReader(b.String()))
	if err != nil || !reflect.DeepEqual(back, cols) {
		t.Fatalf("ReadDataset(WriteDataset(c)) = %+v, %v; want %+v", back, err, cols)
	}
}

// userFact is a converted benchmark memory: a user fact of the user scope.
func userFact(id, content string) Memory {
	return Memory{ID: id, Content: content, Category: memcore.CategoryUserFacts, Scope: memcore.ScopeUser}
}

func TestMADialSample(t *testing.T) {
	cols, err := MADial(os.DirFS("testdata/madial-sample"))
	if err != nil {
		t.Fatal(err)
	}
	user := func(s string) Message { return Message{Role: memcore.RoleUser, Content: s} }
	assistant := func(s string) Message { return Message{Role: memcore.RoleAssistant, Content: s} }
	want := []Collection{
		{Name: "user-1",
			Memories: []Memory{
				userFact("1", "Bart danced at the Christmas party and felt very happy."),
				userFact("3", "Bart tried mango ice cream and loved it."),
			},
			Queries: []Query{
				{ID: "dialogue-1", Relevant: []string{"1"}, Messages: []Message{
					user("I'm going to perform at the New Year's Eve party!"),
					assistant("That's fantastic!"),
					user("Can I dance again?"),
				}},
				{ID: "dialogue-3", Relevant: []string{"3"}, Messages: []Message{user("It is so hot today, I want ice cream.")}},
			}},
		{Name: "user-2",
			Memories: []Memory{
				userFact("2", "Lisa won a science fair with an ecosystem sphere."),
				userFact("4", "Lisa lost her pink Barbie doll at the park."),
			},
			Queries: []Query{
				// The first of the test turns; a turn without a speaker
				// follows the user's, so it is the assistant's.
				{ID: "dialogue-2", Relevant: []string{"2", "4"}, Messages: []Message{
					user("My teacher praised me in science class."),
					assistant("You must be proud."),
					user("I like science!"),
				}},
			}},
	}
	if !reflect.DeepEqual(cols, want) {
		t.Errorf("MADial(sample) =\n%+v\nwant\n%+v", cols, want)
	}
}

func TestMADialFull(t *testing.T) {
	cols, err := MADial(os.DirFS("testdata/madial"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cols) != 2 || cols[0].Name != "user-1" || cols[1].Name != "user-2" {
		t.Fatalf("collections %v, want user-1 and user-2", names(cols))
	}
	for i, want := range []int{76, 84} {
		if len(cols[i].Memories) != want || len(cols[i].Queries) != want {
			t.Errorf("%s: %d memories and %d queries, want %d of each", cols[i].Name, len(cols[i].Memories), len(cols[i].Queries), want)
		}
		for _, q := range cols[i].Queries {
			if len(q.Messages) == 0 || q.Messages[len(q.Messages)-1].Role != memcore.RoleUser {
				t.Errorf("%s %s: the conversation does not end with the user's turn: %+v", cols[i].Name, q.ID, q.Messages)
			}
			for _, m := range q.Messages {
				if strings.HasPrefix(m.Content, `"`) || strings.HasPrefix(m.Content, "<") {
					t.Errorf("%s %s: message %q keeps its quotes or brackets", cols[i].Name, q.ID, m.Content)
				}
			}
		}
	}
}

func TestMADialErrors(t *testing.T) {
	sample := func(mem, dlg string) map[string]string {
		return map[string]string{"memory-en.jsonl": mem, "dialogue-en.jsonl": dlg}
	}
	m := `{"1": {"event": "Bart sang."}}` + "\n"
	d := `{"dialogue": ["<BOD>", "<Bart>: \"hi\"", "<Assistant>: \"hello\""], "test-turn": [2], "relevant-id": [1], "user-id": 1}` + "\n"
	tests := []struct {
		name  string
		files map[string]string
		says  string
	}{
		{"no files", map[string]string{}, "no memory-en.jsonl"},
		{"memory of nobody", sample(m+`{"2": {"event": "Someone sang."}}`, d), "names 0 of the users"},
		{"unknown relevant id", sample(m, strings.Replace(d, "[1]", "[9]", 1)), "relevant memory 9 does not exist"},
		{"test turn outside", sample(m, strings.Replace(d, `"test-turn": [2]`, `"test-turn": [7]`, 1)), "outside the dialogue"},
		{"no turn before the test turn", sample(m, strings.Replace(d, `"test-turn": [2]`, `"test-turn": [1]`, 1)), "no turn before the test turn"},
		{"bad memory line", sample("[1]\n", d), "memory-en.jsonl line 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := MADial(mapFS(tt.files))
			if !errors.Is(err, ErrMADial) || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("MADial error = %v, want ErrMADial saying %q", err, tt.says)
			}
		})
	}
}

func mapFS(files map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for name, text := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(text)}
	}
	return fsys
}

func names(cols []Collection) []string {
	var out []string
	for _, c := range cols {
		out = append(out, c.Name)
	}
	return out
}

// vectorEmbedder gives each text a fixed vector, so a test knows the
// ranking exactly.
type vectorEmbedder map[string][]float32

func (v vectorEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		vec, ok := v[t]
		if !ok {
			return nil, errors.New("no vector for " + t)
		}
		out[i] = slices.Clone(vec)
	}
	return out, nil
}

func (vectorEmbedder) Model() string { return "vectors" }

// TestRunKnownAnswers runs the engine on a dataset whose rankings are known
// (fixed vectors, the lexical index off) and checks every figure.
func TestRunKnownAnswers(t *testing.T) {
	cols := []Collection{{
		Name: "c",
		Memories: []Memory{
			{ID: "a", Content: "alpha"}, {ID: "b", Content: "bravo"}, {ID: "c", Content: "charlie"},
		},
		Queries: []Query{
			{ID: "q1", Text: "find alpha", Relevant: []string{"a"}},                  // ranking a, b, c
			{ID: "q2", Text: "find bravo and charlie", Relevant: []string{"b", "c"}}, // ranking a, c, b
			{ID: "q3", Messages: []Message{{Role: memcore.RoleUser, Content: "only c"}}, // ranking c, then nothing
				Relevant: []string{"a"}},
		},
	}}
	emb := vectorEmbedder{
		"alpha": {1, 0, 0}, "bravo": {0, 1, 0}, "charlie": {0, 0, 1},
		"find alpha":             {0.9, 0.3, 0.1},
		"find bravo and charlie": {0.9, 0.1, 0.3},
		"only c":                 {-0.1, -0.1, 1},
	}
	cfg := memretrieve.DefaultConfig()
	// The relevance gate off: these vectors cannot embed its probes, and
	// the figures are of the ranking.
	cfg.Mode, cfg.LexicalWeight, cfg.HopDepth, cfg.GateChance = memretrieve.ModeIdentity, 0, 0, 1
	var progress []int
	r, err := Run(context.Background(), cols, Options{Embedder: emb, Config: cfg, Ks: []int{2, 1},
		Progress: func(done, total int) { progress = append(progress, done, total) }})
	if err != nil {
		t.Fatal(err)
	}
	// q1: recall@1 1, @2 1, MRR 1. q2: @1 0, @2 0.5, MRR 1/2. q3: 0, 0, 0.
	wantRecall := map[int]float64{1: 1.0 / 3, 2: 1.5 / 3}
	wantHit := map[int]float64{1: 1.0 / 3, 2: 2.0 / 3}
	for _, k := range []int{1, 2} {
		if math.Abs(r.Scores.Recall[k]-wantRecall[k]) > 1e-12 || math.Abs(r.Scores.Hit[k]-wantHit[k]) > 1e-12 {
			t.Errorf("k=%d: recall %v hit %v, want %v %v", k, r.Scores.Recall[k], r.Scores.Hit[k], wantRecall[k], wantHit[k])
		}
	}
	if math.Abs(r.Scores.MRR-0.5) > 1e-12 {
		t.Errorf("MRR %v, want 0.5", r.Scores.MRR)
	}
	if r.Queries != 3 || r.Memories != 3 || r.Collections != 1 || !slices.Equal(r.Ks, []int{1, 2}) {
		t.Errorf("report counts %+v", r)
	}
	if len(r.PerQuery) != 3 || r.PerQuery[1].ID != "q2" || !slices.Equal(r.PerQuery[1].Ranking, []string{"a", "c", "b"}) ||
		r.PerQuery[1].Scores.MRR != 0.5 || r.PerQuery[2].Collection != "c" || !slices.Equal(r.PerQuery[2].Ranking, []string{"c"}) {
		t.Errorf("per query %+v, want q2 ranked a, c, b (MRR 1/2) and q3 ranked c", r.PerQuery)
	}
	if r.TextsEmbedded != 6 || r.QueryTextsEmbedded != 3 {
		t.Errorf("embedded %d texts, %d for queries; want 6 and 3", r.TextsEmbedded, r.QueryTextsEmbedded)
	}
	if r.Candidates != 7.0/3 {
		t.Errorf("%v candidates per ranking, want 7/3", r.Candidates)
	}
	if !slices.Equal(progress, []int{1, 3, 2, 3, 3, 3}) {
		t.Errorf("progress calls %v, want (1,3) (2,3) (3,3)", progress)
	}
	js, err := r.JSON(map[string]any{"provider": "test"})
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(js, &obj); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"recall@1": 0.3333, "recall@2": 0.5, "hit@2": 0.6667, "mrr": 0.5, "queries": 3.0, "provider": "test"} {
		if obj[k] != want {
			t.Errorf("JSON %s = %v, want %v (all: %s)", k, obj[k], want, js)
		}
	}
	for _, k := range []string{"p50_ms", "p95_ms", "texts_embedded", "per_collection"} {
		if _, ok := obj[k]; !ok {
			t.Errorf("JSON has no %s: %s", k, js)
		}
	}
}

// TestRunAbstention runs a small dataset whose injections are known — two
// queries that repeat a memory's words, one about something else — and
// checks the injection figures, on topic and off topic.
func TestRunAbstention(t *testing.T) {
	mems := []Memory{
		{ID: "locking", Content: "User updates use optimistic locking with a version column and up to three retries."},
		{ID: "migrations", Content: "Database migrations live in db/migrations, numbered, one file per change."},
		{ID: "errors", Content: "Check error types with errors.As, never with a type switch."},
		{ID: "logging", Content: "Library code logs with zerolog through a logger passed in, never fmt.Println."},
		{ID: "tests", Content: "Tests are table-driven, each case a t.Run subtest."},
	}
	cols := []Collection{{Name: "c", Memories: mems, Queries: []Query{
		{ID: "on-1", Text: "Should user updates use optimistic locking with a version column and retries?", Relevant: []string{"locking"}},
		{ID: "on-2", Text: "Put the new migration in db/migrations, numbered, one file per change.", Relevant: []string{"migrations"}},
		// The collection's own off-topic query, which the gate lets
		// through (it is about a memory): its figures are not those of the
		// queries --offtopic adds.
		{ID: "own-off", Text: "Library code logs with zerolog through a logger passed in, never fmt.Println.", Relevant: []string{}},
	}}}
	off, err := ReadOffTopic(strings.NewReader(`{"id": "off-1", "text": "What is a good recipe for banana bread with walnuts?"}` + "\n" +
		`{"id": "off-2", "messages": [{"role": "user", "content": "Suggest a few names for a grey kitten."}]}` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cols, err = AddOffTopic(cols, off); err != nil {
		t.Fatal(err)
	}
	emb, err := fake.NewEmbedder(fake.EmbedderConfig{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := memretrieve.DefaultConfig()
	cfg.Mode = memretrieve.ModeIdentity
	r, err := Run(context.Background(), cols, Options{Embedder: emb, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if r.Queries != 5 || r.OnTopic.Queries != 2 || r.OffTopic.Queries != 3 || r.AddedOffTopic.Queries != 2 {
		t.Fatalf("queries %d (%d on topic, %d off, %d of them added), want 5 (2 and 3, 2)", r.Queries, r.OnTopic.Queries, r.OffTopic.Queries, r.AddedOffTopic.Queries)
	}
	if math.Abs(r.OffTopic.InjectedRate-1.0/3) > 1e-12 || r.OffTopic.MemoriesMean == 0 {
		t.Errorf("off topic %+v, want the collection's own query injected and the added ones not", r.OffTopic)
	}
	if r.AddedOffTopic.InjectedRate != 0 || r.AddedOffTopic.MemoriesMean != 0 || r.AddedOffTopic.TokensMean != 0 {
		t.Errorf("the added off-topic queries %+v, want nothing injected", r.AddedOffTopic)
	}
	if r.OnTopic.RelevantInInjection != 1 || r.OnTopic.InjectedRate != 1 {
		t.Errorf("on topic %+v, want every injection to hold its memory", r.OnTopic)
	}
	var mems2, tokens float64
	for _, q := range r.PerQuery {
		added := q.ID == "off-1" || q.ID == "off-2"
		if q.OffTopic != (added || q.ID == "own-off") || q.Added != added {
			t.Errorf("%s: off topic %v, added %v", q.ID, q.OffTopic, q.Added)
		}
		if !q.OffTopic {
			if len(q.Injected) == 0 || q.Injected[0] != cols[0].Queries[slices.IndexFunc(cols[0].Queries, func(x Query) bool { return x.ID == q.ID })].Relevant[0] || q.InjectedTokens == 0 {
				t.Errorf("%s: injected %v (%d tokens), want its memory first", q.ID, q.Injected, q.InjectedTokens)
			}
			mems2 += float64(len(q.Injected)) / 2
			tokens += float64(q.InjectedTokens) / 2
		}
	}
	if math.Abs(r.OnTopic.MemoriesMean-mems2) > 1e-12 || math.Abs(r.OnTopic.TokensMean-tokens) > 1e-12 || r.OnTopic.MemoriesMean > 3 {
		t.Errorf("on topic means %v memories, %v tokens; want %v and %v, at most 3 memories", r.OnTopic.MemoriesMean, r.OnTopic.TokensMean, mems2, tokens)
	}
	// The ranking's scores are over the on-topic queries only.
	if r.Scores.Recall[5] != 1 || r.Scores.MRR != 1 {
		t.Errorf("scores %+v, want recall@5 and MRR 1 over the two on-topic queries", r.Scores)
	}
	js, err := r.JSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(js, &obj); err != nil {
		t.Fatal(err)
	}
	if obj["offtopic_injected_rate"] != 0.3333 || obj["relevant_in_injection"] != 1.0 {
		t.Errorf("JSON %s: want offtopic_injected_rate 0.3333 and relevant_in_injection 1", js)
	}
	for side, n := range map[string]float64{"on_topic": 2, "off_topic": 3, "off_topic_added": 2} {
		m, ok := obj[side].(map[string]any)
		if !ok || m["queries"] != n || m["injected_memories_mean"] == nil || m["injected_tokens_mean"] == nil {
			t.Errorf("JSON %s = %v, want %v queries", side, obj[side], n)
		}
	}
	if m, _ := obj["off_topic_added"].(map[string]any); m["injected_rate"] != 0.0 {
		t.Errorf("JSON off_topic_added = %v, want injected_rate 0", m)
	}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil || !strings.Contains(b.String(), "relevant injected") ||
		!strings.Contains(b.String(), "5 queries (2 on topic, 3 off topic)") ||
		!strings.Contains(b.String(), "off topic, the 2 queries --offtopic added alone: injected 0.000, 0.0 memories, 0 tokens") {
		t.Errorf("WriteText = %q, %v", b.String(), err)
	}
}

func TestReadOffTopic(t *testing.T) {
	tests := []struct {
		name, text string
		says       string // in the error; "": no error
	}{
		{"two", `{"id": "a", "text": "x"}` + "\n\n" + `{"id": "b", "messages": [{"role": "user", "content": "y"}], "relevant": []}`, ""},
		{"none", "\n", "no query"},
		{"no id", `{"text": "x"}`, "without an id"},
		{"repeated id", `{"id": "a", "text": "x"}` + "\n" + `{"id": "a", "text": "y"}`, "also on line 1"},
		{"relevant", `{"id": "a", "text": "x", "relevant": ["m1"]}`, "an off-topic query has none"},
		{"neither", `{"id": "a"}`, "exactly one"},
		{"bad role", `{"id": "a", "messages": [{"role": "tool", "content": "y"}]}`, `role "tool"`},
		{"unknown field", `{"id": "a", "text": "x", "extra": 1}`, "unknown field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			qs, err := ReadOffTopic(strings.NewReader(tt.text))
			if tt.says == "" {
				if err != nil || len(qs) != 2 || !qs[0].OffTopic() || qs[1].Relevant == nil {
					t.Fatalf("ReadOffTopic = %+v, %v; want two off-topic queries", qs, err)
				}
				return
			}
			if !errors.Is(err, ErrDataset) || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("ReadOffTopic error = %v, want ErrDataset saying %q", err, tt.says)
			}
		})
	}
	cols := []Collection{{Name: "c", Queries: []Query{{ID: "a"}}}}
	if _, err := AddOffTopic(cols, []Query{{ID: "a", Text: "x"}}); !errors.Is(err, ErrDataset) || !strings.Contains(err.Error(), `already has a query "a"`) {
		t.Errorf("AddOffTopic with a clashing id = %v, want ErrDataset", err)
	}
	added, err := AddOffTopic(cols, []Query{{ID: "b", Text: "x"}})
	if err != nil || len(added[0].Queries) != 2 || len(cols[0].Queries) != 1 || added[0].Queries[0].Added || !added[0].Queries[1].Added {
		t.Errorf("AddOffTopic = %+v, %v; want the query added to a copy, marked Added", added, err)
	}
}

// TestShippedDatasets: the off-topic set and the coding collection under
// testdata read, and every relevant id is a memory of its collection.
func TestShippedDatasets(t *testing.T) {
	f, err := os.Open("testdata/offtopic/offtopic.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	off, err := ReadOffTopic(f)
	if err != nil || len(off) < 140 {
		t.Fatalf("offtopic.jsonl: %d queries, %v; want about 150", len(off), err)
	}
	for _, name := range []string{"testdata/coding/coding.jsonl", "testdata/chat/chat.jsonl"} {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		cols, err := ReadDataset(f)
		f.Close()
		if err != nil || len(cols) != 1 {
			t.Fatalf("%s: %v", name, err)
		}
		on := 0
		for _, q := range cols[0].Queries {
			if !q.OffTopic() {
				on++
			}
		}
		if on == 0 {
			t.Errorf("%s has no on-topic query", name)
		}
	}
}

// TestRunFake runs the offline default (the hashing embedder and the
// lexical index) end to end: every memory is found by its own words.
func TestRunFake(t *testing.T) {
	cols, err := MADial(os.DirFS("testdata/madial-sample"))
	if err != nil {
		t.Fatal(err)
	}
	emb, err := fake.NewEmbedder(fake.EmbedderConfig{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := memretrieve.DefaultConfig()
	cfg.Mode = memretrieve.ModeIdentity
	r, err := Run(context.Background(), cols, Options{Embedder: emb, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if r.Queries != 3 || r.Scores.Hit[5] != 1 || r.Scores.Recall[5] != 1 || r.VectorSkipped != 0 {
		t.Errorf("report %+v, want every relevant memory in the first 5 of 2", r)
	}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil || !strings.Contains(b.String(), "\nall ") || !strings.Contains(b.String(), "3 queries (3 on topic, 0 off topic) over 4 memories in 2 collections") {
		t.Errorf("WriteText = %q, %v", b.String(), err)
	}
}

func TestRunErrors(t *testing.T) {
	cols := []Collection{{Name: "c", Memories: []Memory{{ID: "a", Content: "x"}}, Queries: []Query{{ID: "q", Text: "x", Relevant: []string{"a"}}}}}
	emb, err := fake.NewEmbedder(fake.EmbedderConfig{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := memretrieve.DefaultConfig()
	cfg.Mode = memretrieve.ModeIdentity
	if _, err := Run(context.Background(), cols, Options{Config: cfg}); err == nil {
		t.Error("Run without an embedder: no error")
	}
	if _, err := Run(context.Background(), cols, Options{Embedder: emb, Config: cfg, Ks: []int{0}}); err == nil {
		t.Error("Run with k 0: no error")
	}
	llmCfg := memretrieve.DefaultConfig()
	if _, err := Run(context.Background(), cols, Options{Embedder: emb, Config: llmCfg}); err == nil || !strings.Contains(err.Error(), "hypothesis model") {
		t.Errorf("Run in LLM mode without an LLM = %v, want an error naming the hypothesis model", err)
	}
	bad := []Collection{{Name: "c"}}
	if _, err := Run(context.Background(), bad, Options{Embedder: emb, Config: cfg}); !errors.Is(err, ErrDataset) {
		t.Errorf("Run on an invalid collection = %v, want ErrDataset", err)
	}
	failing, err := fake.NewEmbedder(fake.EmbedderConfig{FailNext: 100, FailWith: memcore.ErrUnavailable})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), cols, Options{Embedder: failing, Config: cfg}); !errors.Is(err, memcore.ErrUnavailable) {
		t.Errorf("Run with a failing embedder = %v, want its error", err)
	}
}
