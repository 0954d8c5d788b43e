//go:build unix

package atomicfile

import (
	"os"
	"syscall"
)

// Flags of every Open: never through a symbolic link, and never waiting on
// a FIFO or a device.
const (
	oNoFollow = syscall.O_NOFOLLOW
	oNonBlock = syscall.O_NONBLOCK
)

// clearNonBlock puts a regular file opened with O_NONBLOCK back in blocking
// mode (it makes no difference to regular files on the common systems, but
// the file is handed to code that does not expect it).
func clearNonBlock(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.SetNonblock(int(fd), false) }); err != nil {
		return err
	}
	return serr
}
