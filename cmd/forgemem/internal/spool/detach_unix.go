//go:build unix

package spool

import "syscall"

// detachedAttr starts the worker in a new session: no controlling
// terminal, and no signal sent to the agent's process group reaches it.
func detachedAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
