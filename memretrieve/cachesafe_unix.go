//go:build unix

package memretrieve

import "syscall"

// Flags of every open of a cache file: never through a symbolic link, and
// never waiting on a FIFO or a device.
const (
	oNoFollow = syscall.O_NOFOLLOW
	oNonBlock = syscall.O_NONBLOCK
)
