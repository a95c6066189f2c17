//go:build unix

package checkpoint

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive lock shared with other processes (agentd undo
// beside a daemon); the in-process mutex is taken first.
func lockFile(f *os.File) {
	for syscall.Flock(int(f.Fd()), syscall.LOCK_EX) == syscall.EINTR {
	}
}

func unlockFile(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
