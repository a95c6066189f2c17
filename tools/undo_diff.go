package tools

import (
	"bytes"
	"fmt"
	"unicode/utf8"

	"github.com/agentd/agentd/tools/checkpoint"
)

// How much of a checkpoint's changes is rendered as diffs: a command that
// rewrites a thousand files still reports each path and its status, the
// first ones with their diffs.
const (
	diffBudget   = 256 << 10 // bytes of unified diff in all
	inlineBudget = 512 << 10 // bytes of oldText/newText in all
	inlineMax    = 64 << 10  // a file larger than this is not inlined
	diffFilesMax = 100
)

// diffRenderer renders states from the store as editors show changes.
type diffRenderer struct {
	ws            *checkpoint.Workspace
	diffs, inline int
	files         int
}

// CheckpointDiffs renders the changes of a checkpoint, files and links only
// (directories come and go with them), within a budget.
func CheckpointDiffs(ws *checkpoint.Workspace, chs []checkpoint.Change) []FileDiff {
	d := &diffRenderer{ws: ws}
	renamed := map[string]bool{}
	for _, c := range chs {
		if c.From != "" {
			renamed[c.From] = true
		}
	}
	var out []FileDiff
	for _, c := range chs {
		if isDir(c.Before) && isDir(c.After) || c.Before == nil && isDir(c.After) || c.After == nil && isDir(c.Before) {
			continue
		}
		if renamed[c.Path] && c.After == nil {
			continue // shown as the move
		}
		var before *checkpoint.State = c.Before
		if c.From != "" {
			for _, o := range chs {
				if o.Path == c.From {
					before = o.Before
				}
			}
		}
		out = append(out, d.render(c.Path, c.From, before, c.After))
	}
	return out
}

// RestoreDiffs renders what a restore would do: each path from what it
// holds now to what it held before the checkpoints.
func RestoreDiffs(ws *checkpoint.Workspace, steps []checkpoint.Step) []FileDiff {
	d := &diffRenderer{ws: ws}
	var out []FileDiff
	for _, s := range steps {
		if isDir(s.Current) && isDir(s.Target) || s.Current == nil && isDir(s.Target) || s.Target == nil && isDir(s.Current) {
			continue
		}
		out = append(out, d.render(s.Path, "", s.Current, s.Target))
	}
	return out
}

func isDir(s *checkpoint.State) bool { return s != nil && s.Kind == checkpoint.KindDir }

func (d *diffRenderer) render(rel, from string, a, b *checkpoint.State) FileDiff {
	oldRel := rel
	if from != "" {
		oldRel = from
	}
	fd := FileDiff{Path: rel, Status: diffStatus(a, b, from != ""), OldPath: from, RunsLater: RunsLater(rel)}
	d.files++
	if d.files > diffFilesMax || d.diffs >= diffBudget {
		fd.Diff = fmt.Sprintf("(%s; diff not shown: the change touches many files)\n", fd.Status)
		return fd
	}
	before, bnote := d.text(a)
	after, anote := d.text(b)
	switch {
	case bnote != "" || anote != "":
		fd.Diff = fmt.Sprintf("--- a/%s\n+++ b/%s\n%s%s", oldRel, rel, bnote, anote)
	default:
		fd.Diff = unifiedDiff(oldRel, rel, before, after)
		if a != nil && b != nil && a.Mode != b.Mode {
			fd.Diff = fmt.Sprintf("old mode %04o\nnew mode %04o\n", a.Mode, b.Mode) + fd.Diff
		}
		fd.OldText, fd.NewText = d.inlined(before), d.inlined(after)
	}
	d.diffs += len(fd.Diff)
	return fd
}

// text loads a state's content for a diff; a note instead when it is not
// text or not kept.
func (d *diffRenderer) text(s *checkpoint.State) (*string, string) {
	if s == nil {
		return nil, ""
	}
	if s.Kind == checkpoint.KindDir {
		return nil, "(a directory)\n"
	}
	data, err := d.ws.Content(s)
	if err != nil {
		if s.NotKept != "" {
			return nil, fmt.Sprintf("(content not kept: %s)\n", s.NotKept)
		}
		return nil, fmt.Sprintf("(content unavailable: %v)\n", err)
	}
	if s.Kind == checkpoint.KindSymlink {
		t := "symlink to " + string(data) + "\n"
		return &t, ""
	}
	if bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 || !utf8.Valid(data) {
		return nil, fmt.Sprintf("(binary content, %d bytes)\n", len(data))
	}
	t := string(data)
	return &t, ""
}

func (d *diffRenderer) inlined(s *string) *string {
	if s == nil || len(*s) > inlineMax || d.inline+len(*s) > inlineBudget {
		return nil
	}
	d.inline += len(*s)
	return s
}

// diffStatus names a change as FileDiff does: added, deleted, modified,
// moved.
func diffStatus(a, b *checkpoint.State, moved bool) string {
	switch {
	case moved:
		return "moved"
	case a == nil:
		return "added"
	case b == nil:
		return "deleted"
	}
	return "modified"
}
