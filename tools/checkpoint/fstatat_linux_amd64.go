package checkpoint

import (
	"syscall"
	"unsafe"
)

// fstatat is lstat relative to a directory: syscall exports it on arm64
// only, so it is called by number here.
func fstatat(dirfd int, name string, st *syscall.Stat_t) error {
	p, err := syscall.BytePtrFromString(name)
	if err != nil {
		return err
	}
	_, _, e := syscall.Syscall6(syscall.SYS_NEWFSTATAT, uintptr(dirfd), uintptr(unsafe.Pointer(p)),
		uintptr(unsafe.Pointer(st)), uintptr(_AT_SYMLINK_NOFOLLOW), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

const _AT_SYMLINK_NOFOLLOW = 0x100
