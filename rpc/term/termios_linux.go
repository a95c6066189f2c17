//go:build linux

package term

import (
	"syscall"
	"unsafe"
)

type termios = syscall.Termios

// tcflsh is TCFLSH on the common Linux architectures (amd64, arm64, 386,
// arm, riscv64); where it differs the flush fails and the keyboard's own
// discard still drops what was typed ahead.
const tcflsh = 0x540B

func getTermios(fd int) (*termios, error) {
	var t termios
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.TCGETS, uintptr(unsafe.Pointer(&t))); e != 0 {
		return nil, e
	}
	return &t, nil
}

func setTermios(fd int, t *termios) error {
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.TCSETS, uintptr(unsafe.Pointer(t))); e != 0 {
		return e
	}
	return nil
}

// flushInput discards what was typed but not yet read (tcflush TCIFLUSH).
func flushInput(fd int) error {
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), tcflsh, syscall.TCIFLUSH); e != 0 {
		return e
	}
	return nil
}

// quiet is t without echo and line editing, so keys are read one by one as
// they are typed and never shown by the terminal itself; signals (Ctrl-C)
// and output processing stay as they are.
func quiet(t *termios) *termios {
	q := *t
	q.Lflag &^= syscall.ECHO | syscall.ICANON | syscall.IEXTEN
	q.Cc[syscall.VMIN], q.Cc[syscall.VTIME] = 1, 0
	return &q
}
