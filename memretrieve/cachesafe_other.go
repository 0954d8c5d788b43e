//go:build !unix

package memretrieve

// This system has no O_NOFOLLOW or O_NONBLOCK: the Lstat before each open
// and the check of the opened file's mode do the work.
const (
	oNoFollow = 0
	oNonBlock = 0
)
