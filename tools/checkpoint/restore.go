package checkpoint

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// Restored is what a restore did.
type Restored struct {
	Plan *Plan
	// Checkpoint is the restore's own checkpoint (undo it to redo); nil
	// when it stopped.
	Checkpoint *Checkpoint
	// Stopped: conflicts or missing contents under Stop; nothing written.
	Stopped bool
	// Notes say what was left in place (a directory that still holds
	// files the checkpoints do not cover).
	Notes []string
}

// ErrChanged: the files changed between the preview the user saw and the
// restore.
var ErrChanged = errors.New("the files changed since the restore was previewed")

// Restore puts the selected paths back as they were before the selected
// checkpoints, under the workspace lock: it plans again, and when expect is
// given refuses if the plan differs from it (the user approved that one).
// The restore is journaled first as a checkpoint of its own (tool and title
// from meta), then written; a failure half-way puts back what was written.
func (w *Workspace) Restore(sel Select, on OnConflict, meta Checkpoint, expect *Plan) (*Restored, error) {
	defer w.lock()()
	p, err := w.planLocked(sel)
	if err != nil {
		return nil, err
	}
	if expect != nil && !samePlan(p, expect) {
		return &Restored{Plan: p, Stopped: true}, ErrChanged
	}
	res := &Restored{Plan: p}
	var write []Step
	for _, s := range p.Steps {
		switch {
		case s.Action == ActionRestore:
			write = append(write, s)
		case s.Action == ActionConflict && on == Overwrite && s.Overwritable():
			write = append(write, s)
		case (s.Action == ActionConflict || s.Action == ActionMissing) && on != Skip && on != Overwrite:
			res.Stopped = true
		}
	}
	if res.Stopped {
		return res, nil
	}
	cp := meta
	cp.Session, cp.Undoes, cp.ID, cp.UndoneBy, cp.Changes = sel.Session, p.Undoes, "", "", nil
	for _, s := range write {
		cp.Changes = append(cp.Changes, Change{Path: s.Path, Before: s.Current, After: s.Target})
	}
	for _, s := range p.Steps {
		if s.Action == ActionConflict || s.Action == ActionMissing {
			if !containsPath(write, s.Path) {
				cp.Notes = append(cp.Notes, fmt.Sprintf("%s left as it is: %s", s.Path, s.Reason))
			}
		}
	}
	if err := w.recordLocked(&cp); err != nil {
		return nil, err
	}
	notes, err := w.applyLocked(write, sel.Files)
	if err != nil {
		_ = os.Remove(filepath.Join(w.sessionDir(cp.Session), cp.ID+".json"))
		return nil, err
	}
	res.Notes = notes
	res.Checkpoint = &cp
	if !p.Partial && len(cp.Notes) == 0 {
		w.markUndoneLocked(sel.Session, p.Undoes, cp.ID)
	}
	return res, nil
}

// Overwritable says whether a conflict may be overwritten: what the path
// holds now can be kept first (absent, a directory, or a content the store
// has), so the overwrite can be undone.
func (s Step) Overwritable() bool {
	if s.unsafe {
		return false
	}
	c := s.Current
	return c == nil || c.Kind == KindDir || !c.Hash.IsZero()
}

func containsPath(steps []Step, p string) bool {
	for _, s := range steps {
		if s.Path == p {
			return true
		}
	}
	return false
}

func samePlan(a, b *Plan) bool {
	if len(a.Steps) != len(b.Steps) || strings.Join(a.Undoes, ",") != strings.Join(b.Undoes, ",") {
		return false
	}
	for i := range a.Steps {
		x, y := a.Steps[i], b.Steps[i]
		if x.Path != y.Path || x.Action != y.Action || !Same(x.Current, y.Current) && (x.Current != nil || y.Current != nil) {
			return false
		}
	}
	return true
}

func (w *Workspace) markUndoneLocked(session string, ids []string, by string) {
	list, err := w.listLocked(session)
	if err != nil {
		return
	}
	for _, cp := range list {
		for _, id := range ids {
			if cp.ID == id && cp.UndoneBy == "" {
				cp.UndoneBy = by
				_ = w.writeLocked(cp)
			}
		}
	}
}

