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
// it. Each query is ranked against its own collection's memories only. A
// query without relevant memories ("relevant": []) is off topic: nothing
// in the collection answers it, and the right injection is none.
// [ReadOffTopic] reads a file of off-topic queries and [AddOffTopic] adds
// them to every collection, so that one set serves a whole dataset.
//
// [Run] puts each collection into a fresh memcore.FileStore in a temporary
// folder and goes through the real engine: memretrieve.NewEngine, Rebuild,
// then one Retrieve per query, whose Result.Ranked is the ranking scored.
// It reports, over the on-topic queries, recall@k (the share of a query's
// relevant memories in its first k, averaged over queries), hit@k (the
// share of queries with at least one relevant memory in their first k) and
// MRR (the mean reciprocal rank of the first relevant memory) of the
// ranking; what the injection (Result.Memories and Result.Injection, the
// block an agent gets with the configuration in force) holds: on topic,
// the share of queries whose injection holds a relevant memory, off topic,
// the share whose injection is not empty, and for each the mean memories
// and tokens; the latency of Retrieve (p50, p95) and the number of texts
// embedded.
//
// [MADial] converts the MADial-Bench benchmark (a copy is in
// testdata/madial, with its MIT licence) into a dataset, one collection
// per user, each dialogue up to its test turn a query.
package eval
