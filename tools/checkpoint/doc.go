// Package checkpoint makes every change to the workspace undoable: the
// file tools' edits and everything a command changes (files modified,
// created, deleted, renamed, their modes), without git and without copying
// the workspace per command.
//
// A content-addressed store (Store) keeps file contents, deduplicated and
// compressed, under the state directory. A manifest of the covered paths
// (size, times, inode, mode, content hash) is kept current by a stat scan:
// before a command (Begin) whatever changed since the last scan is read into
// the store, so every covered file's content is there when the command
// starts; after it (End) a second scan finds what the command changed, and
// its new contents are stored too. A command that changes nothing costs two
// stat scans; the disk grows with what changed. Each session's checkpoints
// (Checkpoint) name the contents before and after by hash; a restore (Plan,
// Restore) checks each path against what the checkpoint left, reports a
// path someone changed since (a conflict) or whose earlier content is not
// kept (missing) instead of overwriting or guessing, and is itself recorded
// as a checkpoint, so it can be undone.
//
// Covered: every regular file, symlink and directory under the workspace
// root except what the repository ignores (rag.RepoIgnore: nested
// .gitignore files, .git/info/exclude) and the version-control directories;
// files over Limits.MaxFileSize are covered by stat only. docs/undo.md has
// the design, the bounds and the figures.
//
// checkpoint imports rag (for the repository's ignore rules) and the
// standard library; tools and agent use it.
package checkpoint
