package sandbox

// We do not use Go-Landlock (github.com/landlock-lsm/go-landlock) because it
// always enforces on every thread of the process, through libpsx when cgo is
// on (which wraps pthread_create at link time for the whole agentd binary),
// and Landlock ABI 7 has no TSYNC flag. The entry point instead restricts the
// one locked OS thread that then forks and execs the command, the pattern
// the Landlock maintainers document for confining another program
// (docs/raw_syscalls_in_go.md, "Applying a Landlock policy to another
// program"). Three system calls and a few constants are all it takes.

import (
	"fmt"
	"syscall"
	"unsafe"
)

// Filesystem access rights (include/uapi/linux/landlock.h).
const (
	llExecute    = 1 << 0
	llWriteFile  = 1 << 1
	llReadFile   = 1 << 2
	llReadDir    = 1 << 3
	llRemoveDir  = 1 << 4
	llRemoveFile = 1 << 5
	llMakeChar   = 1 << 6
	llMakeDir    = 1 << 7
	llMakeReg    = 1 << 8
	llMakeSock   = 1 << 9
	llMakeFifo   = 1 << 10
	llMakeBlock  = 1 << 11
	llMakeSym    = 1 << 12
	llRefer      = 1 << 13 // ABI 2
	llTruncate   = 1 << 14 // ABI 3
	llIoctlDev   = 1 << 15 // ABI 5

	llNetBindTCP    = 1 << 0 // ABI 4
	llNetConnectTCP = 1 << 1

	llScopeAbstractUnix = 1 << 0 // ABI 6
	llScopeSignal       = 1 << 1

	// Rights that make sense on a file (not a directory) rule.
	llFileRights = llExecute | llWriteFile | llReadFile | llTruncate | llIoctlDev

	accRead  = llReadFile | llReadDir | llExecute
	accDev   = llReadFile | llWriteFile | llTruncate | llIoctlDev
	accWrite = 1<<16 - 1
)

// fsRights is every filesystem right the given ABI knows.
func fsRights(abi int) uint64 {
	r := uint64(1<<13 - 1)
	if abi >= 2 {
		r |= llRefer
	}
	if abi >= 3 {
		r |= llTruncate
	}
	if abi >= 5 {
		r |= llIoctlDev
	}
	return r
}

// landlockABI is the kernel's Landlock ABI version, 0 when Landlock is
// missing or disabled.
func landlockABI() int {
	v, _, e := syscall.Syscall(sysLandlockCreateRuleset, 0, 0, landlockCreateVersion)
	if e != 0 {
		return 0
	}
	return int(v)
}

type rulesetAttr struct {
	handledFS, handledNet, scoped uint64
}

// pathBeneathAttr is the packed struct landlock_path_beneath_attr; Go pads
// it to 16 bytes, and the kernel reads the first 12.
type pathBeneathAttr struct {
	allowed  uint64
	parentFd int32
	_        int32
}

// ruleset builds a Landlock domain for the given ABI.
type ruleset struct {
	fd  int
	abi int
	fs  uint64
}

// newRuleset handles every filesystem right of abi, TCP bind and connect
// when noNet (ABI 4+), and scopes abstract Unix sockets and signals to the
// domain (ABI 6+).
func newRuleset(abi int, noNet bool) (*ruleset, error) {
	attr := rulesetAttr{handledFS: fsRights(abi)}
	size := unsafe.Sizeof(uint64(0)) // ABI 1-3 know only handled_access_fs
	if abi >= 4 {
		size += unsafe.Sizeof(uint64(0))
		if noNet {
			attr.handledNet = llNetBindTCP | llNetConnectTCP
		}
	}
	if abi >= 6 {
		size += unsafe.Sizeof(uint64(0))
		attr.scoped = llScopeAbstractUnix | llScopeSignal
	}
	fd, _, e := syscall.Syscall(sysLandlockCreateRuleset, uintptr(unsafe.Pointer(&attr)), size, 0)
	if e != 0 {
		return nil, fmt.Errorf("landlock_create_ruleset: %w", e)
	}
	return &ruleset{fd: int(fd), abi: abi, fs: attr.handledFS}, nil
}

// allow grants access beneath the open path fd (a file or a directory).
func (r *ruleset) allow(fd int, isDir bool, access uint64) error {
	access &= r.fs
	if !isDir {
		access &= llFileRights
	}
	if access == 0 {
		return nil
	}
	attr := pathBeneathAttr{allowed: access, parentFd: int32(fd)}
	_, _, e := syscall.Syscall6(sysLandlockAddRule, uintptr(r.fd), landlockRulePath,
		uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
	if e != 0 {
		return fmt.Errorf("landlock_add_rule: %w", e)
	}
	return nil
}

// restrictThread enforces the ruleset on the calling OS thread, which the
// caller has locked and from which the command will be forked. no_new_privs
// must already be set on this thread.
func (r *ruleset) restrictThread() error {
	_, _, e := syscall.RawSyscall(sysLandlockRestrictSelf, uintptr(r.fd), 0, 0)
	if e != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", e)
	}
	return nil
}

func (r *ruleset) close() { syscall.Close(r.fd) }
