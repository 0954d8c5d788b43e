//go:build unix

package anchor

import (
	"io/fs"
	"syscall"
)

// inodeOf returns info's inode number, or 0, for telling a rewritten
// index from the same one.
func inodeOf(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
