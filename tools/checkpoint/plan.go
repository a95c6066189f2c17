package checkpoint

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
)

// Actions of a restore step.
const (
	// ActionRestore puts the path back as it was.
	ActionRestore Action = "restore"
	// ActionNone: the path is already as it was.
	ActionNone Action = "none"
	// ActionConflict: the path changed after the checkpoints (the user, or
	// another session); it is left alone unless the caller overwrites.
	ActionConflict Action = "conflict"
	// ActionMissing: the content to put back is not kept (over the size
	// cap, unreadable when captured, or damaged in the store); the path is
	// never guessed at.
	ActionMissing Action = "missing"
)

// What to do with conflicts.
const (
	// Stop: write nothing, report them (the default).
	Stop OnConflict = "stop"
	// Skip: restore the rest, leave them as they are.
	Skip OnConflict = "skip"
	// Overwrite: restore them too; their current content goes into the
	// restore's own checkpoint, so undoing the restore brings it back.
	// Missing contents are still never guessed.
	Overwrite OnConflict = "overwrite"
)

// Action is what a restore does to one path.
type Action string

// Step is one path of a restore.
type Step struct {
	Path     string
	Action   Action
	Current  *State // on disk now
	Expected *State // what the last undone checkpoint left
	Target   *State // what the restore puts back
	Reason   string // for a conflict or a missing content
	// unsafe: the path cannot be written as it was recorded (beneath a
	// link, or in a git directory or .agentd/); never overwritten.
	unsafe bool
}

// Plan is a restore worked out before anything is written: which
// checkpoints it undoes and, per path, what it would do.
type Plan struct {
	Session string
	// Undoes lists the selected checkpoints, oldest first.
	Undoes []string
	Steps  []Step
	// Partial: only some paths were asked for.
	Partial bool
}

// Count returns how many steps have the action.
func (p *Plan) Count(a Action) int {
	n := 0
	for _, s := range p.Steps {
		if s.Action == a {
			n++
		}
	}
	return n
}

// OnConflict says what a restore does with conflicts and missing contents.
type OnConflict string

// Select names the checkpoints to undo: From and every later checkpoint
// of the session (From empty: the latest checkpoint that is neither undone
// nor itself a restore), limited to Paths when given.
type Select struct {
	Session string
	From    string
	Paths   []string
	// Until, when set, is the last checkpoint undone instead of the
	// latest: the later ones stay, and a path one of them changed again is
	// a conflict (it no longer holds what Until left).
	Until string
	// Files reads and writes the contents of regular files; nil is the
	// disk. An editor that serves unsaved buffers (ACP's fs methods) plugs
	// in here, so a restore compares with and sets what the user sees.
	// Whether a path exists, links, directories and deletions are the
	// disk's.
	Files Files
}

// Files is an editor's view of file contents, by workspace-relative path.
type Files interface {
	ReadFile(rel string) ([]byte, error)
	WriteFile(rel string, data []byte, mode fs.FileMode) error
}

// Preview works out a restore without writing anything.
func (w *Workspace) Preview(sel Select) (*Plan, error) {
	defer w.lock()()
	return w.planLocked(sel)
}

