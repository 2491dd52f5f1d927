//go:build !unix && !windows && !lite

package main

import "syscall"

func detached() *syscall.SysProcAttr { return nil }
