package checkpoint

import (
	"errors"
	"path"
	"path/filepath"
	"syscall"
	"unsafe"
)

// watcher is an inotify instance on every covered directory. It lets Begin
// look only at the paths that changed since the last scan instead of
// stat-ing the whole tree. Events are queued by the kernel as part of the
// write that causes them, so after a scan every later change is in the
// queue, except writes through a memory mapping (no event; End's full scan
// catches those of commands). A full queue (IN_Q_OVERFLOW), a failed watch
// or a moved workspace root makes the next Begin scan everything again.
//
// It is the checkpoints' own rather than the index's (rag's, over fsnotify):
// the index may be off (--no-index) and watches other directories (it skips
// vendor/, lock files, .agentdignore'd paths, which checkpoints cover).
type watcher struct {
	fd     int
	root   string
	wds    map[int32]string // watch → directory (workspace-relative, "" is the root)
	dirs   map[string]int32
	broken bool // events were lost: the next Begin scans everything
	buf    []byte
}

const watchMask = syscall.IN_MODIFY | syscall.IN_ATTRIB | syscall.IN_CLOSE_WRITE | syscall.IN_CREATE |
	syscall.IN_DELETE | syscall.IN_MOVED_FROM | syscall.IN_MOVED_TO | syscall.IN_DELETE_SELF |
	syscall.IN_MOVE_SELF | syscall.IN_DONT_FOLLOW | syscall.IN_ONLYDIR | syscall.IN_EXCL_UNLINK

func newWatcher(root string) *watcher {
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		return nil // too many instances: scans do the work
	}
	return &watcher{fd: fd, root: root, wds: map[int32]string{}, dirs: map[string]int32{}, buf: make([]byte, 64<<10)}
}

// watch adds a directory (idempotent: a directory that moved keeps its
// watch, which now names the new path).
func (x *watcher) watch(rel string) {
	if x == nil {
		return
	}
	if _, ok := x.dirs[rel]; ok {
		return
	}
	wd, err := syscall.InotifyAddWatch(x.fd, filepath.Join(x.root, filepath.FromSlash(rel)), watchMask)
	if err != nil {
		if !errors.Is(err, syscall.ENOENT) && !errors.Is(err, syscall.ENOTDIR) {
			x.broken = true // out of watches, or worse: scan every time
		}
		return
	}
	if old, ok := x.wds[int32(wd)]; ok && old != rel {
		delete(x.dirs, old)
	}
	x.wds[int32(wd)] = rel
	x.dirs[rel] = int32(wd)
}

// forgetUnder drops the watches' names under a directory that went away or
// moved (a moved one is watched again under its new name when scanned).
func (x *watcher) forgetUnder(rel string) {
	if x == nil {
		return
	}
	for d, wd := range x.dirs {
		if d == rel || rel == "" || len(d) > len(rel) && d[:len(rel)+1] == rel+"/" {
			delete(x.dirs, d)
			delete(x.wds, wd)
		}
	}
}

// drain reads every queued event and returns the paths they name, and the
// directories that appeared (to be scanned whole). ok is false when events
// were lost.
func (x *watcher) drain() (paths, newDirs []string, ok bool) {
	if x == nil {
		return nil, nil, false
	}
	seen := map[string]bool{}
	add := func(list *[]string, p string) {
		if !seen[p] {
			seen[p] = true
			*list = append(*list, p)
		}
	}
	for {
		n, err := syscall.Read(x.fd, x.buf)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || n <= 0 {
			break // EAGAIN: the queue is empty
		}
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			ev := (*syscall.InotifyEvent)(unsafe.Pointer(&x.buf[off]))
			nameBytes := x.buf[off+syscall.SizeofInotifyEvent : off+syscall.SizeofInotifyEvent+int(ev.Len)]
			off += syscall.SizeofInotifyEvent + int(ev.Len)
			name := cString(nameBytes)
			if ev.Mask&syscall.IN_Q_OVERFLOW != 0 {
				x.broken = true
				continue
			}
			dir, known := x.wds[ev.Wd]
			if !known {
				continue
			}
			if ev.Mask&syscall.IN_IGNORED != 0 {
				delete(x.wds, ev.Wd)
				if x.dirs[dir] == ev.Wd {
					delete(x.dirs, dir)
				}
				continue
			}
			if name == "" {
				if dir == "" && ev.Mask&(syscall.IN_DELETE_SELF|syscall.IN_MOVE_SELF) != 0 {
					x.broken = true // the workspace itself moved or went away
				}
				add(&paths, dir)
				continue
			}
			p := name
			if dir != "" {
				p = path.Join(dir, name)
			}
			if ev.Mask&syscall.IN_ISDIR != 0 && ev.Mask&(syscall.IN_CREATE|syscall.IN_MOVED_TO) != 0 {
				add(&newDirs, p)
				continue
			}
			if ev.Mask&syscall.IN_ISDIR != 0 && ev.Mask&syscall.IN_MOVED_FROM != 0 {
				x.forgetUnder(p)
			}
			add(&paths, p)
		}
	}
	ok = !x.broken
	x.broken = false
	return paths, newDirs, ok
}

func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// close releases the instance in the background: the kernel waits for a
// grace period when an inotify instance goes away (3–25 ms here), which a
// shutting-down daemon need not wait for.
func (x *watcher) close() {
	if x != nil {
		go syscall.Close(x.fd)
	}
}