// planLocked selects the checkpoints and works out each path.
func (w *Workspace) planLocked(sel Select) (*Plan, error) {
	list, err := w.listLocked(sel.Session)
	if err != nil {
		return nil, err
	}
	from, err := w.pickLocked(sel.Session, list, sel.From)
	if err != nil {
		return nil, err
	}
	until := 0
	if sel.Until != "" {
		if until, err = w.pickLocked(sel.Session, list, sel.Until); err != nil {
			return nil, err
		}
	}
	p := &Plan{Session: sel.Session, Partial: len(sel.Paths) > 0}
	want := map[string]bool{}
	for _, q := range sel.Paths {
		want[strings.TrimPrefix(path.Clean("/"+filepathToSlash(q)), "/")] = true
	}
	target := map[string]*State{}
	expected := map[string]*State{}
	var order []string
	for _, cp := range list {
		if cp.n < from || until > 0 && cp.n > until {
			continue
		}
		p.Undoes = append(p.Undoes, cp.ID)
		for _, c := range cp.Changes {
			if len(want) > 0 && !want[c.Path] {
				continue
			}
			if _, seen := target[c.Path]; !seen {
				target[c.Path] = c.Before
				order = append(order, c.Path)
			}
			expected[c.Path] = c.After
		}
	}
	remade := map[string]bool{}
	for rel, t := range target {
		if t != nil && t.Kind == KindDir {
			remade[rel] = true
		}
	}
	for _, rel := range order {
		if !validRel(rel) {
			return nil, fmt.Errorf("checkpoint journal names %q, which is not a workspace path", rel)
		}
		p.Steps = append(p.Steps, w.stepLocked(rel, expected[rel], target[rel], sel.Files, remade))
	}
	sort.SliceStable(p.Steps, func(i, j int) bool { return p.Steps[i].Path < p.Steps[j].Path })
	return p, nil
}

// pickLocked finds the first selected checkpoint's number.
func (w *Workspace) pickLocked(session string, list []*Checkpoint, from string) (int, error) {
	if from == "" {
		for i := len(list) - 1; i >= 0; i-- {
			cp := list[i]
			if cp.UndoneBy == "" && cp.Tool != ToolUndo && cp.Tool != ToolRewind {
				return cp.n, nil
			}
		}
		return 0, fmt.Errorf("%w: nothing to undo in this session", ErrUnknownCheckpoint)
	}
	n, err := ParseID(from)
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrUnknownCheckpoint, err)
	}
	for _, cp := range list {
		if cp.n == n {
			return n, nil
		}
	}
	if n <= w.expiredLocked(session) {
		return 0, fmt.Errorf("%w: %s was dropped to keep this session's undo history within its bounds (%d checkpoints, %d MiB); its files cannot be restored",
			ErrExpired, from, w.lim.SessionCount, w.lim.SessionBytes>>20)
	}
	return 0, fmt.Errorf("%w: no checkpoint %s in this session", ErrUnknownCheckpoint, from)
}

func filepathToSlash(p string) string { return filepath.ToSlash(p) }

// validRel refuses a journal path that is not a plain workspace path.
func validRel(rel string) bool {
	return rel != "" && rel != "." && !path.IsAbs(rel) && path.Clean(rel) == rel && rel != ".." && !strings.HasPrefix(rel, "../")
}

// unsafeLocked says why a path must not be written by a restore, which
// writes with agentd's own rights: a parent that is now a link (the
// workspace's handle follows links that stay inside it, so d/pre-commit
// with d a link to .git/hooks would land in .git/hooks, out of every
// command's reach), or a path in a git directory or .agentd/, which no
// checkpoint of a command can have recorded honestly. absent: a parent is
// missing, or is one of the directories the restore makes again (remade).
func (w *Workspace) unsafeLocked(rel string, remade map[string]bool) (absent bool, err error) {
	parts := strings.Split(rel, "/")
	if parts[0] == ".agentd" || slices.Contains(parts, ".git") {
		return false, errors.New("a restore never writes in a .git directory or .agentd/")
	}
	for i := 1; i < len(parts); i++ {
		dir := strings.Join(parts[:i], "/")
		fi, err := w.fsys.Lstat(filepath.FromSlash(dir))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return true, nil // made as a directory when restored
		case err != nil:
			return false, fmt.Errorf("cannot read %s now: %s", dir, errText(err))
		case !fi.IsDir() && remade[dir]:
			return true, nil
		case !fi.IsDir():
			return false, fmt.Errorf("%s is no longer a directory (now %s): nothing is restored beneath it", dir, kindWord(fi.Mode()))
		}
	}
	return false, nil
}

