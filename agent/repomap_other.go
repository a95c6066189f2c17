//go:build !linux

package agent

import "syscall"

// childProcAttr puts ctags in its own process group; only Linux can make it
// die with the daemon.
func childProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
