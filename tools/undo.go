package tools

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// journal keeps, per session, the pre-image of every file each change
// touched: <StateDir>/undo/<session>/c<N>/{meta.json,<blob>}. It lives
// outside the user's .git so undo works in any directory and never touches
// the user's history.
type journal struct {
	dir string // empty: no state directory, undo disabled
}

type journalEntry struct {
	ID    string        `json:"id"`
	Tool  string        `json:"tool"`
	Time  time.Time     `json:"time"`
	Files []journalFile `json:"files"`
	n     int
}

type journalFile struct {
	Path    string      `json:"path"`
	Existed bool        `json:"existed"`
	Mode    fs.FileMode `json:"mode,omitempty"`
	Blob    string      `json:"blob,omitempty"`
}

// journalLocks serialises writers of one session's journal.
var journalLocks sync.Map // dir → *sync.Mutex

func journalFor(env *Env) *journal {
	if env.StateDir == "" {
		return &journal{}
	}
	sid := filepath.Base(filepath.Clean("/" + env.SessionID))
	if sid == "/" || sid == "." {
		sid = "default"
	}
	return &journal{dir: filepath.Join(env.StateDir, "undo", sid)}
}

func (j *journal) lock() func() {
	m, _ := journalLocks.LoadOrStore(j.dir, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// record stores the before images of chs and returns the checkpoint id.
func (j *journal) record(tool string, chs []fileChange) (string, error) {
	if j.dir == "" {
		return "", nil
	}
	defer j.lock()()
	entries, err := j.entries()
	if err != nil {
		return "", err
	}
	n := 1
	if len(entries) > 0 {
		n = entries[len(entries)-1].n + 1
	}
	e := journalEntry{ID: "c" + strconv.Itoa(n), Tool: tool, Time: time.Now().UTC()}
	tmp := filepath.Join(j.dir, e.ID+".tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return "", err
	}
	add := func(rel string, before *string, mode fs.FileMode) error {
		f := journalFile{Path: rel, Existed: before != nil, Mode: mode}
		if before != nil {
			f.Blob = strconv.Itoa(len(e.Files))
			if err := os.WriteFile(filepath.Join(tmp, f.Blob), []byte(*before), 0o600); err != nil {
				return err
			}
		}
		e.Files = append(e.Files, f)
		return nil
	}
	for _, c := range chs {
		var err error
		if c.moved() {
			err = add(c.OldRel, c.Before, c.Mode)
			if err == nil {
				err = add(c.Rel, nil, 0)
			}
		} else {
			err = add(c.Rel, c.Before, c.Mode)
		}
		if err != nil {
			_ = os.RemoveAll(tmp)
			return "", err
		}
	}
	meta, _ := json.Marshal(e)
	if err := os.WriteFile(filepath.Join(tmp, "meta.json"), meta, 0o600); err != nil {
		_ = os.RemoveAll(tmp)
		return "", err
	}
	if err := os.Rename(tmp, filepath.Join(j.dir, e.ID)); err != nil {
		_ = os.RemoveAll(tmp)
		return "", err
	}
	return e.ID, nil
}

func (j *journal) drop(id string) error {
	if j.dir == "" || id == "" {
		return nil
	}
	return os.RemoveAll(filepath.Join(j.dir, id))
}

// entries lists the recorded changes, oldest first.
func (j *journal) entries() ([]journalEntry, error) {
	des, err := os.ReadDir(j.dir)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	var out []journalEntry
	for _, de := range des {
		n, ok := checkpointNumber(de.Name())
		if !ok || !de.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(j.dir, de.Name(), "meta.json"))
		if err != nil {
			continue // a half-written entry: ignore it
		}
		var e journalEntry
		if err := json.Unmarshal(b, &e); err != nil {
			continue
		}
		e.n = n
		out = append(out, e)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].n < out[b].n })
	return out, nil
}

func checkpointNumber(name string) (int, bool) {
	if !strings.HasPrefix(name, "c") {
		return 0, false
	}
	n, err := strconv.Atoi(name[1:])
	return n, err == nil && n > 0
}

// preimage reads the stored content of f in entry e (nil: did not exist).
func (j *journal) preimage(e journalEntry, f journalFile) (*string, error) {
	if !f.Existed {
		return nil, nil
	}
	b, err := os.ReadFile(filepath.Join(j.dir, e.ID, f.Blob))
	if err != nil {
		return nil, fmt.Errorf("reading undo blob: %w", err)
	}
	s := string(b)
	return &s, nil
}
