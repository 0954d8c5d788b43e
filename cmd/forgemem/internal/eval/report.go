package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/forgemem/forgemem/cmd/forgemem/internal/termtext"
)

// JSON returns the report as one JSON object: "recall@K" and "hit@K" for
// each cut-off K, "mrr" (over the on-topic queries), "relevant_in_injection"
// (the share of on-topic queries whose injection holds a relevant memory),
// "offtopic_injected_rate" (the share of off-topic queries whose injection
// is not empty), "on_topic" and "off_topic" (each with "queries",
// "injected_rate", "relevant_in_injection", "injected_memories_mean" and
// "injected_tokens_mean"), "off_topic_added" (the same for the off-topic
// queries --offtopic added alone, when it added any), "queries", "collections", "memories", "p50_ms",
// "p95_ms", "texts_embedded", "query_texts_embedded", "vector_skipped",
// "candidates", and "per_collection" (each with "collection", "memories",
// "queries", the scores and the injection figures). Scores and rates are
// rounded to four decimals, means and times to two. extra adds keys (the
// command adds the provider, the model and the settings).
func (r *Report) JSON(extra map[string]any) ([]byte, error) {
	obj := make(map[string]any, 16+len(extra))
	for k, v := range extra {
		obj[k] = v
	}
	addScores(obj, r.Scores, r.Ks)
	addInjections(obj, r.OnTopic, r.OffTopic)
	if r.AddedOffTopic.Queries > 0 {
		obj["off_topic_added"] = injectionJSON(r.AddedOffTopic)
	}
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
		addInjections(m, c.OnTopic, c.OffTopic)
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

// addInjections adds the injection figures of the on-topic and the
// off-topic queries.
func addInjections(obj map[string]any, on, off Injection) {
	obj["relevant_in_injection"] = round(on.RelevantInInjection, 4)
	obj["offtopic_injected_rate"] = round(off.InjectedRate, 4)
	obj["on_topic"] = injectionJSON(on)
	obj["off_topic"] = injectionJSON(off)
}

func injectionJSON(in Injection) map[string]any {
	return map[string]any{
		"queries":                in.Queries,
		"injected_rate":          round(in.InjectedRate, 4),
		"relevant_in_injection":  round(in.RelevantInInjection, 4),
		"injected_memories_mean": round(in.MemoriesMean, 2),
		"injected_tokens_mean":   round(in.TokensMean, 2),
	}
}

func round(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}

// WriteText writes the report for people: the scores of the rankings, what
// the injections held on topic and off topic, then the latency and the work
// done.
func (r *Report) WriteText(w io.Writer) error {
	if err := r.writeScores(w); err != nil {
		return err
	}
	if _, err := fmt.Fprintln(w); err != nil {
		return err
	}
	if err := r.writeInjections(w); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%d queries (%d on topic, %d off topic) over %d memories in %d collections; Retrieve p50 %.1f ms, p95 %.1f ms; "+
		"%d texts embedded (%d for queries); %.1f candidates per ranking; %d queries without the vector ranking\n",
		r.Queries, r.OnTopic.Queries, r.OffTopic.Queries, r.Memories, r.Collections, r.P50Ms, r.P95Ms, r.TextsEmbedded, r.QueryTextsEmbedded, r.Candidates, r.VectorSkipped)
	return err
}

// writeInjections writes a table of what the injections held, per
// collection and for all: on topic, the share holding a relevant memory;
// off topic, the share that is not empty; the mean memories and tokens of
// each. A line after it gives the off-topic queries --offtopic added alone.
func (r *Report) writeInjections(w io.Writer) error {
	tw := termtext.NewTable(w, 2)
	fmt.Fprintln(tw, "collection\ton topic\trelevant injected\tmemories\ttokens\toff topic\tinjected\tmemories\ttokens")
	line := func(name string, on, off Injection) {
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.1f\t%.0f\t%d\t%.3f\t%.1f\t%.0f\n", name, on.Queries, on.RelevantInInjection,
			on.MemoriesMean, on.TokensMean, off.Queries, off.InjectedRate, off.MemoriesMean, off.TokensMean)
	}
	if len(r.PerCollection) > 1 {
		for _, c := range r.PerCollection {
			line(c.Name, c.OnTopic, c.OffTopic)
		}
	}
	line("all", r.OnTopic, r.OffTopic)
	if err := tw.Flush(); err != nil {
		return err
	}
	if a := r.AddedOffTopic; a.Queries > 0 {
		_, err := fmt.Fprintf(w, "off topic, the %d queries --offtopic added alone: injected %.3f, %.1f memories, %.0f tokens\n",
			a.Queries, a.InjectedRate, a.MemoriesMean, a.TokensMean)
		return err
	}
	return nil
}

// writeScores writes a table of the rankings' scores over the on-topic
// queries, per collection and for all.
func (r *Report) writeScores(w io.Writer) error {
	tw := termtext.NewTable(w, 2)
	var head, row []string
	head = append(head, "collection", "on topic")
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
			line(c.Name, c.OnTopic.Queries, c.Scores)
		}
	}
	line("all", r.OnTopic.Queries, r.Scores)
	return tw.Flush()
}
