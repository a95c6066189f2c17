package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// fileChange is one file a write, edit, patch or undo would change. The
// before image is what Prepare saw; Run refuses if the disk no longer
// matches it, so the user approves exactly what gets written.
type fileChange struct {
	Rel, Abs string
	// OldRel/OldAbs are set for a move: the file at OldAbs goes away.
	OldRel, OldAbs string
	Before         *string // nil: the file does not exist yet
	After          *string // nil: the file is deleted
	Mode           fs.FileMode
	// rebase redoes the change on content the run itself wrote since it
	// was prepared: an earlier call of the same batch changed the file
	// first. nil: the change cannot be redone (it is refused instead).
	rebase func(cur string) (string, *Result)
}

func (c fileChange) moved() bool { return c.OldAbs != "" }

// diffs renders the changes as editors show them.
func diffs(chs []fileChange) []FileDiff {
	out := make([]FileDiff, 0, len(chs))
	for _, c := range chs {
		old := c.Rel
		if c.moved() {
			old = c.OldRel
		}
		out = append(out, FileDiff{
			Path:      c.Rel,
			Status:    statusOf(c.Before, c.After, c.moved()),
			OldPath:   oldPath(c),
			Diff:      unifiedDiff(old, c.Rel, c.Before, c.After),
			OldText:   inlineText(c.Before),
			NewText:   inlineText(c.After),
			RunsLater: RunsLater(c.Rel),
		})
	}
	return out
}

func oldPath(c fileChange) string {
	if c.moved() {
		return c.OldRel
	}
	return ""
}

