//go:build !unix

package anchor

import "io/fs"

// inodeOf returns 0: this system has no inode numbers to compare.
func inodeOf(fs.FileInfo) uint64 { return 0 }
