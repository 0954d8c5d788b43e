// Package membench measures forgemem against a peer and against the
// hardware floor, for the membench command (tools/cmd/membench) and
// docs/PERFORMANCE.md:
//
//   - vector search: the memretrieve index (exact and quantised) against
//     chromem-go's QueryEmbedding and against the stream floor, every core
//     reading the same contiguous vectors once, with the top-k checked
//     against an exact search;
//   - the quantised index: its recall@k against the exact index on
//     clustered synthetic vectors and on real sentence embeddings (the
//     MADial-Bench texts of testdata, embedded by tools/embedserver), and
//     the resident memory per memory of the index, float32 and quantised;
//   - cold start: a FileStore of memory files with a warm embedding cache to
//     an engine ready to answer, against reading the same files' bytes;
//   - incremental cost: the rebuild after one new memory;
//   - capture overhead: OnTurnComplete's cost on the agent, and the size of
//     the classifier prompt against its budget with many memories;
//   - capture prompts over a scripted session: prompt tokens per pass, the
//     prefix shared with the previous pass and the new tokens per turn;
//   - retrieval overhead: Retrieve latency with zero-latency fake providers,
//     with the lexical index and without it;
//   - the lexical (BM25) index: its build and one turn's search;
//   - what a prompt waits for: the built forgemem binary run as Claude
//     Code's prompt hook, a new process per prompt, answered by the recall
//     server, at up to 100,000 memories and 1,536 dimensions, beside a
//     floor of a Go program's start and one read of the vectors and files
//     a prompt touches; the first prompt after a new memory; and the MCP
//     server's memory_recall.
//
// Every figure of one report comes from one run on one machine.
package membench
