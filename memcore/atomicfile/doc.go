// Package atomicfile writes files so that a reader never sees a partial
// one: the data goes to a temporary file in the destination folder, is
// fsynced and closed, and only then published under its final name, after
// which the folder is fsynced too. A writer killed at any moment leaves
// either nothing under the final name or the whole file (with [Replace],
// the whole old file or the whole new one); at worst a hidden temporary
// file is left behind.
//
// [WriteNew] creates a file that must not exist yet, and [Replace] creates
// or replaces one. When something must happen between the write and the
// publish — a lock taken, a check, a test stopping the writer — use the
// steps: [Prepare] writes and syncs the temporary file, then
// [Pending.Link] publishes it under a name that must not exist (the
// create-exclusive publish: fs.ErrExist if it does, and the file there is
// left as it was) or [Pending.Rename] publishes it over whatever is there.
// [Pending.Discard] removes a temporary file that was not published:
//
//	p, err := atomicfile.Prepare(dir, ".tmp-settings-*", data, 0o600)
//	if err != nil {
//		return err
//	}
//	defer p.Discard() // a no-op once published
//	mu.Lock()
//	defer mu.Unlock()
//	return p.Link(filepath.Join(dir, "settings.json"))
//
// The final name must be in the folder given to Prepare (hard links and
// renames do not cross file systems), and Link needs a file system with
// hard links, as every common local one has. Folder fsyncs are best
// effort: some systems cannot sync a folder, and the data itself is
// already synced by then.
//
// [Open] is the reading side, for folders a repository can commit: it
// opens a file only if it is a regular one, never through a symbolic link
// (an error wrapping [ErrSymlink]) and never waiting on a FIFO or a device
// (an error wrapping [ErrNotRegular]), even one put in the file's place
// after the folder was listed.
package atomicfile
