//go:build !unix && !windows

package spool

import "syscall"

const noFollow = 0

func detachedAttr() *syscall.SysProcAttr { return nil }
