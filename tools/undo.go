package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/agentd/agentd/tools/checkpoint"
)

// journal records the file tools' changes as checkpoints of the session
// (package checkpoint: the contents before and after, by hash, in a store
// under the state directory, outside the user's .git), beside the
// checkpoints of commands (undo_cmd.go), so undo_patch and the user's undo
// treat both alike.
type journal struct {
	env *Env
	ws  *checkpoint.Workspace // nil: no state directory, undo disabled
}

func journalFor(env *Env) *journal {
	ws, _ := Checkpoints(env)
	return &journal{env: env, ws: ws}
}

// Checkpoints returns the workspace's checkpoints, or nil without a state
// directory.
func Checkpoints(env *Env) (*checkpoint.Workspace, error) {
	if env == nil || env.StateDir == "" || env.Root == "" {
		return nil, errors.New("undo is not available: no state directory")
	}
	return checkpoint.Open(env.Root, env.StateDir)
}

// record stores the before and after contents of chs and returns the
// checkpoint id. Directories the change will create (write_file makes the
// parents it needs) are part of it, so an undo removes them again.
func (j *journal) record(tool string, chs []fileChange) (string, error) {
	if j.ws == nil {
		return "", nil
	}
	cp := &checkpoint.Checkpoint{Session: j.env.SessionID, Run: j.env.RunID, Tool: tool, Title: summarize(chs)}
	dirs := map[string]bool{}
	for _, c := range chs {
		if c.moved() {
			before, err := j.state(c.Before, c.Mode)
			if err != nil {
				return "", err
			}
			cp.Changes = append(cp.Changes, checkpoint.Change{Path: c.OldRel, Before: before})
		}
		before, err := j.state(c.Before, c.Mode)
		if err != nil {
			return "", err
		}
		if c.moved() {
			before = nil // checked free before a move
		}
		after, err := j.state(c.After, afterMode(c))
		if err != nil {
			return "", err
		}
		if before == nil && after != nil {
			for _, d := range missingParents(j.env.Root, c.Rel) {
				if !dirs[d] {
					dirs[d] = true
					cp.Changes = append(cp.Changes, checkpoint.Change{Path: d, After: &checkpoint.State{Kind: checkpoint.KindDir, Mode: 0o755}})
				}
			}
		}
		cp.Changes = append(cp.Changes, checkpoint.Change{Path: c.Rel, Before: before, After: after, From: oldPath(c)})
	}
	if err := j.ws.Record(cp); err != nil {
		return "", err
	}
	return cp.ID, nil
}

func afterMode(c fileChange) fs.FileMode {
	if c.Mode == 0 {
		return 0o644
	}
	return c.Mode
}

// state stores a content and describes it; nil content is an absent file.
func (j *journal) state(content *string, mode fs.FileMode) (*checkpoint.State, error) {
	if content == nil {
		return nil, nil
	}
	h, _, err := j.ws.Store().Put([]byte(*content))
	if err != nil {
		return nil, fmt.Errorf("recording undo: %w", err)
	}
	return &checkpoint.State{Kind: checkpoint.KindFile, Mode: mode.Perm(), Size: int64(len(*content)), Hash: h}, nil
}

// missingParents lists the directories above rel that do not exist yet,
// outermost first.
func missingParents(root, rel string) []string {
	var out []string
	for d := path.Dir(rel); d != "." && d != "/"; d = path.Dir(d) {
		if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(d))); err == nil {
			break
		}
		out = append([]string{d}, out...)
	}
	return out
}

// drop forgets a checkpoint whose change was rolled back.
func (j *journal) drop(id string) error {
	if j.ws == nil || id == "" {
		return nil
	}
	return j.ws.Drop(j.env.SessionID, id)
}

// entries lists the session's checkpoints, oldest first.
func (j *journal) entries() ([]*checkpoint.Checkpoint, error) {
	if j.ws == nil {
		return nil, nil
	}
	return j.ws.List(j.env.SessionID)
}
