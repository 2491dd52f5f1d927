//go:build !unix && !windows

package main

import "syscall"

func detached() *syscall.SysProcAttr { return nil }
