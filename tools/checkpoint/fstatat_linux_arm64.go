package checkpoint

import "syscall"

// fstatat is lstat relative to a directory.
func fstatat(dirfd int, name string, st *syscall.Stat_t) error {
	return syscall.Fstatat(dirfd, name, st, _AT_SYMLINK_NOFOLLOW)
}

const _AT_SYMLINK_NOFOLLOW = 0x100
