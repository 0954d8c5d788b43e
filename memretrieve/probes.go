package memretrieve

import (
	"crypto/sha256"
	_ "embed" // the probe texts
	"encoding/hex"
	"math/rand/v2"
	"strings"
	"sync"

	"github.com/forgemem/forgemem/memcore"
	"github.com/forgemem/forgemem/memretrieve/internal/index"
)

// probesText holds the relevance gate's probe sentences: one per line as
// <domain>\t<text>, lines starting with # left out.
//
//go:embed probes.txt
var probesText string

// probe is one probe text: a sentence of the probe set, or a passage of
// several sentences of one domain, which stands for a longer query.
type probe struct {
	// domain is the index of the probe's domain in probeSet.domains.
	domain int
	text   string
	// tokens is memcore.EstimateTokens of text: the gate's null model is a
	// function of a query's length.
	tokens int
	key    contentKey
}

// Passages of probe sentences: passageCount passages of each of these
// lengths per domain, so that the null model spans the lengths of the
// turn's queries, from one sentence to a long window.
var passageSentences = []int{3, 8, 24}

const passageCount = 10

// theProbes returns the probe set (see probeSet).
var theProbes = sync.OnceValue(func() probeSet {
	domains, all, version := loadProbes(probesText)
	return probeSet{domains: domains, all: all, version: version}
})

// probeSet is the probe set: the names of its domains, in the order of
// their first line, every probe, and a hash identifying it in a stored
// calibration. It is loaded on first use, not when a program starts: a
// process that never calibrates a gate, such as a prompt's hook answered
// by the recall server, does not pay for it.
type probeSet struct {
	domains []string
	all     []probe
	version string
}

// probeTerms are the terms of each probe's text (index.AppendTerms), in
// the order of probeSet.all, computed on first use.
var probeTerms = sync.OnceValue(func() [][]string {
	out := make([][]string, len(theProbes().all))
	for i, p := range theProbes().all {
		out[i] = index.AppendTerms(nil, p.text)
	}
	return out
})

// loadProbes parses the probe sentences of text and returns the domains,
// every probe — each sentence, then passageCount passages of each length in
// passageSentences per domain, drawn the same way every time — and a hash
// of the probe texts.
func loadProbes(text string) ([]string, []probe, string) {
	var domains []string
	sentences := make(map[string][]string)
	for _, line := range strings.Split(text, "\n") {
		domain, sentence, ok := strings.Cut(strings.TrimSpace(line), "\t")
		if !ok || strings.HasPrefix(domain, "#") {
			continue
		}
		if _, seen := sentences[domain]; !seen {
			domains = append(domains, domain)
		}
		sentences[domain] = append(sentences[domain], strings.TrimSpace(sentence))
	}
	var out []probe
	h := sha256.New()
	add := func(domain int, text string) {
		h.Write([]byte(text))
		h.Write([]byte{0})
		out = append(out, probe{domain: domain, text: text, tokens: memcore.EstimateTokens(text),
			key: sha256.Sum256([]byte(text))})
	}
	for d, name := range domains {
		for _, s := range sentences[name] {
			add(d, s)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for d, name := range domains {
		s := sentences[name]
		for _, k := range passageSentences {
			for range passageCount {
				perm := rng.Perm(len(s))
				parts := make([]string, 0, k)
				for _, i := range perm[:min(k, len(s))] {
					parts = append(parts, s[i])
				}
				add(d, strings.Join(parts, " "))
			}
		}
	}
	return domains, out, hex.EncodeToString(h.Sum(nil)[:8])
}
