//go:build !linux

package checkpoint

// watcher is Linux's inotify; elsewhere every Begin scans the whole tree.
type watcher struct{}

func newWatcher(root string) *watcher                        { return nil }
func (x *watcher) watch(rel string)                          {}
func (x *watcher) forgetUnder(rel string)                    {}
func (x *watcher) drain() (paths, newDirs []string, ok bool) { return nil, nil, false }
func (x *watcher) close()                                    {}
