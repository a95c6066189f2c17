package sandbox

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The usual case is a daemon run by a user without capabilities, which
// keeps across the entry point's exec only the ambient capabilities it asked
// for. Run as root, this test runs a copy of the test binary as nobody.
func TestAsAnUnprivilegedUser(t *testing.T) {
	requireSandbox(t)
	if os.Getuid() != 0 {
		t.Skip("switching to another user needs root; as a user, the other tests already cover this case")
	}
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "sandbox.test")
	copyFile(t, exe, bin, 0o755)
	ws := filepath.Join(dir, "ws")
	for _, d := range []string{ws + "/.git/hooks", dir + "/home"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(ws+"/.git/config", []byte("[core]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{ws, ws + "/.git", ws + "/.git/hooks", ws + "/.git/config", dir + "/home"} {
		if err := os.Chown(p, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "-test.run=^TestHelperUnprivileged$", "-test.v")
	cmd.Env = []string{"AGENTD_SANDBOX_UNPRIV=" + ws, "PATH=/usr/bin:/bin", "HOME=" + dir + "/home"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "UNPRIVILEGED-OK") {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// TestHelperUnprivileged is not a test: TestAsAnUnprivilegedUser runs it as
// nobody.
func TestHelperUnprivileged(t *testing.T) {
	ws := os.Getenv("AGENTD_SANDBOX_UNPRIV")
	if ws == "" {
		t.Skip("a helper process for TestAsAnUnprivilegedUser")
	}
	st := Check()
	if !st.Supports(WorkspaceWrite) {
		t.Fatalf("as uid %d:\n%s", os.Getuid(), st)
	}
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + os.Getenv("HOME")}
	sh := func(p Profile, script string) result {
		return run(t, modes[0], Spec{Profile: p, Workspace: ws, Args: []string{"bash", "-c", script}, Env: env})
	}
	if r := sh(WorkspaceWrite, "id -u; echo ok > f && cat f"); r.err != nil || r.code != 0 || !strings.Contains(r.out, "65534\nok") {
		t.Fatalf("a write in the workspace: %v exit %d\n%s", r.err, r.code, r.out)
	}
	if r := sh(WorkspaceWrite, "echo x >> .git/config"); r.err != nil || r.code == 0 {
		t.Fatalf(".git/config was writable: %v\n%s", r.err, r.out)
	}
	if r := sh(Read, "echo x > g"); r.err != nil || r.code == 0 {
		t.Fatalf("a write in read: %v\n%s", r.err, r.out)
	}
	if r := sh(Read, "grep -E '^Cap(Eff|Prm|Bnd|Amb)' /proc/self/status"); strings.Count(r.out, "0000000000000000") != 4 {
		t.Fatalf("capabilities left:\n%s", r.out)
	}
	fmt.Println("UNPRIVILEGED-OK")
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
