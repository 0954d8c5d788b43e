//go:build !unix

package atomicfile

// This system has no O_NOFOLLOW or O_NONBLOCK: an Lstat before the open
// and the check of the opened file's mode do the work.
const (
	oNoFollow = 0
	oNonBlock = 0
)
