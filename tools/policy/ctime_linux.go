package policy

import (
	"io/fs"
	"syscall"
	"time"
)

// statChangeTime is when a file's status last changed (ctime), which no
// unprivileged process can set back; its modification time otherwise.
func statChangeTime(fi fs.FileInfo) time.Time {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return time.Unix(st.Ctim.Sec, st.Ctim.Nsec)
	}
	return fi.ModTime()
}
