package rag

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

// git runs a git command in dir and returns its output. core.fsmonitor is
// off: a repository's configuration must not start programs when agentd
// only asks what changed.
func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "core.fsmonitor=false", "-C", dir}, args...)...)
	cmd.Env = append(cmd.Environ(), "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		return nil, fmt.Errorf("git %s: %w (%s)", args[0], err, msg)
	}
	return out, nil
}

// gitTopLevel is the top level of the repository holding dir, or "" when
// dir is in none.
func gitTopLevel(ctx context.Context, dir string) string {
	out, err := git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return ""
	}
	top := strings.TrimSpace(string(out))
	if real, err := filepath.EvalSymlinks(top); err == nil {
		top = real
	}
	return top
}

// gitHead is the commit checked out in dir.
func gitHead(ctx context.Context, dir string) (string, error) {
	out, err := git(ctx, dir, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// gitHasCommit reports whether the repository has commit (a shallow clone
// or a developer who has not fetched may not).
func gitHasCommit(ctx context.Context, dir, commit string) bool {
	if commit == "" || strings.HasPrefix(commit, "-") {
		return false
	}
	_, err := git(ctx, dir, "cat-file", "-e", commit+"^{commit}")
	return err == nil
}

// gitChanged lists the files of the work tree that differ from commit:
// changed, added or deleted, staged or not (untracked files are not in
// commit, so they never look unchanged to a caller comparing with it).
func gitChanged(ctx context.Context, dir, commit string) (map[string]bool, error) {
	out, err := git(ctx, dir, "diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", commit, "--")
	if err != nil {
		return nil, err
	}
	changed := map[string]bool{}
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			changed[p] = true
		}
	}
	return changed, nil
}

// gitDirty lists (up to a few) paths of the work tree that differ from
// HEAD or are untracked and not ignored.
func gitDirty(ctx context.Context, dir string) ([]string, error) {
	out, err := git(ctx, dir, "status", "--porcelain=v1", "-z", "--untracked-files=normal", "--ignore-submodules=all")
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, e := range strings.Split(string(out), "\x00") {
		if len(e) > 3 {
			paths = append(paths, e[3:])
		}
	}
	return paths, nil
}

// RepoName names the repository at root in a team index: its `upstream`
// (else `origin`) remote as host/path ("github.com/acme/api", whatever the
// URL's scheme, user or credentials), else the directory's name. CI and
// developers' clones of one repository get the same name.
func RepoName(ctx context.Context, root string) string {
	for _, remote := range []string{"upstream", "origin"} {
		out, err := git(ctx, root, "remote", "get-url", remote)
		if err != nil {
			continue
		}
		if name := remoteName(strings.TrimSpace(string(out))); name != "" {
			return name
		}
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return filepath.Base(root)
	}
	return filepath.Base(abs)
}

// remoteName turns a remote's URL into host/path: credentials, port,
// scheme and a trailing .git dropped.
func remoteName(raw string) string {
	var host, p string
	switch {
	case strings.Contains(raw, "://"):
		u, err := url.Parse(raw)
		if err != nil {
			return ""
		}
		host, p = u.Hostname(), u.Path
	case strings.Contains(raw, ":") && !strings.HasPrefix(raw, "/"):
		// scp-like: user@host:path
		i := strings.IndexByte(raw, ':')
		host, p = raw[:i], raw[i+1:]
		if j := strings.LastIndexByte(host, '@'); j >= 0 {
			host = host[j+1:]
		}
	default:
		// A local path: its last element.
		return strings.TrimSuffix(path.Base(filepath.ToSlash(raw)), ".git")
	}
	p = strings.TrimSuffix(strings.Trim(p, "/"), ".git")
	if p == "" {
		return ""
	}
	if host == "" {
		return p
	}
	return strings.ToLower(host) + "/" + p
}
