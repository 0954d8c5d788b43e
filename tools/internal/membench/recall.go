package membench

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/forgemem/forgemem/memretrieve/experimental/search"
	"github.com/forgemem/forgemem/providers/openai"
	"github.com/forgemem/forgemem/tools/internal/embedserver"
	"github.com/forgemem/forgemem/tools/internal/madialbench"
)

// Recall describes the recall measurements of the quantised index: its
// top-k against the exact index's over the same vectors, on clustered
// synthetic vectors and on real sentence embeddings.
type Recall struct {
	K int `json:"k"`

	ClusteredDocs     int `json:"clustered_docs"`
	ClusteredQueries  int `json:"clustered_queries"`
	ClusteredDim      int `json:"clustered_dim"`
	ClusteredClusters int `json:"clustered_clusters"`
	// ClusteredCandidates[f] is the share of the exact top-k found among
	// the best f·k rows by the int8 score alone (f = 1, 2, 4, 8): how many
	// candidates the re-rank needs.
	ClusteredCandidates map[string]float64 `json:"clustered_exact_topk_in_int8_top_f_k"`

	RealModel      string             `json:"real_model,omitempty"`
	RealDocs       int                `json:"real_docs"`
	RealQueries    int                `json:"real_queries"`
	RealDim        int                `json:"real_dim"`
	RealCandidates map[string]float64 `json:"real_exact_topk_in_int8_top_f_k,omitempty"`
	// RealSkipped says why there is no figure on real embeddings.
	RealSkipped string `json:"real_skipped,omitempty"`
}

// candidateFactors are the multiples of k whose int8 candidates are
// checked for the exact top-k.
var candidateFactors = []int{1, 2, 4, 8}

// measureRecall measures the quantised index's recall@k against the exact
// index on clustered synthetic vectors, and on real sentence embeddings of
// the MADial-Bench texts when cfg.RealTexts asks for them (embedded with
// tools/embedserver, which needs node: without it the figure is null and
// the reason is reported).
func measureRecall(ctx context.Context, cfg Config, r *Report, progress func(string, ...any)) error {
	r.Recall.K = cfg.K
	const clusters = 100
	rng := newRand(17)
	docs, queries := clustered(rng, cfg.RecallDocs, cfg.RecallQueries, cfg.Dim, clusters, 0.7)
	recall, cands, err := quantizedRecall(docs, queries, cfg.K)
	if err != nil {
		return err
	}
	r.QuantizedRecallAt10Clustered = recall
	r.Recall.ClusteredDocs, r.Recall.ClusteredQueries, r.Recall.ClusteredDim, r.Recall.ClusteredClusters = len(docs), len(queries), cfg.Dim, clusters
	r.Recall.ClusteredCandidates = cands
	r.QuantizedRecallAt10 = recall

	if cfg.RealTexts == 0 {
		r.Recall.RealSkipped = "not asked for (-quick or a test run)"
		return nil
	}
	docTexts, queryTexts, err := madialTexts(cfg.RealTexts)
	if err != nil {
		return err
	}
	// Each distinct text is embedded once (the dialogue lines are
	// documents and queries both).
	var unique []string
	at := make(map[string]int)
	for _, t := range append(slices.Clone(docTexts), queryTexts...) {
		if _, ok := at[t]; !ok {
			at[t] = len(unique)
			unique = append(unique, t)
		}
	}
	progress("embedding %d MADial-Bench texts with tools/embedserver (%s)", len(unique), embedserver.Model)
	vecs, err := embedReal(ctx, unique)
	if err != nil {
		r.Recall.RealSkipped = err.Error()
		progress("no recall on real embeddings: %v", err)
		return nil
	}
	lookup := func(texts []string) [][]float32 {
		out := make([][]float32, len(texts))
		for i, t := range texts {
			out[i] = vecs[at[t]]
		}
		return out
	}
	real, realCands, err := quantizedRecall(lookup(docTexts), lookup(queryTexts), cfg.K)
	if err != nil {
		return err
	}
	r.QuantizedRecallAt10Real = &real
	r.Recall.RealModel, r.Recall.RealDocs, r.Recall.RealQueries, r.Recall.RealDim = embedserver.Model, len(docTexts), len(queryTexts), len(vecs[0])
	r.Recall.RealCandidates = realCands
	r.QuantizedRecallAt10 = min(recall, real)
	return nil
}

