//go:build unix

package rag

import (
	"syscall"
	"time"
)

// cpuTime is the process's user + system time so far: on a machine shared
// with other jobs it measures the work where wall time measures the queue.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
