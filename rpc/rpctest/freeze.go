package rpctest

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// FreezeTree makes dir and everything under it immutable (chattr -R +i):
// as root, permissions do not stop a write, and a read-only remount is
// refused while the daemon holds files open for writing, but an immutable
// file refuses writes from anyone, through files already open too, on
// file systems that honour it (ext4 does; tmpfs lets open files be
// written, so the test is skipped there: a probe in dir finds out). The
// returned func undoes it; so does the test's cleanup.
func FreezeTree(t testing.TB, dir string) func() {
	t.Helper()
	probe := filepath.Join(dir, ".freeze-probe")
	if err := os.WriteFile(probe, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(probe, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("chattr", "+i", probe).CombinedOutput()
	var werr error
	if err == nil {
		_, werr = f.WriteString("x")
		_ = exec.Command("chattr", "-i", probe).Run()
	}
	f.Close()
	os.Remove(probe)
	if err != nil {
		t.Skipf("chattr +i is not available here: %v %s", err, out)
	}
	if werr == nil {
		t.Skip("chattr +i does not stop writes to open files on this file system")
	}
	var once sync.Once
	thaw := func() {
		once.Do(func() {
			if out, err := exec.Command("chattr", "-R", "-i", dir).CombinedOutput(); err != nil {
				t.Errorf("chattr -R -i: %v %s", err, out)
			}
		})
	}
	t.Cleanup(thaw)
	if out, err := exec.Command("chattr", "-R", "+i", dir).CombinedOutput(); err != nil {
		t.Fatalf("chattr -R +i: %v %s", err, out)
	}
	return thaw
}
