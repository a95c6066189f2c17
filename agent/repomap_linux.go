package agent

import "syscall"

// childProcAttr makes ctags die with the daemon, even one killed with -9.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
