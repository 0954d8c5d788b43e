//go:build !unix && !windows

package spool

import "syscall"

func detachedAttr() *syscall.SysProcAttr { return nil }