// readImage returns the file's content, nil if it does not exist. The disk
// says whether it exists and its mode; the content comes through env.Files
// when there is one, so a change is made against the editor's unsaved
// buffer rather than a stale disk copy.
func readImage(ctx context.Context, env *Env, abs string) (*string, fs.FileMode, error) {
	fi, err := diskStat(env.Root, abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	if fi.IsDir() {
		// What os.ReadFile says, without asking the editor about a directory.
		return nil, 0, &fs.PathError{Op: "read", Path: abs, Err: syscall.EISDIR}
	}
	b, err := readContent(ctx, env, abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil // removed since the stat
	}
	if err != nil {
		return nil, 0, err
	}
	s := string(b)
	return &s, fi.Mode().Perm(), nil
}

func sameImage(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// checkUnchanged refuses when a file differs from what Prepare saw (the
// editor's buffer, when the editor serves the files), unless the difference
// is the run's own earlier write in the same batch of calls: then the change
// is redone on top of it, in the order the model asked.
func checkUnchanged(ctx context.Context, env *Env, chs []fileChange) *Result {
	for i, c := range chs {
		src := c.Abs
		if c.moved() {
			src = c.OldAbs
		}
		cur, _, err := readImage(ctx, env, src)
		if err != nil {
			return Errorf("reading %s: %v", c.Rel, err)
		}
		if !sameImage(cur, c.Before) {
			r := rebaseChange(env, &chs[i], cur)
			if r != nil {
				return r
			}
		}
		if c.moved() {
			if cur, _, _ := readImage(ctx, env, c.Abs); cur != nil {
				return Errorf("cannot move %s to %s: the destination exists", c.OldRel, c.Rel)
			}
		}
	}
	return nil
}

// rebaseChange redoes c on cur when cur is what this run last wrote to the
// file; otherwise someone else changed it and the change is refused.
func rebaseChange(env *Env, c *fileChange, cur *string) *Result {
	if cur == nil || c.Before == nil || c.rebase == nil || c.moved() || env.Reads == nil || !env.Reads.ownWrite(c.Rel, *cur) {
		return Errorf("%s changed on disk after this change was prepared; read it again and redo the change", c.Rel)
	}
	after, r := c.rebase(*cur)
	if r != nil {
		r.Output = fmt.Sprintf("NOT applied: an earlier call of yours in the same reply changed %s first, and on top of it this change no longer applies: %s", c.Rel, r.Output)
		return r
	}
	c.Before = cur
	if c.After != nil {
		c.After = &after
	}
	return nil
}

// applyChanges journals the pre-images, writes every change and reports a
// checkpoint. A failure half-way restores what was already written, so a
// change is all or nothing. A change that would add Go syntax errors is
// refused before anything is written (syntaxGate).
func applyChanges(ctx context.Context, env *Env, tool string, chs []fileChange) (Result, error) {
	if r := checkUnchanged(ctx, env, chs); r != nil {
		return *r, nil
	}
	if r := syntaxGate(tool, chs); r != nil {
		return *r, nil
	}
	j := journalFor(env)
	id, err := j.record(tool, chs)
	if err != nil {
		return Result{}, fmt.Errorf("recording undo: %w", err)
	}
	for i, c := range chs {
		if err := writeChange(ctx, env, c); err != nil {
			rollback(ctx, env, chs[:i+1])
			_ = j.drop(id)
			return *Errorf("writing %s: %v (nothing was changed)", c.Rel, err), nil
		}
	}
	var out, shown strings.Builder
	fmt.Fprintf(&out, "%s\n", summarize(chs))
	shown.WriteString(out.String())
	if id != "" {
		// the model's way back; the editor shows the checkpoint itself
		fmt.Fprintf(&out, "checkpoint %s (undo_patch restores the files as they were before it)\n", id)
	}
	var views []string
	for _, c := range chs {
		var shown []span
		if tool != WriteFileToolName && c.Before != nil && c.After != nil {
			var text string
			text, shown = showChange(c.Rel, *c.After, changedSpans(*c.Before, *c.After))
			if text != "" {
				views = append(views, strings.TrimRight(text, "\n"))
			}
		}
		markWrite(env, c, tool == WriteFileToolName || c.Before == nil, shown)
	}
	// The language servers check the files once the model's reply has
	// made all its edits (agent/language.go), not here after each.
	var rest string
	if len(views) > 0 {
		rest = "\n" + strings.Join(views, "\n\n") + rest
	}
	out.WriteString(rest)
	shown.WriteString(rest)
	res := Result{Output: strings.TrimRight(out.String(), "\n"), Files: diffs(chs), Checkpoint: id}
	if id != "" {
		res.Full = strings.TrimRight(shown.String(), "\n")
	}
	return res, nil
}

func summarize(chs []fileChange) string {
	parts := make([]string, 0, len(chs))
	for _, c := range chs {
		s := statusOf(c.Before, c.After, c.moved())
		if c.moved() {
			parts = append(parts, fmt.Sprintf("moved %s → %s", c.OldRel, c.Rel))
			continue
		}
		parts = append(parts, s+" "+c.Rel)
	}
	return strings.Join(parts, ", ")
}

// writeChange writes one change: content through env.Files when there is
// one, so the editor tracks it; a delete, and the old side of a move, on the
// disk, since ACP has no delete.
func writeChange(ctx context.Context, env *Env, c fileChange) error {
	if c.After == nil {
		return diskRemove(env.Root, c.Abs)
	}
	mode := c.Mode
	if mode == 0 {
		mode = 0o644
	}
	if err := writeContent(ctx, env, c.Abs, []byte(*c.After), mode); err != nil {
		return err
	}
	if c.moved() {
		return diskRemove(env.Root, c.OldAbs)
	}
	return nil
}

// rollback puts back the before images of changes already written, by the
// same way they were written. It goes on when the call was cancelled (that
// may be why a write failed), within a bound, since the editor may be gone.
func rollback(ctx context.Context, env *Env, chs []fileChange) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
	defer cancel()
	for _, c := range chs {
		if c.moved() {
			_ = diskRemove(env.Root, c.Abs)
			_ = writeContent(ctx, env, c.OldAbs, []byte(*c.Before), c.Mode)
			continue
		}
		if c.Before == nil {
			_ = diskRemove(env.Root, c.Abs)
			continue
		}
		_ = writeContent(ctx, env, c.Abs, []byte(*c.Before), c.Mode)
	}
}

// rollbackTimeout bounds putting back a half-written change.
const rollbackTimeout = 10 * time.Second

// writeAtomic writes through a temp file in the same directory and renames
// it, so an editor never sees half a file.
func writeAtomic(abs string, data []byte, mode fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(abs), "."+filepath.Base(abs)+".agentd-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp, mode)
	}
	if werr == nil {
		werr = os.Rename(tmp, abs)
	}
	if werr != nil {
		_ = os.Remove(tmp)
	}
	return werr
}

// markWritten records the new mtimes of files the run changed by other
// means than the model's own content (undo): a follow-up edit needs no
// fresh read.
func markWritten(env *Env, chs []fileChange) {
	for _, c := range chs {
		markWrite(env, c, false, nil)
	}
}

// markWrite records what the run wrote to one file: its mtime and content,
// and which lines the model knows of it (all of a file it wrote whole).
func markWrite(env *Env, c fileChange, whole bool, shown []span) {
	if env.Reads == nil || c.After == nil {
		return
	}
	if fi, err := diskStat(env.Root, c.Abs); err == nil {
		env.Reads.markWrite(c.Rel, fi.ModTime(), *c.After, whole, shown)
	}
}

// checkFresh enforces read-before-edit: the file must have been read in
// this run and not have changed on disk since.
func checkFresh(env *Env, abs, rel string) *Result {
	if env.Reads == nil {
		return nil
	}
	seen, ok := env.Reads.Seen(rel)
	if !ok {
		return Errorf("read %s with read_file before changing it", rel)
	}
	fi, err := diskStat(env.Root, abs)
	if err != nil {
		return Errorf("stat %s: %v", rel, err)
	}
	if !fi.ModTime().Equal(seen) {
		return Errorf("%s changed on disk since you read it; read it again before changing it", rel)
	}
	return nil
}
