package tools

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// agentd's own directories hold what no tool call may read or change:
// every workspace's state (sessions, transcripts, the audit log, the rules
// the user's answers granted), the indexes and caches, and the user's
// configuration (config.json, rules.json: what is allowed). A workspace
// may contain them (one that is the home directory contains them all): a
// write_file of .config/agentd/rules.json would grant every command, a
// read of .local/state/agentd/…/events.jsonl would show another project's
// transcript. The file tools refuse paths inside them and the walks
// (list_dir, glob_file_search, grep, the index) skip them, wherever the
// workspace lies; the sandbox hides them from commands.

// AgentDirs is the one list of agentd's own directories, absolute and
// with symlinks resolved where they exist: the state base ($AGENTD_STATE_DIR,
// else $XDG_STATE_HOME/agentd or ~/.local/state/agentd), the cache base
// (~/.cache/agentd: indexes, the sandbox's caches), the configuration
// (~/.config/agentd), and extra, the directories a caller was given
// (a per-workspace state directory, a configuration directory set
// elsewhere). The file tools (Env.Private), the index and the sandbox all
// take it from here.
func AgentDirs(extra ...string) []string {
	var dirs []string
	if d := os.Getenv("AGENTD_STATE_DIR"); d != "" {
		dirs = append(dirs, d)
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		dirs = append(dirs, filepath.Join(d, "agentd"))
	} else if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, ".local", "state", "agentd"))
	}
	if d, err := os.UserCacheDir(); err == nil {
		dirs = append(dirs, filepath.Join(d, "agentd"))
	}
	if d, err := os.UserConfigDir(); err == nil {
		dirs = append(dirs, filepath.Join(d, "agentd"))
	}
	dirs = append(dirs, extra...)
	var out []string
	for _, d := range dirs {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		c := canonicalDir(d)
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// canonicalDir resolves the symlinks of the longest existing prefix of
// an absolute path, so that a path the tools resolved compares with it.
// A directory that exists is resolved once per process: the daemon asks
// for the same few at start (the sandbox's list, then the tools' list
// from it, then the index's), each a stat of every component.
func canonicalDir(d string) string {
	d = filepath.Clean(d)
	if r, ok := canonicalDirs.Load(d); ok {
		return r.(string)
	}
	if r, err := filepath.EvalSymlinks(d); err == nil {
		canonicalDirs.Store(d, r)
		return r
	}
	if r, err := resolveExisting(d); err == nil {
		return r
	}
	return d
}

// canonicalDirs holds the resolved form of directories that existed.
var canonicalDirs sync.Map

// privateDir returns the agentd directory abs is in, "" when none. A
// directory that holds the workspace itself does not count: the user
// opened a project there (the state base of a test's temporary
// directories, agentd's configuration opened to edit it); what the hole
// is about is a workspace that holds agentd's directories.
func (env *Env) privateDir(abs string) string {
	for _, d := range env.Private {
		if within(d, abs) && !within(d, env.Root) {
			return d
		}
	}
	return ""
}

// hiddenIn lists the agentd directories under dir, relative to root with
// forward slashes: what a walk of dir skips.
func (env *Env) hiddenIn(root string) []string {
	var out []string
	for _, d := range env.Private {
		if within(root, d) && d != root {
			out = append(out, relPath(root, d))
		}
	}
	return out
}

// hiddenPath reports whether a workspace-relative path lies in one of
// hidden (hiddenIn's list).
func hiddenPath(hidden []string, rel string) bool {
	for _, h := range hidden {
		if rel == h || strings.HasPrefix(rel, h+"/") {
			return true
		}
	}
	return false
}