func kindWord(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a link"
	case m.IsRegular():
		return "a file"
	}
	return "something else"
}

// stepLocked decides what to do with one path.
// remade are the directories the restore makes again (a link or a file
// there now is replaced first): a path beneath one is absent until then.
func (w *Workspace) stepLocked(rel string, expected, target *State, files Files, remade map[string]bool) Step {
	s := Step{Path: rel, Expected: expected, Target: target}
	absent, err := w.unsafeLocked(rel, remade)
	if err != nil {
		s.Action, s.Reason, s.unsafe = ActionConflict, err.Error(), true
		return s
	}
	var cur *State
	if !absent {
		cur, err = w.currentLocked(rel, files)
	}
	if err != nil {
		s.Action, s.Reason = ActionConflict, "cannot read it now: "+errText(err)
		return s
	}
	s.Current = cur
	switch {
	case Same(cur, target) && (target == nil || cur.Mode == target.Mode):
		s.Action = ActionNone
	case target != nil && target.Kind != KindDir && target.Hash.IsZero():
		s.Action, s.Reason = ActionMissing, "its earlier content was not kept ("+target.NotKept+")"
	case target != nil && target.Kind != KindDir && !w.intact(target.Hash):
		s.Action, s.Reason = ActionMissing, "its earlier content is missing or damaged in the checkpoint store"
	case Same(cur, expected) || Same(cur, target):
		s.Action = ActionRestore
	default:
		s.Action, s.Reason = ActionConflict, conflictReason(cur, expected)
	}
	return s
}

func conflictReason(cur, expected *State) string {
	switch {
	case cur == nil:
		return "it was deleted after the checkpoint"
	case expected == nil:
		return "it was created again after the checkpoint"
	case cur.Hash.IsZero() && cur.Kind != KindDir:
		return "it changed after the checkpoint, and its content now cannot be kept (" + cur.NotKept + ")"
	}
	return "it was changed after the checkpoint"
}

func (w *Workspace) intact(h Hash) bool {
	_, err := w.store.Get(h)
	return err == nil
}

// currentLocked reads what a path holds now and keeps its content in the
// store, so a restore that overwrites it can be undone.
func (w *Workspace) currentLocked(rel string, files Files) (*State, error) {
	local := filepath.FromSlash(rel)
	fi, err := w.fsys.Lstat(local)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	st := statOf(fi)
	s := &State{Kind: st.kind(), Mode: st.perm()}
	var data []byte
	switch s.Kind {
	case KindDir:
		return s, nil
	case KindSymlink:
		t, err := w.fsys.Readlink(local)
		if err != nil {
			return nil, err
		}
		data = []byte(t)
	case KindFile:
		if fi.Size() > w.lim.MaxFileSize {
			s.Size, s.NotKept = fi.Size(), fmt.Sprintf("larger than the %s cap", sizeText(w.lim.MaxFileSize))
			return s, nil
		}
		if files != nil {
			if data, err = files.ReadFile(rel); err != nil {
				return nil, err
			}
			break
		}
		f, err := w.fsys.Open(local)
		if err != nil {
			return nil, err
		}
		data, err = io.ReadAll(io.LimitReader(f, w.lim.MaxFileSize+1))
		f.Close()
		if err != nil {
			return nil, err
		}
	default:
		s.Kind, s.NotKept = KindFile, "not a regular file"
		return s, nil
	}
	s.Size = int64(len(data))
	s.Hash = HashOf(data)
	if _, err := w.store.PutHashed(s.Hash, data); err != nil {
		return nil, err
	}
	return s, nil
}

// Content returns the content a state names (a symlink's target), from the
// store.
func (w *Workspace) Content(s *State) ([]byte, error) {
	if s == nil || s.Kind == KindDir {
		return nil, nil
	}
	if s.Hash.IsZero() {
		return nil, fmt.Errorf("%w: %s", ErrMissing, s.NotKept)
	}
	return w.store.Get(s.Hash)
}
