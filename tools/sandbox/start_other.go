//go:build !linux

package sandbox

import (
	"fmt"
	"runtime"
	"syscall"
	"time"
)

func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// Check reports that this operating system has no kernel sandbox here.
func Check() Status {
	return Status{OS: runtime.GOOS, Problems: []string{"no kernel sandbox on " + runtime.GOOS + ": only Linux has one"}}
}

func (c *Cmd) startConfined() error {
	return fmt.Errorf("%w for %s commands on %s", ErrUnavailable, c.spec.Profile, runtime.GOOS)
}

func waitExited(int) {}

func procStart(pid int) (uint64, error) {
	return 0, fmt.Errorf("no start time for %d on %s", pid, runtime.GOOS)
}

// plan is the entry point's plan; there is no entry point here.
type plan struct{}

// streams are the confined command's streams; there are none here.
type streams struct{}

func (*streams) wait(time.Duration) error { return nil }

// Refused finds nothing where nothing is confined.
func (c *Cmd) Refused(string) []Refusal { return nil }

// entryProc is an entry point; there is none here.
type entryProc struct{}

func (*entryProc) released() {}

func removeAppeared([]string) []string { return nil }
