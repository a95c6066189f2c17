package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Each session's checkpoints are files of their own,
// <dir>/sessions/<session>/c<N>.json, written whole through a rename; a
// damaged one is skipped and loses nothing else. "expired" holds the number
// of the last checkpoint dropped to keep the session within its bounds.

// ErrUnknownCheckpoint: no such checkpoint in the session.
var ErrUnknownCheckpoint = errors.New("unknown checkpoint")

// ErrExpired: the checkpoint was dropped to keep the session's undo history
// within its bounds.
var ErrExpired = errors.New("checkpoint expired")

type sessionUsage struct {
	bytes int64
	count int
}

// sessionDir is the session's folder; a session id is never a path.
func (w *Workspace) sessionDir(session string) string {
	sid := filepath.Base(filepath.Clean("/" + session))
	if sid == "/" || sid == "." || sid == "" {
		sid = "default"
	}
	return filepath.Join(w.dir, "sessions", sid)
}

// Record stores a checkpoint of a session, numbering it (c1, c2, …), and
// expires the session's oldest checkpoints past its bounds. The contents
// its states name must already be in the store.
func (w *Workspace) Record(cp *Checkpoint) error {
	defer w.lock()()
	return w.recordLocked(cp)
}

func (w *Workspace) recordLocked(cp *Checkpoint) error {
	dir := w.sessionDir(cp.Session)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("checkpoints: %w", err)
	}
	nums, err := w.numbersLocked(cp.Session)
	if err != nil {
		return err
	}
	n := w.expiredLocked(cp.Session) + 1
	if len(nums) > 0 {
		n = max(n, nums[len(nums)-1]+1)
	}
	u, err := w.usageLocked(cp.Session)
	if err != nil {
		return err
	}
	cp.n, cp.ID = n, "c"+strconv.Itoa(n)
	if cp.Time.IsZero() {
		cp.Time = time.Now().UTC()
	}
	cp.Bytes = w.bytesOf(cp)
	if err := w.writeLocked(cp); err != nil {
		return err
	}
	u.bytes += cp.Bytes
	u.count++
	w.expireLocked(cp.Session, append(nums, n), u)
	return nil
}

// numbersLocked lists the numbers of a session's checkpoint files, in
// order, without reading them.
func (w *Workspace) numbersLocked(session string) ([]int, error) {
	des, err := os.ReadDir(w.sessionDir(session))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoints: %w", err)
	}
	var out []int
	for _, de := range des {
		name, ok := strings.CutSuffix(de.Name(), ".json")
		if n, isCp := checkpointNumber(name); ok && isCp {
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out, nil
}

// bytesOf is what the distinct contents a checkpoint names take on disk.
func (w *Workspace) bytesOf(cp *Checkpoint) int64 {
	seen := map[Hash]bool{}
	var n int64
	for _, c := range cp.Changes {
		for _, s := range []*State{c.Before, c.After} {
			if s != nil && !s.Hash.IsZero() && !seen[s.Hash] {
				seen[s.Hash] = true
				n += w.store.Size(s.Hash)
			}
		}
	}
	return n
}

func (w *Workspace) writeLocked(cp *Checkpoint) error {
	data, err := json.MarshalIndent(cp, "", " ")
	if err != nil {
		return fmt.Errorf("checkpoints: %w", err)
	}
	return writeFileAtomic(filepath.Join(w.sessionDir(cp.Session), cp.ID+".json"), data)
}

// usageLocked is what the session's checkpoints take, read once per
// process and kept up to date by Record, Drop and expiry.
func (w *Workspace) usageLocked(session string) (*sessionUsage, error) {
	if u, ok := w.usage[session]; ok {
		return u, nil
	}
	list, err := w.listLocked(session)
	if err != nil {
		return nil, err
	}
	u := &sessionUsage{count: len(list)}
	for _, cp := range list {
		u.bytes += cp.Bytes
	}
	w.usage[session] = u
	return u, nil
}

// expireLocked drops the oldest checkpoints while the session is over its
// bounds; the newest is always kept.
func (w *Workspace) expireLocked(session string, nums []int, u *sessionUsage) {
	for len(nums) > 1 && (u.bytes > w.lim.SessionBytes || u.count > w.lim.SessionCount) {
		n := nums[0]
		nums = nums[1:]
		file := filepath.Join(w.sessionDir(session), "c"+strconv.Itoa(n)+".json")
		var bytes int64
		if b, err := os.ReadFile(file); err == nil {
			var cp Checkpoint
			if json.Unmarshal(b, &cp) == nil {
				bytes = cp.Bytes
			}
		}
		if err := os.Remove(file); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return
		}
		_ = writeFileAtomic(filepath.Join(w.sessionDir(session), "expired"), []byte(strconv.Itoa(n)))
		u.bytes -= bytes
		u.count--
		w.garbage += bytes
	}
}

