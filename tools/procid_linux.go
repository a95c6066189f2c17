package tools

import (
	"os/exec"
	"syscall"
)

// dieWithDaemon has the kernel kill cmd's process when the daemon dies;
// what it started in its process group is reaped on the next start.
func dieWithDaemon(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
