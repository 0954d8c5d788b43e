//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package memcore

// tryLock takes the lock of the .locks folder ld without waiting, on a
// system without flock: see tryLockExclusive.
func tryLock(ld string) (unlock func(), err error) { return tryLockExclusive(ld) }
