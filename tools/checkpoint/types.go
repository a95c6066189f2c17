package checkpoint

import (
	"encoding/hex"
	"fmt"
	"io/fs"
	"time"
)

// Kind is what a path is.
type Kind string

// Kinds of paths a checkpoint records.
const (
	KindFile    Kind = "file"
	KindSymlink Kind = "symlink"
	KindDir     Kind = "dir"
)

// State is what a path held at one moment. A nil *State is a path that did
// not exist.
type State struct {
	Kind Kind        `json:"kind"`
	Mode fs.FileMode `json:"mode,omitempty"` // permission bits
	Size int64       `json:"size,omitempty"`
	// Hash names the content in the store (a symlink's content is its
	// target); zero for a directory and for content that was not kept.
	Hash Hash `json:"hash,omitzero"`
	// NotKept says why the content is not in the store (over the size cap,
	// unreadable); such a state cannot be restored.
	NotKept string `json:"notKept,omitempty"`
}

// Same reports whether two states hold the same thing. The mode is not
// compared: a restore puts it back, and a chmod alone is not worth a
// conflict.
func Same(a, b *State) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if a.Kind != b.Kind {
		return false
	}
	if a.Kind == KindDir {
		return true
	}
	if a.Hash.IsZero() || b.Hash.IsZero() {
		return false // unknown content is never assumed equal
	}
	return a.Hash == b.Hash
}

// Change is one path a checkpoint changed.
type Change struct {
	Path   string `json:"path"`
	Before *State `json:"before,omitempty"`
	After  *State `json:"after,omitempty"`
	// From names the path this one was renamed from (display only: a
	// rename is a delete and a create, and is undone as such).
	From string `json:"from,omitempty"`
}

// Status names a change the way editors show it: added, deleted, modified,
// renamed, mode (only the permissions changed) or type (a file became a
// directory or a link).
func (c Change) Status() string {
	switch {
	case c.From != "":
		return "renamed"
	case c.Before == nil:
		return "added"
	case c.After == nil:
		return "deleted"
	case c.Before.Kind != c.After.Kind:
		return "type"
	case Same(c.Before, c.After) && c.Before.Mode != c.After.Mode:
		return "mode"
	}
	return "modified"
}

// Checkpoint is one change to the workspace that can be undone: a file
// tool's edit, everything a command changed, or a restore (which is itself
// a checkpoint, so an undo can be undone).
type Checkpoint struct {
	ID      string    `json:"id"` // c1, c2, … per session
	Session string    `json:"session"`
	Run     string    `json:"run,omitempty"`
	Tool    string    `json:"tool"` // edit_file, run_cmd, …, or ToolUndo / ToolRewind
	Title   string    `json:"title,omitempty"`
	Time    time.Time `json:"time"`
	Changes []Change  `json:"changes"`
	// Undoes lists the checkpoints a restore undid.
	Undoes []string `json:"undoes,omitempty"`
	// UndoneBy names the restore that undid this checkpoint.
	UndoneBy string `json:"undoneBy,omitempty"`
	// Notes say what the checkpoint could not capture.
	Notes []string `json:"notes,omitempty"`
	// Bytes is what the contents it references take in the store.
	Bytes int64 `json:"bytes,omitempty"`
	n     int
}

// Number is the checkpoint's place in its session (c7 → 7).
func (c *Checkpoint) Number() int { return c.n }

// Tools a restore is recorded under.
const (
	ToolUndo   = "undo"
	ToolRewind = "rewind"
)

// MarshalText writes the hash in hex.
func (h Hash) MarshalText() ([]byte, error) {
	out := make([]byte, hex.EncodedLen(len(h)))
	hex.Encode(out, h[:])
	return out, nil
}

// UnmarshalText reads a hash in hex.
func (h *Hash) UnmarshalText(b []byte) error {
	v, err := ParseHash(string(b))
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	*h = v
	return nil
}
