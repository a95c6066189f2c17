//go:build !linux

package policy

import (
	"io/fs"
	"time"
)

// statChangeTime is the file's modification time where the status change
// time is not at hand.
func statChangeTime(fi fs.FileInfo) time.Time { return fi.ModTime() }