// expiredLocked is the number of the last expired checkpoint, 0 if none.
func (w *Workspace) expiredLocked(session string) int {
	b, err := os.ReadFile(filepath.Join(w.sessionDir(session), "expired"))
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// List returns a session's checkpoints, oldest first.
func (w *Workspace) List(session string) ([]*Checkpoint, error) {
	defer w.lock()()
	return w.listLocked(session)
}

func (w *Workspace) listLocked(session string) ([]*Checkpoint, error) {
	des, err := os.ReadDir(w.sessionDir(session))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoints: %w", err)
	}
	var out []*Checkpoint
	for _, de := range des {
		n, ok := checkpointNumber(strings.TrimSuffix(de.Name(), ".json"))
		if !ok || !strings.HasSuffix(de.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(w.sessionDir(session), de.Name()))
		if err != nil {
			continue
		}
		cp := &Checkpoint{}
		if json.Unmarshal(b, cp) != nil || cp.ID != "c"+strconv.Itoa(n) {
			continue // damaged: the others stand
		}
		cp.n = n
		out = append(out, cp)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].n < out[j].n })
	return out, nil
}

// checkpointNumber reads "c12" as 12.
func checkpointNumber(id string) (int, bool) {
	if !strings.HasPrefix(id, "c") {
		return 0, false
	}
	n, err := strconv.Atoi(id[1:])
	return n, err == nil && n > 0
}

// ParseID checks a checkpoint id such as c3.
func ParseID(id string) (int, error) {
	n, ok := checkpointNumber(id)
	if !ok {
		return 0, fmt.Errorf("%q is not a checkpoint id such as c3", id)
	}
	return n, nil
}

// Drop removes a checkpoint whose change was not made after all (a write
// that failed and was rolled back).
func (w *Workspace) Drop(session, id string) error {
	defer w.lock()()
	list, err := w.listLocked(session)
	if err != nil {
		return err
	}
	for _, cp := range list {
		if cp.ID == id {
			if u, ok := w.usage[session]; ok {
				u.bytes -= cp.Bytes
				u.count--
			}
			return os.Remove(filepath.Join(w.sessionDir(session), id+".json"))
		}
	}
	return nil
}

// DropSession removes every checkpoint of a session (the session was
// deleted); the contents only it referenced go at the next collection.
func (w *Workspace) DropSession(session string) error {
	defer w.lock()()
	return w.dropSessionLocked(session)
}

func (w *Workspace) dropSessionLocked(session string) error {
	delete(w.usage, session)
	w.garbage += 1 << 30 // collect soon
	return os.RemoveAll(w.sessionDir(session))
}

// Sessions lists the sessions that have checkpoints.
func (w *Workspace) Sessions() ([]string, error) {
	des, err := os.ReadDir(filepath.Join(w.dir, "sessions"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, de := range des {
		if de.IsDir() {
			out = append(out, de.Name())
		}
	}
	return out, nil
}

// boundSessions keeps every session's checkpoints together within the
// limits (TotalBytes, Sessions): newest first by when a session's
// checkpoints last changed (its folder's time), each is kept while both
// bounds hold, and it and every older one are dropped once one does not.
// The newest is always kept: its own bounds hold it (SessionBytes).
func (w *Workspace) boundSessions() error {
	defer w.lock()()
	ids, err := w.Sessions()
	if err != nil {
		return err
	}
	type session struct {
		id      string
		changed time.Time
	}
	list := make([]session, 0, len(ids))
	for _, id := range ids {
		if fi, err := os.Stat(w.sessionDir(id)); err == nil {
			list = append(list, session{id, fi.ModTime()})
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].changed.After(list[j].changed) })
	var total int64
	over := false
	for i, s := range list {
		if !over && i > 0 && i >= w.lim.Sessions {
			over = true
		}
		if !over {
			u, err := w.usageLocked(s.id)
			if err != nil {
				continue // unreadable: neither counted nor dropped
			}
			if i > 0 && total+u.bytes > w.lim.TotalBytes {
				over = true
			} else {
				total += u.bytes
				continue
			}
		}
		if err := w.dropSessionLocked(s.id); err != nil {
			return err
		}
	}
	return nil
}
