package tools

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentd/agentd/tools/sandbox"
)

// Finding out what the machine offers (sandbox.Check) starts a process
// through the entry point, which costs tens of milliseconds: too much to
// put between a daemon's start and its answer to initialize. The answer is
// kept in the user's cache, keyed by what it depends on (the kernel, the
// binary, the user); a daemon starts with it and checks again in the
// background, which also starts the entry point the first command will
// use. A stale answer fails closed: a profile it wrongly claims makes the
// command fail to start ("not run"), never run unconfined; one it wrongly
// denies makes commands ask until the check is done.

// recheckAfter delays the check of a kept answer past the daemon's start.
const recheckAfter = 300 * time.Millisecond

// statusFile keeps the answer outside what confined commands can write,
// one file per key: agentd binaries of several builds on one machine (an
// installed one, a test's, an editor extension's) each keep their own
// answer instead of each start replacing the last one's and probing again.
func (s *Sandbox) statusFile(key string) string {
	dir := s.cacheDir()
	if dir == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(key))
	return dir + "-status-" + hex.EncodeToString(sum[:6]) + ".json"
}

// keptStatuses bounds the answers kept, one per binary: the oldest go.
const keptStatuses = 16

type cachedStatus struct {
	Key    string         `json:"key"`
	Status sandbox.Status `json:"status"`
}

// statusKey names what the answer depends on.
func statusKey() string {
	rel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	exe, _ := os.Executable()
	var size, mtime int64
	if fi, err := os.Stat(exe); err == nil {
		size, mtime = fi.Size(), fi.ModTime().UnixNano()
	}
	return fmt.Sprintf("%s|%s|%d|%d|%d", strings.TrimSpace(string(rel)), exe, size, mtime, os.Geteuid())
}

// check is the machine's answer: the kept one, checked again in the
// background, or a fresh one.
func (s *Sandbox) check() sandbox.Status {
	key := statusKey()
	file := s.statusFile(key)
	if file != "" {
		var c cachedStatus
		if b, err := os.ReadFile(file); err == nil && json.Unmarshal(b, &c) == nil && c.Key == key {
			// Not in the way of the answer to initialize: a little later.
			time.AfterFunc(recheckAfter, func() { s.recheck(file, key) })
			return c.Status
		}
	}
	st := sandbox.Check()
	s.keep(file, key, st)
	return st
}

// recheck replaces the kept answer with the machine's.
func (s *Sandbox) recheck(file, key string) {
	st := sandbox.Check()
	s.smu.Lock()
	s.status = st
	if s.cfg.LandlockOnly {
		s.status = st.WithoutNamespaces()
	}
	s.smu.Unlock()
	s.keep(file, key, st)
}

func (s *Sandbox) keep(file, key string, st sandbox.Status) {
	if file == "" {
		return
	}
	b, err := json.Marshal(cachedStatus{Key: key, Status: st})
	if err == nil {
		err = os.MkdirAll(filepath.Dir(file), 0o700)
	}
	if err == nil {
		err = writeAtomic(file, b, 0o600)
	}
	if err != nil {
		s.cfg.Logger.Debug("sandbox: keeping the status", "file", file, "err", err)
		return
	}
	pruneStatuses(file)
}

// pruneStatuses removes the oldest kept answers beyond keptStatuses (test
// binaries, each build of which has a key of its own).
func pruneStatuses(file string) {
	kept, _ := filepath.Glob(strings.TrimSuffix(file, filepath.Base(file)) + strings.SplitAfter(filepath.Base(file), "-status-")[0] + "*.json")
	if len(kept) <= keptStatuses {
		return
	}
	type aged struct {
		path string
		at   time.Time
	}
	var all []aged
	for _, p := range kept {
		if fi, err := os.Stat(p); err == nil {
			all = append(all, aged{p, fi.ModTime()})
		}
	}
	slices.SortFunc(all, func(a, b aged) int { return b.at.Compare(a.at) })
	for _, a := range all[min(keptStatuses, len(all)):] {
		_ = os.Remove(a.path)
	}
}
