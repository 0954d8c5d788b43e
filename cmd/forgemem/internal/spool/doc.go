// Package spool is the durable capture queue of a memory folder
// (.forge/memory/.spool/, ignored by git): agent hooks, which live for
// milliseconds, queue capture triggers there, and a worker process runs
// the capture passes after they are gone.
//
// Each trigger is one file ([Entry]), written atomically with
// memcore/atomicfile, holding what its pass needs: the kind (a turn or a
// compaction), the session id and the conversation window itself, read
// from the agent's transcript when the trigger fired, so that the pass does
// not depend on a transcript that may grow, be compacted or be deleted
// before the worker runs. The window is redacted (memcore/redact) before
// it is written: no secret is at rest in the queue. [Next] orders them:
// compactions first, oldest first, never dropped by the worker; then, of
// each session, only the newest turn, whose window holds the older ones'
// (latest wins), and [Spool.Add] removes those older turns already. An
// entry is removed only once its pass has finished; a pass that failed
// leaves it, with the failure recorded, for the next worker.
//
// A spool is bounded: [MaxEntries] entries and [MaxBytes] bytes wait at
// most, and an entry that would go past them is dropped and counted
// ([Spool.Dropped], a record of one fixed-width line per drop); a file
// over [MaxEntryBytes] in an entry's place is never read, and is set
// aside. [Spool.NoticeOnce] records the last reason a hook gave for not
// queueing, so that it is said once, and [Spool.Tell] what hooks last
// told each of the last sessions (a warning about memory files), so that
// it is told again only when it changes, in bounded records.
//
// One worker at a time runs a folder's spool: it holds the folder's lock
// ([Spool.TryLock], an OS flock the system releases when the worker dies,
// even by kill -9 or a reboot), waits for new entries on the folder
// ([Spool.Watch]) and exits when the queue stays empty. A hook that finds
// the lock free starts one ([Spool.StartDetached]: a new session, standard
// streams detached, so it outlives the hook and the agent's process
// group). A worker leaving releases the lock and then looks at the queue
// once more, and a hook queues its entry before it looks at the lock, so
// an entry is never left without a worker to run it.
//
// Nothing in the spool is followed through a symbolic link or waited on:
// every file is opened with memcore/atomicfile.Open, which refuses links,
// FIFOs and devices.
//
// A repository's spool is a folder of the repository, so the repository
// can commit files into it. Each entry is therefore signed, an HMAC-SHA256
// under the user's capture key ([LoadKey]: kept in the spool folder of the
// user's memory folder, never in a repository), and [Spool.Read] refuses
// one whose signature does not match ([ErrForeignEntry]): no conversation
// the user never had is captured as the user's words, with the user's key.
package spool
