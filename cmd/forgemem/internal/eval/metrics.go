package eval

import (
	"math"
	"slices"
)

// Scores are the quality figures of one query, or their means over many.
type Scores struct {
	// Recall maps k to recall@k: the share of the query's relevant
	// memories among the first k of the ranking.
	Recall map[int]float64
	// Hit maps k to hit@k: 1 when at least one relevant memory is among
	// the first k, else 0.
	Hit map[int]float64
	// MRR is the reciprocal rank of the first relevant memory in the whole
	// ranking (1 for first place, 1/2 for second, …), 0 when none is in it.
	MRR float64
}

// Score computes the scores of one ranking (memory ids, best first) for the
// relevant ids, at each k of ks. A ranking shorter than k counts what it
// has; ids repeated in the ranking count once, at their first place.
func Score(ranking, relevant []string, ks []int) Scores {
	rel := make(map[string]bool, len(relevant))
	for _, id := range relevant {
		rel[id] = true
	}
	s := Scores{Recall: make(map[int]float64, len(ks)), Hit: make(map[int]float64, len(ks))}
	found := 0
	seen := make(map[string]bool, len(ranking))
	// foundAt[i] is how many relevant ids the first i+1 places hold.
	foundAt := make([]int, 0, len(ranking))
	for _, id := range ranking {
		if rel[id] && !seen[id] {
			found++
			if s.MRR == 0 {
				s.MRR = 1 / float64(len(foundAt)+1)
			}
		}
		seen[id] = true
		foundAt = append(foundAt, found)
	}
	for _, k := range ks {
		n := 0
		if len(foundAt) > 0 && k > 0 {
			n = foundAt[min(k, len(foundAt))-1]
		}
		if len(rel) > 0 {
			s.Recall[k] = float64(n) / float64(len(rel))
		}
		if n > 0 {
			s.Hit[k] = 1
		} else {
			s.Hit[k] = 0
		}
	}
	return s
}

// meanScores returns the mean of each figure over all.
func meanScores(all []Scores, ks []int) Scores {
	m := Scores{Recall: make(map[int]float64, len(ks)), Hit: make(map[int]float64, len(ks))}
	if len(all) == 0 {
		return m
	}
	n := float64(len(all))
	for _, s := range all {
		for _, k := range ks {
			m.Recall[k] += s.Recall[k] / n
			m.Hit[k] += s.Hit[k] / n
		}
		m.MRR += s.MRR / n
	}
	return m
}

// percentile returns the p-th percentile (0–100) of sorted values by the
// nearest-rank method: the smallest value with at least p% of the values
// at or below it; 0 for no values.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// latencyPercentiles returns the 50th and 95th percentiles of ms.
func latencyPercentiles(ms []float64) (p50, p95 float64) {
	s := slices.Clone(ms)
	slices.Sort(s)
	return percentile(s, 50), percentile(s, 95)
}
