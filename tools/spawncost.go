package tools

import (
	"os"
	"slices"
	"sync"
)

// Work the daemon does for every process it starts is work on every
// command's path: what can be done once is done once.

// baseEnv memoizes ChildEnv of the daemon's environment without secrets:
// the allow-list's patterns and the credential stripping cost more than a
// millisecond a call, and the daemon's environment rarely changes (when it
// does, the memo is made again).
type baseEnv struct {
	mu    sync.Mutex
	from  []string // the os.Environ() it was made from
	allow []string
	env   []string
}

func (b *baseEnv) get(allow []string) []string {
	environ := os.Environ()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.env == nil || !slices.Equal(environ, b.from) || !slices.Equal(allow, b.allow) {
		b.from, b.allow, b.env = environ, slices.Clone(allow), ChildEnv(environ, nil, allow)
	}
	return slices.Clone(b.env)
}

// madeDirs remembers the directories of agentd's caches already made, so
// that a command does not pay for MkdirAll's walk each time.
type madeDirs struct{ m sync.Map }

func (d *madeDirs) make(dir string) error {
	if _, ok := d.m.Load(dir); ok {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	d.m.Store(dir, true)
	return nil
}
