// Package eval measures how well forgemem's retrieval recalls the right
// memories, for the `forgemem eval` command and docs/EVALUATION.md.
//
// A dataset is JSON Lines, one [Collection] per line:
//
//	{"collection": "name",
//	 "memories": [{"id": "m1", "content": "…", "category": "user-facts", "scope": "user"}, …],
//	 "queries":  [{"id": "q1", "text": "…", "relevant": ["m1", …]},
//	              {"id": "q2", "messages": [{"role": "user", "content": "…"}, …], "relevant": […]}, …]}
//
// Ids are any strings, unique within their collection; category and scope
// are optional (user-facts and user). A query is a text (one user message)
// or a conversation (user and assistant messages, oldest first), which
// retrieval receives as a turn's window, so the real window code shapes
// it. Each query is ranked against its own collection's memories only.
//
// [Run] puts each collection into a fresh memcore.FileStore in a temporary
// folder and goes through the real engine: memretrieve.NewEngine, Rebuild,
// then one Retrieve per query, whose Result.Ranked is the ranking scored.
// It reports recall@k (the share of a query's relevant memories in its
// first k, averaged over queries), hit@k (the share of queries with at
// least one relevant memory in their first k), MRR (the mean reciprocal
// rank of the first relevant memory), the latency of Retrieve (p50, p95)
// and the number of texts embedded.
//
// [MADial] converts the MADial-Bench benchmark (package madialbench holds
// it, MIT licence) into a dataset, one collection per user, each dialogue
// up to its test turn a query.
package eval
