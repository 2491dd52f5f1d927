//go:build windows && !lite

package main

import "syscall"

// detached starts a child without a console and in its own process group,
// so closing the console or Ctrl-C there does not stop it.
func detached() *syscall.SysProcAttr {
	const detachedProcess, newProcessGroup = 0x00000008, 0x00000200
	return &syscall.SysProcAttr{CreationFlags: detachedProcess | newProcessGroup, HideWindow: true}
}
