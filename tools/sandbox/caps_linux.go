package sandbox

import (
	"errors"
	"fmt"
	"syscall"
	"unsafe"
)

type capHeader struct {
	version uint32
	pid     int32
}

type capData struct {
	effective, permitted, inheritable uint32
}

func capget() ([2]capData, error) {
	hdr := capHeader{version: linuxCapabilityV3}
	var data [2]capData
	_, _, e := syscall.RawSyscall(syscall.SYS_CAPGET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0)
	if e != 0 {
		return data, e
	}
	return data, nil
}

// dropCapabilities empties the calling thread's bounding, ambient,
// inheritable, permitted and effective sets, so that neither the command nor
// anything it execs (setuid programs included) holds a capability: root in
// the sandbox cannot set the clock or the hostname, remount, load modules or
// read another process's memory. Run it last: mounts need CAP_SYS_ADMIN and
// dropping the bounding set needs CAP_SETPCAP.
func dropCapabilities() error {
	before, err := capget()
	if err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	held := before[0].permitted != 0 || before[1].permitted != 0
	for c := 0; c <= lastCapGuess; c++ {
		err := prctl(syscall.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		if errors.Is(err, syscall.EINVAL) {
			break // past the kernel's last capability
		}
		// Without CAP_SETPCAP (a user without capabilities and no user
		// namespace) the bounding set cannot shrink, but no_new_privs
		// already stops exec from granting anything.
		if err != nil && !(errors.Is(err, syscall.EPERM) && !held) {
			return fmt.Errorf("dropping capability %d from the bounding set: %w", c, err)
		}
	}
	if err := prctl(prCapAmbient, prCapAmbientClearAll, 0, 0, 0); err != nil && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("clearing ambient capabilities: %w", err)
	}
	hdr := capHeader{version: linuxCapabilityV3}
	var none [2]capData
	if _, _, e := syscall.RawSyscall(syscall.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&none[0])), 0); e != 0 {
		return fmt.Errorf("capset: %w", e)
	}
	return nil
}
