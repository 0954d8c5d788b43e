//go:build windows

package spool

import "syscall"

// detachedAttr starts the worker without a console, in a process group of
// its own.
func detachedAttr() *syscall.SysProcAttr {
	const createNewProcessGroup, detachedProcess = 0x00000200, 0x00000008
	return &syscall.SysProcAttr{CreationFlags: createNewProcessGroup | detachedProcess}
}
