package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentd/agentd/tools/sandbox"
)

// errOutside is wrapped by every confinement refusal so callers can tell it
// from an I/O error.
var errOutside = errors.New("outside the workspace")

// resolvePath confines p to root. p may be relative to root or absolute; the
// file need not exist. Symlinks are resolved on the deepest existing prefix,
// so a link that points out of the workspace is refused even when the final
// component is still to be created. It returns the resolved absolute path and
// the workspace-relative path with forward slashes.
func resolvePath(root, p string) (abs, rel string, err error) {
	root, err = canonicalRoot(root)
	if err != nil {
		return "", "", err
	}
	if p == "" {
		p = "."
	}
	cand := filepath.Clean(p)
	if !filepath.IsAbs(cand) {
		cand = filepath.Join(root, cand)
	}
	if !within(root, cand) {
		return "", "", fmt.Errorf("path %q is %w (%s); use a path inside it", p, errOutside, root)
	}
	resolved, err := resolveExisting(cand)
	if err != nil {
		return "", "", fmt.Errorf("resolving %q: %w", p, err)
	}
	if !within(root, resolved) {
		return "", "", fmt.Errorf("path %q resolves through a symlink to %s, %w (%s)", p, resolved, errOutside, root)
	}
	return resolved, relPath(root, resolved), nil
}

// canonicalRoot makes root absolute with symlinks resolved, so comparisons
// with resolved paths are meaningful even if the caller did not do it.
func canonicalRoot(root string) (string, error) {
	if root == "" {
		return "", errors.New("no workspace root")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("workspace root: %w", err)
	}
	r, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("workspace root: %w", err)
	}
	return r, nil
}

// resolveExisting evaluates symlinks on the longest existing prefix of p and
// appends the rest. A dangling symlink in the path is refused because writing
// through it would create a file wherever it points.
func resolveExisting(p string) (string, error) {
	var rest []string
	cur := p
	for {
		r, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(append([]string{r}, rest...)...), nil
		}
		if _, lerr := os.Lstat(cur); lerr == nil {
			return "", fmt.Errorf("%s is a broken symlink: %w", cur, err)
		} else if !errors.Is(lerr, fs.ErrNotExist) {
			return "", lerr
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return "", err
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
		cur = parent
	}
}

// within reports whether p is root or below it (both clean and absolute).
func within(root, p string) bool {
	r, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return r == "." || (r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)))
}

// relPath is p relative to root with forward slashes, "." for the root.
func relPath(root, p string) string {
	r, err := filepath.Rel(root, p)
	if err != nil {
		return filepath.ToSlash(p)
	}
	return filepath.ToSlash(r)
}

// confine is resolvePath for tools: a refusal comes back as a Result the
// model reads.
func confine(env *Env, p string) (abs, rel string, res *Result) {
	abs, rel, err := resolvePath(env.Root, p)
	if err != nil {
		return "", "", Errorf("%v", err)
	}
	if d := env.privateDir(abs); d != "" {
		return "", "", Errorf("%s is inside %s, agentd's own state and configuration (sessions, transcripts, rules): the tools never read or write there; use a path of the project", rel, d)
	}
	return abs, rel, nil
}

// Workspace files are read and written at the moment of use relative to a
// handle on the workspace directory (sandbox.Root: openat2 with
// RESOLVE_BENEATH, or one O_NOFOLLOW component at a time), not by the path
// Prepare resolved: a directory swapped for a symlink between the user's
// approval and the write makes the write fail (ErrEscapes) instead of
// landing outside.

// inWorkspace opens root and names abs beneath it. abs is a path confine
// resolved (absolute, inside root); the caller closes the handle.
func inWorkspace(root, abs string) (*sandbox.Root, string, error) {
	croot, err := canonicalRoot(root)
	if err != nil {
		return nil, "", err
	}
	rel, err := filepath.Rel(croot, abs)
	if err != nil || !within(croot, abs) {
		return nil, "", fmt.Errorf("path %q is %w (%s)", abs, errOutside, croot)
	}
	r, err := sandbox.OpenRoot(croot)
	if err != nil {
		return nil, "", fmt.Errorf("workspace root: %w", err)
	}
	return r, filepath.ToSlash(rel), nil
}

