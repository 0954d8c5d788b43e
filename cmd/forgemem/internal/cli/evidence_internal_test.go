package cli

import (
	"testing"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/workspace"
)

// TestEvidenceLine: the evidence line keeps apart what cleared the gate's
// threshold and what only came along near the turn's best hit, and never
// shows a threshold the gate did not apply.
func TestEvidenceLine(t *testing.T) {
	both := workspace.Evidence{Vector: 0.32, VectorNeeded: 0.13, Lexical: 15, LexicalNeeded: 4.2, LexicalTerms: 4}
	tests := []struct {
		name string
		ev   workspace.Evidence
		want string
	}{
		{"cleared on both", with(both, "both", "both"),
			"vector 0.32 (threshold 0.13), words 4 shared, weight 15.0 (threshold 4.2); cleared the gate on both"},
		{"cleared on both, admitted on one",
			with(both, "both", "vector"),
			"vector 0.32 (threshold 0.13), words 4 shared, weight 15.0 (threshold 4.2); cleared the gate on both"},
		{"cleared on its words, the vector near the best",
			with(workspace.Evidence{Vector: 0.07, VectorNeeded: 0.09, Lexical: 4.2, LexicalNeeded: 1, LexicalTerms: 1}, "lexical", "both"),
			"vector 0.07 (threshold 0.09), words 1 shared, weight 4.2 (threshold 1.0); cleared the gate on its words; admitted on both, each near the turn's best"},
		{"under the thresholds, near the best",
			with(workspace.Evidence{Vector: 0.04, VectorNeeded: 0.13, Lexical: 3.4, LexicalNeeded: 4.2, LexicalTerms: 1}, "none", "lexical"),
			"vector 0.04 (threshold 0.13), words 1 shared, weight 3.4 (threshold 4.2); under the gate's thresholds; admitted on its words, near the turn's best"},
		{"cleared, not admitted",
			with(workspace.Evidence{Vector: 0.2, VectorNeeded: 0.13}, "vector", "none"),
			"vector 0.20 (threshold 0.13), no word shared; cleared the gate on its vector; not admitted"},
		{"below the gate",
			with(workspace.Evidence{Vector: 0.04, VectorNeeded: 0.13}, "none", "none"),
			"vector 0.04 (threshold 0.13), no word shared; below the gate"},
		{"found by its words only",
			with(workspace.Evidence{Lexical: 6.1, LexicalNeeded: 4.9, LexicalTerms: 3}, "lexical", "lexical"),
			"not found by the vector search, words 3 shared, weight 6.1 (threshold 4.9); cleared the gate on its words"},
		{"a negative lexical threshold",
			with(workspace.Evidence{Vector: 0.18, VectorNeeded: 0.07, Lexical: 3.7, LexicalNeeded: -5.4, LexicalTerms: 1}, "both", "both"),
			"vector 0.18 (threshold 0.07), words 1 shared, weight 3.7 (any shared word clears); cleared the gate on both"},
		{"gate off",
			with(workspace.Evidence{Vector: 0.5, Lexical: 2, LexicalTerms: 1}, "none", "both"),
			"vector 0.50, words 1 shared, weight 2.0; no gate: found by both"},
	}
	for _, tt := range tests {
		if got := evidenceLine(tt.ev); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}

// with returns ev with its gate's verdict: the sides it cleared and those
// it was admitted on.
func with(ev workspace.Evidence, cleared, passed string) workspace.Evidence {
	ev.Cleared, ev.Passed = cleared, passed
	return ev
}
