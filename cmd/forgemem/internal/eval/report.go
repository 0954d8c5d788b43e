package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
)

// JSON returns the report as one JSON object: "recall@K" and "hit@K" for
// each cut-off K, "mrr", "queries", "collections", "memories", "p50_ms",
// "p95_ms", "texts_embedded", "query_texts_embedded", "vector_skipped",
// "candidates", and "per_collection" (each with "collection", "memories",
// "queries", the scores). Scores are rounded to four decimals, times to two.
// extra adds keys (the command adds the provider and model).
func (r *Report) JSON(extra map[string]any) ([]byte, error) {
	obj := make(map[string]any, 16+len(extra))
	for k, v := range extra {
		obj[k] = v
	}
	addScores(obj, r.Scores, r.Ks)
	obj["queries"] = r.Queries
	obj["collections"] = r.Collections
	obj["memories"] = r.Memories
	obj["p50_ms"] = round(r.P50Ms, 2)
	obj["p95_ms"] = round(r.P95Ms, 2)
	obj["texts_embedded"] = r.TextsEmbedded
	obj["query_texts_embedded"] = r.QueryTextsEmbedded
	obj["vector_skipped"] = r.VectorSkipped
	obj["candidates"] = round(r.Candidates, 2)
	per := make([]map[string]any, len(r.PerCollection))
	for i, c := range r.PerCollection {
		m := map[string]any{"collection": c.Name, "memories": c.Memories, "queries": c.Queries}
		addScores(m, c.Scores, r.Ks)
		per[i] = m
	}
	obj["per_collection"] = per
	return json.Marshal(obj) // map keys are sorted: the output is stable
}

func addScores(obj map[string]any, s Scores, ks []int) {
	for _, k := range ks {
		obj["recall@"+strconv.Itoa(k)] = round(s.Recall[k], 4)
		obj["hit@"+strconv.Itoa(k)] = round(s.Hit[k], 4)
	}
	obj["mrr"] = round(s.MRR, 4)
}

func round(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}

// WriteText writes the report for people: the scores, then the latency
// and the work done.
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	var head, row []string
	head = append(head, "collection", "queries")
	for _, k := range r.Ks {
		head = append(head, "recall@"+strconv.Itoa(k))
	}
	for _, k := range r.Ks {
		head = append(head, "hit@"+strconv.Itoa(k))
	}
	head = append(head, "MRR")
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	line := func(name string, queries int, s Scores) {
		row = append(row[:0], name, strconv.Itoa(queries))
		for _, k := range r.Ks {
			row = append(row, fmt.Sprintf("%.3f", s.Recall[k]))
		}
		for _, k := range r.Ks {
			row = append(row, fmt.Sprintf("%.3f", s.Hit[k]))
		}
		row = append(row, fmt.Sprintf("%.3f", s.MRR))
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if len(r.PerCollection) > 1 {
		for _, c := range r.PerCollection {
			line(c.Name, c.Queries, c.Scores)
		}
	}
	line("all", r.Queries, r.Scores)
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%d queries over %d memories in %d collections; Retrieve p50 %.1f ms, p95 %.1f ms; "+
		"%d texts embedded (%d for queries); %.1f candidates per ranking; %d queries without the vector ranking\n",
		r.Queries, r.Memories, r.Collections, r.P50Ms, r.P95Ms, r.TextsEmbedded, r.QueryTextsEmbedded, r.Candidates, r.VectorSkipped)
	return err
}
