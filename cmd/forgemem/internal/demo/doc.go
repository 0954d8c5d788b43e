// Package demo shows forgemem's main job end to end, for the
// `forgemem demo` command: scripted sessions of a coding agent, played
// through the real library with offline fake models, printed as a
// newcomer can follow them in a terminal.
//
// [Run] plays four sessions, each a fresh agent process over the same
// memory folders:
//
//  1. the user states preferences (table-driven tests, structured logging
//     with zerolog) and corrects the agent (goroutines without lifecycle
//     management), and pastes an API key;
//  2. a project decision is made with its reason (optimistic locking for
//     user updates, because row locks caused timeouts), and a convention
//     stated (where migrations live);
//  3. the decision changes after an incident, and capture writes its
//     second version, superseding the first;
//  4. a question where the memories matter: the block recalled for the
//     turn holds the changed decision with its history and the correction.
//
// Each session opens a [memcore.FileStore] over Dir/repo (the repository's
// .forge/memory) and Dir/user (~/.forge/memory), builds a
// [memretrieve.Engine] in identity mode (the conversation itself is
// embedded; there is no hypothesis model) and runs a [memcapture.Pipeline]
// fed by a [memcapture.Observer]. Before each turn the agent retrieves;
// after each turn it hands the conversation to the observer. The classifier
// is a scripted fake LLM that reads its prompt as a model would — the
// conversation, and the lists of existing memories in which it finds the
// id a new version supersedes — and the embedder is the deterministic hashing
// fake. One tool result in the conversation shows that tool output never
// reaches the classifier, and the pasted key that capture redacts secrets
// before anything is written.
//
// The output is the same on every run but for the memory ids, which are
// random, and the folder's name: the clock is fixed (the sessions happen
// in March 2025), the index is built synchronously when a session starts,
// and the pipeline is drained by Close when it ends.
package demo
