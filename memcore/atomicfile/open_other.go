//go:build !unix

package atomicfile

import "os"

// This system has no O_NOFOLLOW or O_NONBLOCK: the Lstat before the open and
// the check of the opened file's mode do the work.
const (
	oNoFollow = 0
	oNonBlock = 0
)

func clearNonBlock(*os.File) error { return nil }
