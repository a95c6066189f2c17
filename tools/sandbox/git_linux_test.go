package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func syscallMkfifo(p string) error { return syscall.Mkfifo(p, 0o644) }

func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), gitIdentity...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

var gitIdentity = []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
	"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1"}

// Real git in workspace-write. A command that is git itself (Spec.Git)
// commits, in a plain repository and in a linked worktree (whose git
// directories live outside the workspace), while the configuration and
// hooks stay read-only; any other command cannot commit at all (the whole
// git directory is read-only).
func TestGitInWorkspaceWrite(t *testing.T) {
	requireSandbox(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is needed")
	}
	base := t.TempDir()
	main := filepath.Join(base, "main")
	if err := os.MkdirAll(main, 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn(t, main, "init", "-q", "-b", "main")
	gitIn(t, main, "commit", "-q", "--allow-empty", "-m", "first")
	gitIn(t, main, "worktree", "add", "-q", "-b", "side", filepath.Join(base, "wt"))
	for _, ws := range []string{main, filepath.Join(base, "wt")} {
		t.Run(filepath.Base(ws), func(t *testing.T) {
			env := append([]string{"PATH=/usr/bin:/bin", "HOME=" + filepath.Join(base, "home")}, gitIdentity...)
			sh := func(git bool, script string) result {
				return run(t, modes[0], Spec{Profile: WorkspaceWrite, Workspace: ws, Args: []string{"bash", "-c", script}, Env: env, Git: git})
			}
			if r := sh(false, "echo change > file.txt && git add file.txt && git commit -q -m change"); r.err != nil || r.code == 0 {
				t.Errorf("a command that is not git itself committed: %v, exit %d:\n%s", r.err, r.code, r.out)
			}
			if r := sh(true, "git add file.txt && git commit -q -m change && git log --oneline | wc -l"); r.err != nil || r.code != 0 || strings.TrimSpace(r.out) != "2" {
				t.Fatalf("commit in the sandbox: %v, exit %d:\n%s", r.err, r.code, r.out)
			}
			for _, git := range []bool{false, true} {
				r := sh(git, "git config core.fsmonitor 'touch pwned'")
				if r.code == 0 {
					t.Errorf("git=%v: git config succeeded:\n%s", git, r.out)
				}
				r = sh(git, "git config --worktree core.fsmonitor 'touch pwned' || git config --local core.hooksPath .")
				if r.code == 0 {
					t.Errorf("git=%v: worktree config succeeded:\n%s", git, r.out)
				}
				if r = sh(git, `gd=$(git rev-parse --git-common-dir) && echo 'touch pwned' > "$gd/hooks/post-commit"`); r.code == 0 {
					t.Errorf("git=%v: wrote a hook:\n%s", git, r.out)
				}
				if r = sh(git, `echo 'gitdir: /tmp/evil' > .git`); r.code == 0 {
					t.Errorf("git=%v: rewrote .git:\n%s", git, r.out)
				}
			}
			out, _ := exec.Command("git", "-C", ws, "config", "--get", "core.fsmonitor").Output()
			if len(out) > 0 {
				t.Errorf("core.fsmonitor is set: %s", out)
			}
		})
	}
}

// A .git file that a command wrote in a workspace that was no repository
// ("gitdir: /anywhere") makes nothing outside writable: only a git
// directory that git made for this workspace (a linked worktree's, which
// names it back; a submodule's, whose core.worktree names it) is. A
// submodule still commits in workspace-write; a .git file that is a named
// pipe is refused, not waited on.
func TestGitFileFromACommand(t *testing.T) {
	requireSandbox(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is needed")
	}
	base := t.TempDir()
	ws, outside := filepath.Join(base, "ws"), filepath.Join(base, "outside")
	for _, d := range []string{ws, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := append([]string{"PATH=/usr/bin:/bin", "HOME=" + filepath.Join(base, "home")}, gitIdentity...)
	sh := func(ws, script string) result {
		return run(t, modes[0], Spec{Profile: WorkspaceWrite, Workspace: ws, Args: []string{"bash", "-c", script}, Env: env, Git: true})
	}
	if r := sh(ws, "printf 'gitdir: "+outside+"\\n' > .git"); r.code != 0 {
		t.Fatalf("writing .git: %d %s", r.code, r.out)
	}
	r := sh(ws, "echo pwned > "+outside+"/pwned; cat .git")
	if _, err := os.Stat(filepath.Join(outside, "pwned")); err == nil {
		t.Errorf("a .git file a command wrote made %s writable:\n%s", outside, r.out)
	}

	// A submodule's git directory is outside the submodule's worktree.
	super, lib := filepath.Join(base, "super"), filepath.Join(base, "lib")
	for _, d := range []string{super, lib} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		gitIn(t, d, "init", "-q", "-b", "main")
		gitIn(t, d, "commit", "-q", "--allow-empty", "-m", "first")
	}
	gitIn(t, super, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "lib")
	if r := sh(filepath.Join(super, "lib"), "echo change > f && git add f && git commit -q -m change && git log --oneline | wc -l"); r.code != 0 || strings.TrimSpace(r.out) != "2" {
		t.Errorf("commit in a submodule: exit %d:\n%s", r.code, r.out)
	}

	fifo := filepath.Join(base, "fifo")
	if err := os.MkdirAll(fifo, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscallMkfifo(filepath.Join(fifo, ".git")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if c, err := Command(ctx, Spec{Profile: WorkspaceWrite, Workspace: fifo, Args: []string{"true"}, Env: env}); err == nil {
		if err := c.Start(); err == nil {
			_ = c.Wait()
			t.Errorf("a command ran with .git a named pipe")
		}
	}
	if ctx.Err() != nil {
		t.Errorf("planning around a .git pipe hung")
	}
}

// NestedGitDirs finds nested repositories and submodule links, not the
// root's own .git, and does not descend into git directories.
func TestNestedGitDirs(t *testing.T) {
	ws := t.TempDir()
	for _, d := range []string{".git/modules/x/.git", "a/.git/objects", "a/b/c/.git", "vendor/lib/.git"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "sub.git"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, "sm"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "sm", ".git"), []byte("gitdir: ../.git/modules/sm\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := NestedGitDirs(context.Background(), ws)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		got[i], _ = filepath.Rel(ws, got[i])
	}
	slices.Sort(got)
	want := []string{"a/.git", "a/b/c/.git", "sm/.git", "vendor/lib/.git"}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// The Go toolchain works confined: `go vet` in read and `go build` and
// `go test` (which runs what it builds in TMPDIR) in workspace-write, given
// a writable build cache (Spec.Write). The daemon should give commands a
// cache of their own, which a command cannot use to poison the user's
// builds; this test shares the user's, to run warm.
func TestGoToolchain(t *testing.T) {
	requireSandbox(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	out, err := exec.Command(goBin, "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	ws, cache := t.TempDir(), strings.TrimSpace(string(out))
	for name, content := range map[string]string{
		"go.mod":    "module example.com/m\n\ngo 1.21\n",
		"m.go":      "package m\n\nfunc Add(a, b int) int { return a + b }\n",
		"m_test.go": "package m\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal()\n\t}\n}\n",
	} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"PATH=" + filepath.Dir(goBin) + ":/usr/bin:/bin", "HOME=" + os.Getenv("HOME"), "GOCACHE=" + cache,
		"GOFLAGS=-mod=mod", "GOPROXY=off", "GOTOOLCHAIN=local"}
	for _, tc := range []struct {
		profile Profile
		script  string
	}{{Read, "go vet ./..."}, {WorkspaceWrite, "go build ./... && go test -count=1 ./..."}} {
		r := run(t, modes[0], Spec{Profile: tc.profile, Workspace: ws, Args: []string{"bash", "-c", tc.script}, Env: env, Write: []string{cache}})
		if r.err != nil || r.code != 0 {
			t.Errorf("%s %q: %v exit %d\n%s", tc.profile, tc.script, r.err, r.code, r.out)
		}
	}
}
