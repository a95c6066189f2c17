package sandbox

import (
	"syscall"
	"unsafe"
)

// Offsets in struct seccomp_data.
const (
	seccompNr   = 0
	seccompArch = 4
	seccompArg0 = 16 // low 32 bits on little-endian machines
	seccompArg1 = 24
	sysIoUring  = 425
	sysIoUrEnt  = 426
	sysIoUrReg  = 427
	x32Bit      = 0x40000000

	// Terminal requests that push input into a terminal, which whoever
	// reads the terminal (a shell, an editor) then takes as typed by the
	// user: TIOCSTI injects a character, TIOCLINUX's subcode 2 pastes the
	// console's selection.
	tiocsti   = 0x5412
	tiocLinux = 0x541c
)

// filter is the seccomp program every confined command runs under:
//
//   - system calls of a foreign ABI (32-bit or x32 on a 64-bit kernel,
//     whose numbers differ) are refused;
//   - io_uring, which can do what seccomp would refuse behind its back,
//     and is a large attack surface no build needs;
//   - ioctl TIOCSTI and TIOCLINUX (EPERM): a command that reaches a
//     terminal (its own, or one it opened) cannot type into it;
//   - when families is not nil (no network), socket(2) for every address
//     family but those listed (EACCES): what keeps UDP and raw sockets off
//     when the command has no network namespace of its own, and a second
//     lock when it has one.
//
// The ioctl request is an unsigned int: the kernel reads only the low 32
// bits, and so does the filter.
func filter(families []uint32) []syscall.SockFilter {
	deny := uint32(seccompRetErrno | uint32(syscall.EACCES))
	perm := uint32(seccompRetErrno | uint32(syscall.EPERM))
	var prog []syscall.SockFilter
	stmt := func(code uint16, k uint32) { prog = append(prog, syscall.SockFilter{Code: code, K: k}) }
	jump := func(code uint16, k uint32, jt, jf uint8) {
		prog = append(prog, syscall.SockFilter{Code: code, K: k, Jt: jt, Jf: jf})
	}
	ld := uint16(syscall.BPF_LD | syscall.BPF_W | syscall.BPF_ABS)
	jeq := uint16(syscall.BPF_JMP | syscall.BPF_JEQ | syscall.BPF_K)
	jge := uint16(syscall.BPF_JMP | syscall.BPF_JGE | syscall.BPF_K)
	ret := uint16(syscall.BPF_RET | syscall.BPF_K)

	stmt(ld, seccompArch)
	jump(jeq, auditArch, 1, 0)
	stmt(ret, deny)
	stmt(ld, seccompNr)
	jump(jge, x32Bit, 0, 1)
	stmt(ret, deny)
	for _, nr := range []uint32{sysIoUring, sysIoUrEnt, sysIoUrReg} {
		jump(jeq, nr, 0, 1)
		stmt(ret, deny)
	}
	// ioctl: the two requests refused, every other one allowed.
	jump(jeq, uint32(syscall.SYS_IOCTL), 0, 5)
	stmt(ld, seccompArg1)
	jump(jeq, tiocsti, 2, 0)
	jump(jeq, tiocLinux, 1, 0)
	stmt(ret, seccompRetAllow)
	stmt(ret, perm)
	if families == nil {
		stmt(ret, seccompRetAllow)
		return prog
	}
	jump(jeq, uint32(syscall.SYS_SOCKET), 1, 0)
	stmt(ret, seccompRetAllow)
	stmt(ld, seccompArg0)
	for _, f := range families {
		jump(jeq, f, 0, 1)
		stmt(ret, seccompRetAllow)
	}
	stmt(ret, deny)
	return prog
}

// installFilter loads prog on the calling thread; no_new_privs must be set.
func installFilter(prog []syscall.SockFilter) error {
	fprog := syscall.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	return prctl(syscall.PR_SET_SECCOMP, seccompModeFilter, uintptr(unsafe.Pointer(&fprog)), 0, 0)
}
