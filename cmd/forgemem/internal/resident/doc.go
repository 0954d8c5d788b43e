// Package resident is the recall server: a process that keeps a place's
// retrieval engine warm between the prompts of an agent, and answers
// Claude Code's prompt hook over a Unix socket, so that a hook — a new
// process on every prompt — need not read every memory file, build the
// indexes and load the embedding cache before it can search.
//
// A server belongs to one place and one configuration: its folder, named
// by a [Key] of the memory folders, the settings in force (however they
// were given), the API key in force and the binary, holds its socket, its
// lock and its log, inside a folder
// private to the user ([PrivateDir]: $XDG_RUNTIME_DIR/forgemem, or
// forgemem-<uid> in the temporary folder; mode 0700, owned by the user,
// never a link, never inside a repository). A change of settings, keys or
// binary is another key, so a hook never asks a server configured
// otherwise; the old server leaves when its idle timeout ends, and its
// folder stays until a server of another key, starting, removes the
// folders no server used for a while ([Prune]). Meanwhile a server's
// record of what it serves ([Place], [WritePlace]) lets a command of
// another key find it ([Others]) to report or stop it, and its folder
// tells whether it runs, or is starting, without asking it ([Look]).
//
// One server runs per key: it holds an OS lock ([Lock]) for its life, and
// listens only once its index is built. A hook that finds no server (no
// socket, or nobody listening) recalls in its own process, as before, and
// starts one ([StartDetached]) for the next prompt; two hooks doing so at
// once start two processes, of which one takes the lock and the other
// exits. The server answers a request whose key is its own; it checks that
// the process at the other end of the socket is the user's own
// (SO_PEERCRED), and leaves when no recall came for its idle time (being
// asked how it is does not count).
//
// The wire format ([Request], [Response]) is one frame each way: a 4-byte
// big-endian length, then that many bytes of JSON; a frame over
// [MaxFrame] is refused unread.
package resident
