package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A repository's git directory decides what git runs: its configuration
// (core.fsmonitor, filters, core.hooksPath, aliases, the pager), its hooks,
// info/attributes, and commondir — a file that, where it exists, makes git
// take the configuration and the hooks from another directory altogether
// (as in a linked worktree). modules/ holds the submodules' git
// directories, whose configuration runs when git recurses into them. Any
// of these written by a command runs the command's code the next time the
// user (or agentd) runs git there, unconfined.
//
// So a command's whole git directory is read-only: the workspace's .git,
// the git directories a .git file points to inside the workspace, every
// nested repository's (Spec.Protect). Nothing in it can be created,
// changed, renamed or removed, whatever the name.
//
// A command that is git itself (Spec.Git: the policy checked the line runs
// git and nothing else, with no option that runs a program or writes a
// file of its choosing, and it runs with git's safe settings) may write
// what git writes while it works: objects, refs, the index, HEAD, logs.
// Its configuration, hooks, info/, commondir and gitdir files stay
// read-only (also in every submodule's and linked worktree's directory),
// the directories holding them are bound onto themselves (they cannot be
// renamed away and recreated), and the names among them that did not
// exist are removed after the command if they appeared: the kernel cannot
// refuse the creation of one name in a directory where git must create
// others (index.lock).

// gitPlan is what WorkspaceWrite does about the workspace's repository.
type gitPlan struct {
	pins, readOnly, write []string
	// absent are the protected names that did not exist (Spec.Git).
	absent []string
}

// gitGuarded are the entries of a git directory that decide what git runs.
var gitGuarded = []string{"config", "config.worktree", "hooks", "info", "commondir", "gitdir", "objects/info/alternates"}

// gitProtections plans the workspace's repository: read-only whole, or
// with gitWrite the state git writes writable and the rest as above. When
// .git is a file (a linked worktree or a submodule), the git directories
// it points to are treated the same, made writable (with gitWrite) when
// they lie outside the workspace and git made them for it.
func gitProtections(ws string, gitWrite bool) (gitPlan, error) {
	var g gitPlan
	dotgit := filepath.Join(ws, ".git")
	fi, err := os.Lstat(dotgit)
	switch {
	case os.IsNotExist(err):
		return g, nil
	case err != nil:
		return g, err
	case fi.Mode()&os.ModeSymlink != 0:
		return g, &SetupError{Step: "plan", Msg: dotgit + " is a symbolic link: the sandbox cannot keep it read-only"}
	case fi.IsDir():
		g.protect(dotgit, ws, gitWrite)
		return g, nil
	}
	// A .git file: "gitdir: <path>".
	data, err := ReadRegular(dotgit, 4<<10)
	if err != nil {
		return g, &SetupError{Step: "plan", Msg: fmt.Sprintf("%s cannot be read: %v", dotgit, err)}
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return g, &SetupError{Step: "plan", Msg: dotgit + " is neither a directory nor a gitdir link"}
	}
	gitdir = strings.TrimSpace(gitdir)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(ws, gitdir)
	}
	gitdir = filepath.Clean(gitdir)
	g.readOnly = append(g.readOnly, dotgit)
	if !within(ws, gitdir) && !gitRecordsWorktree(gitdir, ws) {
		// A .git file a command wrote (the workspace was no repository)
		// names a directory git never made for this workspace: writing it
		// would hand the next command any directory it names. Only the
		// file itself is kept read-only.
		return g, nil
	}
	g.protect(gitdir, ws, gitWrite)
	if c, err := ReadRegular(filepath.Join(gitdir, "commondir"), 4<<10); err == nil {
		common := strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitdir, common)
		}
		g.protect(filepath.Clean(common), ws, gitWrite)
	}
	return g, nil
}

