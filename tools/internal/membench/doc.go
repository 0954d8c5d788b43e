// Package membench measures forgemem against a peer and against the
// hardware floor, for the membench command (tools/cmd/membench) and
// docs/PERFORMANCE.md:
//
//   - vector search: the memretrieve index against chromem-go's
//     QueryEmbedding and against one plain dot-product pass over the same
//     contiguous vectors, with the top-k checked against an exact search;
//   - cold start: a FileStore of memory files with a warm embedding cache to
//     an engine ready to answer, against reading the same files' bytes;
//   - incremental cost: the rebuild after one new memory;
//   - capture overhead: OnTurnComplete's cost on the agent, and the size of
//     the classifier prompt against its budget with many memories;
//   - retrieval overhead: Retrieve latency with zero-latency fake providers,
//     with the lexical index and without it;
//   - the lexical (BM25) index: its build and one turn's search.
//
// Every figure of one report comes from one run on one machine.
package membench