// quantizedRecall builds the exact and the quantised index over docs and
// returns the quantised index's recall@k against the exact one (the share
// of the exact top-k ids it returns, over all queries), and, for each
// candidate factor f, the share of the exact top-k among the best f·k rows
// by int8 score.
func quantizedRecall(docs, queries [][]float32, k int) (float64, map[string]float64, error) {
	ids := make([]string, len(docs))
	for i := range ids {
		ids[i] = fmt.Sprint(i)
	}
	exact, err := search.NewIndex(ids, docs, search.IndexConfig{})
	if err != nil {
		return 0, nil, err
	}
	quant, err := search.NewIndex(ids, docs, search.IndexConfig{Quantized: true})
	if err != nil {
		return 0, nil, err
	}
	want, err := exact.SearchBatch(queries, k)
	if err != nil {
		return 0, nil, err
	}
	got, err := quant.SearchBatch(queries, k)
	if err != nil {
		return 0, nil, err
	}
	found, total := 0, 0
	for qi := range queries {
		for _, w := range want[qi] {
			total++
			if slices.ContainsFunc(got[qi], func(m search.Match) bool { return m.ID == w.ID }) {
				found++
			}
		}
	}
	return float64(found) / float64(total), candidateRecall(docs, queries, want, k), nil
}

// candidateRecall is, for each candidate factor f, the share of the exact
// top-k (want) among the best f·k rows by the int8 score the quantised
// index scans with: each vector quantised symmetrically with one scale
// (its largest magnitude over 127), the query too, the integer dot
// product times the row's scale.
func candidateRecall(docs, queries [][]float32, want [][]search.Match, k int) map[string]float64 {
	codes := make([][]int8, len(docs))
	scales := make([]float64, len(docs))
	for i, d := range docs {
		codes[i], scales[i] = quantize(unit(d))
	}
	out := make(map[string]float64)
	found := make([]int, len(candidateFactors))
	total := 0
	type scored struct {
		i int
		s float64
	}
	all := make([]scored, len(docs))
	for qi, q := range queries {
		qc, _ := quantize(unit(q))
		for i, c := range codes {
			var dot int64
			for j, v := range c {
				dot += int64(v) * int64(qc[j])
			}
			all[i] = scored{i, float64(dot) * scales[i]}
		}
		slices.SortFunc(all, func(a, b scored) int { return cmp.Or(cmp.Compare(b.s, a.s), cmp.Compare(a.i, b.i)) })
		for _, w := range want[qi] {
			total++
			for fi, f := range candidateFactors {
				if slices.ContainsFunc(all[:min(f*k, len(all))], func(s scored) bool { return fmt.Sprint(s.i) == w.ID }) {
					found[fi]++
				}
			}
		}
	}
	for fi, f := range candidateFactors {
		out[fmt.Sprint(f)] = float64(found[fi]) / float64(total)
	}
	return out
}

// quantize is the index's quantisation: v[i] ≈ code[i]·scale.
func quantize(v []float32) ([]int8, float64) {
	var m float64
	for _, f := range v {
		m = max(m, math.Abs(float64(f)))
	}
	code := make([]int8, len(v))
	if m == 0 {
		return code, 0
	}
	for i, f := range v {
		code[i] = int8(math.Round(float64(f) * 127 / m))
	}
	return code, m / 127
}

// unit returns v scaled to unit length.
func unit(v []float32) []float32 {
	var s float64
	for _, f := range v {
		s += float64(f) * float64(f)
	}
	out := make([]float32, len(v))
	for i, f := range v {
		out[i] = float32(float64(f) / math.Sqrt(s))
	}
	return out
}