// diskRead reads abs beneath the workspace root.
func diskRead(root, abs string) ([]byte, error) {
	r, rel, err := inWorkspace(root, abs)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.ReadFile(rel)
}

// diskStat describes abs beneath the workspace root, following symlinks
// that stay inside.
func diskStat(root, abs string) (fs.FileInfo, error) {
	r, rel, err := inWorkspace(root, abs)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.Stat(rel)
}

// errProtected refuses a file tool's write into a repository's own files
// or the agent's settings, at the moment of use, whatever the policy said.
var errProtected = errors.New("the file tools never write inside a .git directory (of the workspace or a nested repository) or .agentd/; the repository changes only through git")

// protectedName reports whether a workspace-relative name is inside a git
// directory (any .git component: a nested repository's config or hooks
// would run code the next time git runs there) or the root's .agentd/.
func protectedName(rel string) bool {
	parts := strings.Split(rel, "/")
	return slices.Contains(parts, ".git") || parts[0] == ".agentd"
}

// diskWrite replaces abs beneath the workspace root atomically, making its
// missing parent directories; an existing file keeps its permissions.
func diskWrite(root, abs string, data []byte, mode fs.FileMode) error {
	r, rel, err := inWorkspace(root, abs)
	if err != nil {
		return err
	}
	defer r.Close()
	if protectedName(rel) {
		return errProtected
	}
	if dir := path.Dir(rel); dir != "." {
		if err := r.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	return r.WriteFile(rel, data, mode)
}

// diskRemove removes abs beneath the workspace root (a symlink itself,
// never its target); a missing file is fine.
func diskRemove(root, abs string) error {
	r, rel, err := inWorkspace(root, abs)
	if err != nil {
		return err
	}
	defer r.Close()
	if protectedName(rel) {
		return errProtected
	}
	if err := r.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// checkBeneath says whether abs still resolves inside the workspace now
// (and, for a write, is not protected): the check before the editor reads
// or writes, which it does by path.
func checkBeneath(root, abs string, write bool) error {
	r, rel, err := inWorkspace(root, abs)
	if err != nil {
		return err
	}
	defer r.Close()
	if write && protectedName(rel) {
		return errProtected
	}
	if _, err := r.Stat(path.Dir(rel)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// OpenRegularFile opens name (following links) for reading if it is a
// regular file, never waiting on a named pipe.
func OpenRegularFile(name string) (*os.File, error) { return sandbox.OpenRegular(name) }

// ReadRegularFile reads name, at most limit bytes, if it is a regular
// file (see OpenRegularFile).
func ReadRegularFile(name string, limit int64) ([]byte, error) {
	return sandbox.ReadRegular(name, limit)
}

// SandboxPathVariables are the environment variables the kernel sandbox
// takes read grants from (HOME, PATH, the toolchains'): an environment
// someone other than the user wrote must not set them.
func SandboxPathVariables() []string { return sandbox.PathVariables() }

// OpenWorkspaceFile opens the workspace file rel (slash-separated) for
// reading, beneath the workspace handle, if it is a regular file: for the
// daemon's own reads of files a command may have made (the instruction
// files), which must neither follow a link out nor wait on a named pipe.
func OpenWorkspaceFile(root, rel string) (*os.File, error) {
	croot, err := canonicalRoot(root)
	if err != nil {
		return nil, err
	}
	r, err := sandbox.OpenRoot(croot)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.OpenRegular(path.Clean(rel))
}

// ReadWorkspaceFile reads the workspace file rel (slash-separated) beneath
// the workspace handle, with its description: for the agent's own reads
// (a run's final diff), which must not follow a link out either.
func ReadWorkspaceFile(root, rel string, limit int64) ([]byte, fs.FileInfo, error) {
	abs := filepath.Join(root, filepath.FromSlash(rel))
	croot, err := canonicalRoot(root)
	if err == nil {
		abs = filepath.Join(croot, filepath.FromSlash(rel))
	}
	fi, err := diskStat(root, abs)
	if err != nil {
		return nil, nil, err
	}
	if fi.Size() > limit {
		return nil, fi, nil
	}
	b, err := diskRead(root, abs)
	return b, fi, err
}
