// Package live keeps a long-lived process's view of the memory folders
// exact without reading them on every request: the memories are parsed
// once, and then only the files the system's file events name are read
// again.
//
// [Folders] is a memcore.MemoryStore over a memcore.FileStore whose List is
// served from memory. It watches both scope folders with inotify (through
// fsnotify); every event on a memory file marks that file dirty, and
// [Folders.Sync] reads the dirty files again with FileStore.ReadIn, so
// List then serves exactly what a new FileStore's List would — the same
// memories, parsed from the same bytes, in the same order.
//
// Sync is exact after any write that finished before it was called, by
// any process — forgemem remember in a terminal, the capture worker,
// another agent's MCP server, a person's editor, git — thanks to a
// barrier: Sync creates a file in a private, watched folder of its own
// and waits for that file's event. One inotify instance queues the events
// of all its watches in the order they happened, so once the barrier's
// event is read, every event of a write that finished earlier has been
// read too. No file's modification time is trusted, so two writes within
// one tick of the file system's clock, or a rewrite at the same size, are
// both seen.
//
// When the system dropped events (its queue overflowed), the next Sync
// reads both folders again in full, through a new FileStore. When a
// watched folder goes away (deleted, renamed, unmounted), Sync fails with
// [ErrLost] from then on: the caller goes back to reading the folders.
// Only Linux has inotify's ordering; elsewhere [Open] fails with
// [ErrUnsupported].
package live
