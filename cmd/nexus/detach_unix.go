//go:build unix && !lite

package main

import "syscall"

// detached makes a child its own session: no controlling terminal, so
// closing the terminal (SIGHUP) or Ctrl-C there does not stop it.
func detached() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
