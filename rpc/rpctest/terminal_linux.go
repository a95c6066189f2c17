package rpctest

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"unsafe"
)

func openTerminal(t testing.TB) *Terminal {
	t.Helper()
	leader, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, leader.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatal(e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, leader.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatal(e)
	}
	follower, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	term := &Terminal{leader: leader, follower: follower}
	t.Cleanup(func() { leader.Close(); follower.Close() })
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := leader.Read(buf)
			term.mu.Lock()
			term.screen.Write(buf[:n])
			term.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return term
}

// Queued is the number of bytes waiting in the terminal's input, which
// whoever reads the terminal next would take as typed.
func (t *Terminal) Queued() int {
	var n int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, t.follower.Fd(), syscall.TIOCINQ, uintptr(unsafe.Pointer(&n))); e != 0 {
		return -1
	}
	return int(n)
}