// clustered returns n unit vectors of dim values drawn around clusters
// random centres — each value the centre's plus Gaussian noise of spread
// over √dim, so that a vector's cosine with its centre is about
// 1/√(1+spread²) — and queries drawn the same way. Many vectors are close
// to one another, unlike uniformly random ones, which makes the int8
// ranking harder.
func clustered(rng *rand.Rand, n, queries, dim, clusters int, spread float64) (docs, qs [][]float32) {
	centres := make([][]float32, clusters)
	for i := range centres {
		centres[i] = make([]float32, dim)
		randomUnit(rng, centres[i])
	}
	draw := func() []float32 {
		c := centres[rng.IntN(clusters)]
		v := make([]float32, dim)
		for j := range v {
			v[j] = c[j] + float32(rng.NormFloat64()*spread/math.Sqrt(float64(dim)))
		}
		return unit(v)
	}
	for range n {
		docs = append(docs, draw())
	}
	for range queries {
		qs = append(qs, draw())
	}
	return docs, qs
}

// madialTexts returns the MADial-Bench texts: as documents, every memory's
// event and every line of every dialogue; as queries, each dialogue up to
// its test turn, and every dialogue line again (its own document is then
// its best match; the other nine of its top ten are real neighbours). With
// limit > 0, only the first limit documents and the queries of as many
// lines.
func madialTexts(limit int) (docs, queries []string, err error) {
	data, err := madialbench.FS()
	if err != nil {
		return nil, nil, err
	}
	if docs, err = madialEvents(data); err != nil {
		return nil, nil, err
	}
	lines, queries, err := madialDialogues(data)
	if err != nil {
		return nil, nil, err
	}
	docs = append(docs, lines...)
	if limit > 0 && limit < len(docs) {
		docs, queries = docs[:limit], queries[:min(limit/4+1, len(queries))]
	}
	return docs, queries, nil
}

// madialEvents returns the event of every memory of MADial-Bench.
func madialEvents(data fs.FS) ([]string, error) {
	mem, err := fs.ReadFile(data, madialbench.MemoryFile)
	if err != nil {
		return nil, err
	}
	var events []string
	sc := bufio.NewScanner(bytes.NewReader(mem))
	for sc.Scan() {
		var m map[string]struct {
			Event string `json:"event"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return nil, fmt.Errorf("memory-en.jsonl: %w", err)
		}
		for _, v := range m {
			events = append(events, v.Event)
		}
	}
	return events, nil
}

// madialDialogues returns every line of every MADial-Bench dialogue, as
// documents, and as queries every line again and, after a dialogue's
// lines, the dialogue up to its test turn.
func madialDialogues(data fs.FS) (lines, queries []string, err error) {
	dia, err := fs.ReadFile(data, madialbench.DialogueFile)
	if err != nil {
		return nil, nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(dia))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var d struct {
			Dialogue []string `json:"dialogue"`
			TestTurn []int    `json:"test-turn"`
		}
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			return nil, nil, fmt.Errorf("dialogue-en.jsonl: %w", err)
		}
		var context []string
		for i, line := range d.Dialogue {
			line = strings.TrimSpace(line)
			if line == "<BOD>" || line == "<EOD>" || line == "" {
				continue
			}
			if len(d.TestTurn) > 0 && i < d.TestTurn[0] {
				context = append(context, line)
			}
			lines = append(lines, line)
			queries = append(queries, line)
		}
		if len(context) > 0 {
			queries = append(queries, strings.Join(context, "\n"))
		}
	}
	return lines, queries, nil
}

// embedReal embeds texts with tools/embedserver through providers/openai.
func embedReal(ctx context.Context, texts []string) ([][]float32, error) {
	baseURL, stop, err := embedserver.Start(ctx, embedserver.Options{})
	if err != nil {
		return nil, err
	}
	defer stop()
	client, err := openai.New(openai.Config{BaseURL: baseURL, EmbeddingModel: embedserver.Model, MaxBatch: 64})
	if err != nil {
		return nil, err
	}
	vecs, err := client.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embedserver: %w", err)
	}
	return vecs, nil
}
