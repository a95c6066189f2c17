package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The repository the attacks aim at: a superproject with a submodule
// (whose git directory is .git/modules/lib) and a committed file.
func gitWorld(t *testing.T) (ws string, env []string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is needed")
	}
	base := t.TempDir()
	ws, lib := filepath.Join(base, "ws"), filepath.Join(base, "lib")
	for _, d := range []string{ws, lib} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		gitIn(t, d, "init", "-q", "-b", "main")
		if err := os.WriteFile(filepath.Join(d, "a.txt"), []byte("a\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		gitIn(t, d, "add", "a.txt")
		gitIn(t, d, "commit", "-q", "-m", "first")
	}
	gitIn(t, ws, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "lib")
	gitIn(t, ws, "commit", "-q", "-m", "lib")
	return ws, append([]string{"PATH=/usr/bin:/bin", "HOME=" + filepath.Join(base, "home")}, gitIdentity...)
}

// userGit runs git as the user does later, unconfined, in dir, and says
// whether anything a command planted ran (the marker file exists).
func userGit(t *testing.T, dir, marker string, args ...string) bool {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), gitIdentity...)
	out, _ := cmd.CombinedOutput()
	_, err := os.Stat(marker)
	if err == nil {
		t.Logf("git %v ran the planted code:\n%s", args, out)
	}
	return err == nil
}

// Issue 24's attack on the git directory: a command writes .git/commondir
// (git then takes the configuration and hooks from a directory the command
// controls), or renames .git/modules and recreates a submodule's config,
// or plants info/attributes with a filter, or a hook; the user's own `git
// status` and `git commit` then run the command's code. Any command finds
// the whole git directory read-only; git itself (Spec.Git) may write
// objects, refs and the index, not what decides what git runs, and a
// guarded name it created anyway is gone when the command ends.
func TestGitDirectoryAttacks(t *testing.T) {
	requireSandbox(t)
	for _, git := range []bool{false, true} {
		t.Run(map[bool]string{false: "any-command", true: "git-itself"}[git], func(t *testing.T) {
			ws, env := gitWorld(t)
			marker := filepath.Join(t.TempDir(), "pwned")
			evilCfg := "[core]\n\tfsmonitor = touch " + marker + "\n[filter \"x\"]\n\tclean = touch " + marker + "\n"
			if err := os.MkdirAll(filepath.Join(ws, "evil", "hooks"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(ws, "evil", "config"), []byte(evilCfg), 0o644); err != nil {
				t.Fatal(err)
			}
			hook := "#!/bin/sh\ntouch " + marker + "\n"
			if err := os.WriteFile(filepath.Join(ws, "evil", "hooks", "pre-commit"), []byte(hook), 0o755); err != nil {
				t.Fatal(err)
			}
			sh := func(script string) result {
				return run(t, modes[0], Spec{Profile: WorkspaceWrite, Workspace: ws, Args: []string{"bash", "-c", script}, Env: env, Git: git})
			}
			attacks := []string{
				`echo "$PWD/evil" > .git/commondir`,
				`echo "$PWD/evil" > .git/modules/lib/commondir`,
				`mv .git/modules .git/m2 && mkdir -p .git/modules/lib && cp -r .git/m2/lib/. .git/modules/lib/ && cp evil/config .git/modules/lib/config`,
				`mv .git/modules/lib .git/modules/lib2 && cp -r .git/modules/lib2 .git/modules/lib && cp evil/config .git/modules/lib/config`,
				`cat evil/config >> .git/modules/lib/config`,
				`cat evil/config >> .git/config`,
				`mkdir -p .git/info && echo '* filter=x' > .git/info/attributes`,
				`mv .git/info .git/info2; mkdir -p .git/info && echo '* filter=x' > .git/info/attributes`,
				`cp evil/hooks/pre-commit .git/hooks/pre-commit`,
				`mv .git/hooks .git/h2; cp -r evil/hooks .git/hooks`,
				`printf '[extensions]\n' >/dev/null; cp evil/config .git/config.worktree`,
				`mv .git .git2 && mkdir .git && cp -r .git2/. .git/ && cp evil/config .git/config`,
			}
			var removed []string
			for _, a := range attacks {
				c, err := Command(t.Context(), Spec{Profile: WorkspaceWrite, Workspace: ws, Args: []string{"bash", "-c", a}, Env: env, Git: git})
				if err != nil {
					t.Fatal(err)
				}
				var out strings.Builder
				c.Stdout, c.Stderr = &out, &out
				if err := c.Run(); err != nil {
					t.Fatal(err)
				}
				removed = append(removed, c.Removed()...)
				t.Logf("%s: exit %d %s", a, c.ExitCode(), strings.TrimSpace(out.String()))
			}
			if !git && len(removed) > 0 {
				t.Errorf("any command: nothing should have been created to remove: %v", removed)
			}
			if git && !slices.Contains(removed, filepath.Join(ws, ".git", "commondir")) {
				t.Errorf("git itself: the commondir it wrote was not removed: %v", removed)
			}
			for _, name := range []string{".git/commondir", ".git/modules/lib/commondir", ".git/config.worktree", ".git/info/attributes", ".git/hooks/pre-commit", ".git2", ".git/m2"} {
				if _, err := os.Lstat(filepath.Join(ws, name)); err == nil {
					t.Errorf("%s exists after the commands", name)
				}
			}
			if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("changed\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if userGit(t, ws, marker, "status") || userGit(t, filepath.Join(ws, "lib"), marker, "status") ||
				userGit(t, ws, marker, "commit", "-qam", "user's commit") {
				t.Fatal("the user's own git ran a command's code")
			}
			// The legitimate work of git itself, in the superproject and in
			// the submodule.
			r := sh(`echo b > b.txt && git add b.txt && git commit -q -m b && git checkout -q -b topic && echo c > c.txt && git add c.txt && ` +
				`git commit -q -m c && git checkout -q main && git merge -q --no-edit topic && echo d >> a.txt && git stash -q && git stash pop -q && ` +
				`git -C lib checkout -q -b fix && echo x > lib/x.txt && git -C lib add x.txt && git -C lib commit -q -m x && git tag v1 && git log --oneline | wc -l`)
			switch {
			case git && (r.code != 0 || strings.TrimSpace(r.out) != "5"):
				t.Errorf("git itself could not work: exit %d:\n%s", r.code, r.out)
			case !git && r.code == 0:
				t.Errorf("a command that is not git itself committed:\n%s", r.out)
			}
		})
	}
}