// protect plans one git directory of the workspace's repository.
func (g *gitPlan) protect(dir, ws string, gitWrite bool) {
	inside := within(ws, dir)
	switch {
	case !gitWrite && inside:
		g.readOnly = append(g.readOnly, dir)
	case !gitWrite:
		// Outside the workspace and not granted: Landlock refuses writes.
	default:
		if !inside {
			g.write = append(g.write, dir)
		}
		g.guard(dir, 0)
	}
}

// guard pins dir and makes its guarded entries read-only (noting the
// missing ones), then the same for every submodule's git directory under
// modules/ and every linked worktree's under worktrees/.
func (g *gitPlan) guard(dir string, depth int) {
	g.pins = append(g.pins, dir)
	for _, name := range gitGuarded {
		q := filepath.Join(dir, name)
		if _, err := os.Lstat(q); err != nil {
			g.absent = append(g.absent, q)
			continue
		}
		g.readOnly = append(g.readOnly, q)
	}
	if depth > 8 {
		return
	}
	for _, sub := range []string{"modules", "worktrees"} {
		holder := filepath.Join(dir, sub)
		if fi, err := os.Lstat(holder); err == nil && fi.IsDir() {
			g.pins = append(g.pins, holder)
			g.guardGitDirs(holder, depth+1)
		}
	}
}

// guardGitDirs guards the git directories (they hold a HEAD) under dir;
// submodule names may contain slashes, so it recurses until it finds one.
func (g *gitPlan) guardGitDirs(dir string, depth int) {
	if depth > 8 {
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		if _, err := os.Lstat(filepath.Join(sub, "HEAD")); err == nil {
			g.guard(sub, depth+1)
			continue
		}
		g.pins = append(g.pins, sub)
		g.guardGitDirs(sub, depth+1)
	}
}

// gitRecordsWorktree says whether gitdir, a git directory outside the
// workspace, is the one git made for the worktree at ws: a linked
// worktree's names ws/.git in its "gitdir" file, a submodule's names ws as
// core.worktree in its config. A command confined to the workspace cannot
// write either record in a directory outside it, so a .git file it wrote
// never makes a directory of its choosing writable.
func gitRecordsWorktree(gitdir, ws string) bool {
	same := func(a, b string) bool {
		if ca, err := filepath.EvalSymlinks(a); err == nil {
			a = ca
		}
		if cb, err := filepath.EvalSymlinks(b); err == nil {
			b = cb
		}
		return filepath.Clean(a) == filepath.Clean(b)
	}
	if b, err := ReadRegular(filepath.Join(gitdir, "gitdir"), 4<<10); err == nil {
		back := strings.TrimSpace(string(b))
		if !filepath.IsAbs(back) {
			back = filepath.Join(gitdir, back)
		}
		if same(back, filepath.Join(ws, ".git")) {
			return true
		}
	}
	if wt := coreWorktree(gitdir); wt != "" {
		if !filepath.IsAbs(wt) {
			wt = filepath.Join(gitdir, wt)
		}
		return same(wt, ws)
	}
	return false
}

// coreWorktree reads core.worktree from gitdir's config, "" when unset.
func coreWorktree(gitdir string) string {
	b, err := ReadRegular(filepath.Join(gitdir, "config"), 1<<20)
	if err != nil {
		return ""
	}
	section, value := "", ""
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			section = ""
			if f := strings.Fields(strings.Trim(line, "[]")); len(f) > 0 {
				section = strings.ToLower(f[0])
			}
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if ok && section == "core" && strings.EqualFold(strings.TrimSpace(k), "worktree") {
			value = strings.Trim(strings.TrimSpace(v), "\"")
		}
	}
	return value
}

// removeAppeared removes the paths of absent that exist now: a git command
// created them (which the policy's checks should have made impossible).
// It returns what it removed.
func removeAppeared(absent []string) []string {
	var out []string
	for _, q := range absent {
		if _, err := os.Lstat(q); err == nil {
			if os.RemoveAll(q) == nil {
				out = append(out, q)
			}
		}
	}
	return out
}
