//go:build unix

package atomicfile

import "syscall"

// Flags of every Open: never through a symbolic link, and never waiting on
// a FIFO or a device.
const (
	oNoFollow = syscall.O_NOFOLLOW
	oNonBlock = syscall.O_NONBLOCK
)
