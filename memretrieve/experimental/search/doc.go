// Package search offers the two indexes the memretrieve engine searches on
// their own — the exact (or quantised) vector index and the BM25 lexical
// index — for benchmarks and experiments, such as forgemem's membench.
//
// It is experimental: it is not covered by memretrieve's compatibility
// promises, and may change or go away in any release. A host that recalls
// memories uses memretrieve.Engine, which builds, caches and fuses these
// indexes itself.
package search