// applyLocked writes the steps: deletions deepest first, then directories
// shallowest first, then files and links. A failure puts back what was
// written, from the restore's own before states.
func (w *Workspace) applyLocked(steps []Step, files Files) ([]string, error) {
	ordered := append([]Step(nil), steps...)
	rank := func(s Step) int {
		switch {
		case s.Target == nil:
			return 0
		case s.Target.Kind == KindDir:
			return 1
		}
		return 2
	}
	sort.SliceStable(ordered, func(i, j int) bool {
		a, b := ordered[i], ordered[j]
		if rank(a) != rank(b) {
			return rank(a) < rank(b)
		}
		if rank(a) == 0 {
			return depth(a.Path) > depth(b.Path)
		}
		return depth(a.Path) < depth(b.Path)
	})
	var notes []string
	for i, s := range ordered {
		err := w.put(s.Path, s.Target, files)
		if errors.Is(err, errNotEmpty) {
			notes = append(notes, fmt.Sprintf("%s/ was left in place: it holds files the checkpoints do not cover", s.Path))
			continue
		}
		if err != nil {
			for j := i - 1; j >= 0; j-- {
				_ = w.put(ordered[j].Path, ordered[j].Current, files)
			}
			return nil, fmt.Errorf("restoring %s: %w (what was already restored was put back)", s.Path, err)
		}
	}
	return notes, nil
}

func depth(p string) int { return strings.Count(p, "/") }

var errNotEmpty = errors.New("directory not empty")

// put makes a path hold a state (nil: absent), never following a link out
// of the workspace.
func (w *Workspace) put(rel string, s *State, files Files) error {
	if _, err := w.unsafeLocked(rel, nil); err != nil {
		return err
	}
	local := filepath.FromSlash(rel)
	fi, err := w.fsys.Lstat(local)
	exists := err == nil
	isDir := exists && fi.IsDir()
	removeCur := func() error {
		if !exists {
			return nil
		}
		if err := w.fsys.Remove(local); err != nil {
			if isDir && (errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST)) {
				return errNotEmpty
			}
			if !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		return nil
	}
	if s == nil {
		return removeCur()
	}
	if s.Kind == KindDir {
		if isDir {
			return w.fsys.Chmod(local, s.Mode)
		}
		if err := removeCur(); err != nil {
			return err
		}
		if err := w.mkdirParent(rel); err != nil {
			return err
		}
		if err := w.fsys.Mkdir(local, s.Mode|0o700); err != nil {
			return err
		}
		return w.fsys.Chmod(local, s.Mode)
	}
	data, err := w.Content(s)
	if err != nil {
		return err
	}
	if isDir || (exists && s.Kind == KindSymlink) || (exists && fi.Mode()&fs.ModeSymlink != 0) {
		if err := removeCur(); err != nil {
			return err
		}
	}
	if err := w.mkdirParent(rel); err != nil {
		return err
	}
	if s.Kind == KindSymlink {
		return w.fsys.Symlink(string(data), local)
	}
	if files != nil {
		return files.WriteFile(rel, data, s.Mode)
	}
	return w.writeFile(local, data, s.Mode)
}

func (w *Workspace) mkdirParent(rel string) error {
	if d := path.Dir(rel); d != "." {
		return w.fsys.MkdirAll(filepath.FromSlash(d), 0o755)
	}
	return nil
}

// writeFile writes through a temporary file in the same directory and a
// rename, so no one sees half a file.
func (w *Workspace) writeFile(local string, data []byte, mode fs.FileMode) error {
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(filepath.Dir(local), ".agentd-restore-"+hex.EncodeToString(rnd[:]))
	if mode == 0 {
		mode = 0o644
	}
	f, err := w.fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = w.fsys.Chmod(tmp, mode)
	}
	if werr == nil {
		werr = w.fsys.Rename(tmp, local)
	}
	if werr != nil {
		_ = w.fsys.Remove(tmp)
	}
	return werr
}
