package mcpserver_test

import (
	"context"
	"math"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Agents such as Claude Code do not show a model every MCP tool up front:
// the model finds a tool by searching the tools' names and descriptions
// with words of its own, usually the user's. These requests are what users
// say; for each, the keyword search below must rank the tool that answers
// it first.
//
// The search is a proxy for the agent's, not the agent's itself: BM25
// over the name's words, the title and the description (the name counting
// three times, the title twice), every word of the request a query term,
// with plural and -ing endings folded. It catches a description that lacks
// the words a user asks with, or a name that pulls a request to the wrong
// tool; it cannot prove what a real model will search for.
func TestToolsAreFoundByHowUsersAsk(t *testing.T) {
	f := newFixture(t)
	res, err := f.session.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	index := newToolIndex(res.Tools)
	tests := []struct {
		request, want string
	}{
		{"what do you remember about my testing preferences", "memory_recall"},
		{"do you know how we deploy", "memory_recall"},
		{"what did we decide about the database", "memory_recall"},
		{"forget that I use tabs", "memory_forget"},
		{"that is no longer true, delete that memory", "memory_forget"},
		{"remember that we deploy on Fridays", "memory_remember"},
		{"remember that I prefer table-driven tests", "memory_remember"},
		{"from now on always wrap errors", "memory_remember"},
		{"show me that memory", "memory_show"},
		{"what did that memory say before", "memory_show"},
		{"list everything you remember", "memory_list"},
		{"what have you saved", "memory_list"},
		{"find the memory about the database", "memory_search"},
		{"search my memories for the deployment decision", "memory_search"},
	}
	for _, tt := range tests {
		ranked := index.search(tt.request)
		if ranked[0].name != tt.want {
			t.Errorf("%q ranks %v; want %s first", tt.request, ranked, tt.want)
		}
	}
}

// toolIndex is a BM25 index of tools: one document per tool.
type toolIndex struct {
	docs   []toolDoc
	df     map[string]int
	avgLen float64
}

type toolDoc struct {
	name string
	tf   map[string]float64
	len  float64
}

// ranked is a tool's score for a query.
type ranked struct {
	name  string
	score float64
}

// Field weights: a word of the name counts three times, of the title twice.
const (
	nameWeight  = 3
	titleWeight = 2
	bm25K1      = 1.2
	bm25B       = 0.75
)

func newToolIndex(tools []*mcp.Tool) *toolIndex {
	ix := &toolIndex{df: map[string]int{}}
	total := 0.0
	for _, tl := range tools {
		d := toolDoc{name: tl.Name, tf: map[string]float64{}}
		for _, f := range []struct {
			text   string
			weight float64
		}{{tl.Name, nameWeight}, {tl.Title, titleWeight}, {tl.Description, 1}} {
			for _, w := range words(f.text) {
				d.tf[w] += f.weight
				d.len += f.weight
			}
		}
		for w := range d.tf {
			ix.df[w]++
		}
		total += d.len
		ix.docs = append(ix.docs, d)
	}
	ix.avgLen = total / float64(len(ix.docs))
	return ix
}

// search ranks every tool for query, best first.
func (ix *toolIndex) search(query string) []ranked {
	terms := map[string]bool{}
	for _, w := range words(query) {
		terms[w] = true
	}
	n := float64(len(ix.docs))
	var out []ranked
	for _, d := range ix.docs {
		score := 0.0
		for w := range terms {
			tf := d.tf[w]
			if tf == 0 {
				continue
			}
			df := float64(ix.df[w])
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			score += idf * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*d.len/ix.avgLen))
		}
		out = append(out, ranked{d.name, score})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].score > out[j].score })
	return out
}

// words are the lower-case words of s (letters and digits; "_" splits a
// tool's name), with plural and -ing endings folded.
func words(s string) []string {
	fields := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for i, w := range fields {
		fields[i] = fold(w)
	}
	return fields
}

// fold folds a word's plural and -ing endings: "memories" is "memory",
// "preferences" "preference", "testing" "test".
func fold(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 5 && strings.HasSuffix(w, "ing"):
		return w[:len(w)-3]
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss"):
		return w[:len(w)-1]
	}
	return w
}
