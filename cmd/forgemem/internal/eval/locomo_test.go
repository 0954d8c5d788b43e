package eval

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestLoCoMoSample(t *testing.T) {
	data, err := os.ReadFile("testdata/locomo-sample/locomo.json")
	if err != nil {
		t.Fatal(err)
	}
	cols, skipped, err := LoCoMo(data)
	if err != nil {
		t.Fatal(err)
	}
	want := []Collection{
		{Name: "conv-a",
			// Sessions in order, speakers by name.
			Memories: []Memory{
				userFact("S1:Ines:1", "Ines adopted a grey cat named Pixel."),
				userFact("S1:Ines:2", "Ines is allergic to peanuts."),
				userFact("S1:Tomas:1", "Tomas runs a small bakery."),
				userFact("S2:Ines:1", "Ines moved to Porto for a job at a shipyard."),
				userFact("S2:Tomas:1", "Tomas started learning the cello in March."),
			},
			Queries: []Query{
				{ID: "qa-1", Text: "What is the name of Ines's cat?", Relevant: []string{"S1:Ines:1"}},
				{ID: "qa-2", Text: "When did Tomas start the cello?", Relevant: []string{"S2:Tomas:1"}},
				// "D2:2; D1:5" names two turns; "D:1:5" is D1:5.
				{ID: "qa-3", Text: "Where did Ines move, and what does Tomas run?", Relevant: []string{"S1:Tomas:1", "S2:Ines:1"}},
			}},
		{Name: "conv-b",
			Memories: []Memory{userFact("S1:Noor:1", "Noor trains for a marathon every spring.")},
			Queries:  []Query{{ID: "qa-1", Text: "Which race does Noor train for?", Relevant: []string{"S1:Noor:1"}}}},
	}
	if !reflect.DeepEqual(cols, want) {
		t.Errorf("LoCoMo(sample) =\n%+v\nwant\n%+v", cols, want)
	}
	if want := (LoCoMoSkipped{Adversarial: 1, Uncited: 1}); skipped != want {
		t.Errorf("skipped %+v, want %+v", skipped, want)
	}
}

func TestLoCoMoErrors(t *testing.T) {
	conv := func(obs, qa string) string {
		return `[{"sample_id": "c", "observation": {` + obs + `}, "qa": [` + qa + `]}]`
	}
	obs := `"session_1_observation": {"A": [["A sings.", "D1:1"]]}`
	qa := `{"question": "Who sings?", "evidence": ["D1:1"], "category": 4}`
	tests := []struct {
		name, data, says string
	}{
		{"not JSON", `[{`, "not JSON: unexpected EOF"},
		{"an object", `{"sample_id": "c"}`, "want a JSON array of conversations"},
		{"a list of numbers", `[1]`, "a JSON number where a list of conversations belongs"},
		{"qa not a list", `[{"sample_id": "c", "qa": 3}]`, "qa is a JSON number, which it cannot be"},
		{"two values", `[] []`, "more than one JSON value"},
		{"no conversation", `[]`, "no conversation"},
		{"empty", " \n", "the file is empty"},
		{"no sample id", `[{"observation": {` + obs + `}, "qa": [` + qa + `]}]`, "no sample_id"},
		{"repeated sample id", strings.Replace(conv(obs, qa), "]}]", "]}, "+conv(obs, qa)[1:], 1), `both "c"`},
		{"bad session key", conv(`"session_x": {}`, qa), `observation key "session_x"`},
		{"observation not a pair", conv(`"session_1_observation": {"A": [["A sings."]]}`, qa), "want [text, evidence]"},
		{"observation without text", conv(`"session_1_observation": {"A": [["  ", "D1:1"]]}`, qa), "want a text first"},
		{"evidence a number", conv(`"session_1_observation": {"A": [["A sings.", 3]]}`, qa), "want a string or a list of strings"},
		{"unknown category", conv(obs, strings.Replace(qa, `"category": 4`, `"category": 9`, 1)), "question 1: category 9"},
		{"question without text", conv(obs, strings.Replace(qa, "Who sings?", " ", 1)), "question 1 has no text"},
		{"no question left", conv(obs, `{"question": "Who?", "evidence": ["D7:1"], "category": 4}`), "0 queries"},
		{"no observation", conv(``, qa), "0 memories"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := LoCoMo([]byte(tt.data))
			if !errors.Is(err, ErrLoCoMo) || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("LoCoMo error = %v, want ErrLoCoMo saying %q", err, tt.says)
			}
		})
	}
}

// FuzzLoCoMo checks that any input converts to collections that pass
// Validate, or fails with ErrLoCoMo, and never panics.
func FuzzLoCoMo(f *testing.F) {
	sample, err := os.ReadFile("testdata/locomo-sample/locomo.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(sample)
	f.Add([]byte(`[{"sample_id": "c", "observation": {"session_1_observation": {"A": [["x", ["D:1:1", "D"]]]}}, "qa": [{"question": "q", "evidence": "D1:1", "category": 1}]}]`))
	f.Add([]byte(`[{"sample_id": "c", "observation": null, "qa": null}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cols, _, err := LoCoMo(data)
		if err != nil {
			if !errors.Is(err, ErrLoCoMo) {
				t.Fatalf("error %v does not wrap ErrLoCoMo", err)
			}
			return
		}
		for i := range cols {
			if err := cols[i].Validate(); err != nil {
				t.Fatalf("collection %d does not validate: %v", i, err)
			}
		}
	})
}
