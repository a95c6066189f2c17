//go:build !linux

package checkpoint

import "io/fs"

func sysStat(fi fs.FileInfo) (ctime int64, ino uint64) { return 0, 0 }
