package sandbox

// Identify names a running process the way ID does for one Command
// started, for a process started another way that must be reaped after a
// crash (Reap).
func Identify(pid int) (ProcID, error) {
	start, err := procStart(pid)
	return ProcID{Pid: pid, Start: start}, err
}
