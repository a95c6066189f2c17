package testcache

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Several processes asking for one cache at once: one fills it, all get
// it filled. The processes are this test binary run again (helperProcess).
func TestOneFillAcrossProcesses(t *testing.T) {
	base := t.TempDir()
	t.Setenv(BaseEnv, base)
	const n = 4
	cmds := make([]*exec.Cmd, n)
	for i := range cmds {
		cmds[i] = exec.Command(os.Args[0], "-test.run", "^TestHelperProcess$")
		cmds[i].Env = append(os.Environ(), "TESTCACHE_HELPER=1")
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	dir, err := Path("thing", "v1")
	if err != nil {
		t.Fatal(err)
	}
	fills, err := os.ReadFile(filepath.Join(dir, "fills"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(fills), "\n"); got != 1 {
		t.Fatalf("filled %d times by %d processes; want once:\n%s", got, n, fills)
	}
}

func TestHelperProcess(t *testing.T) {
	if os.Getenv("TESTCACHE_HELPER") != "1" {
		t.Skip("run by TestOneFillAcrossProcesses")
	}
	dir := Dir(t, "thing", "v1", func(dir string) error {
		f, err := os.OpenFile(filepath.Join(dir, "fills"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		time.Sleep(50 * time.Millisecond) // room for the others to try
		_, err = f.WriteString(strconv.Itoa(os.Getpid()) + "\n")
		return err
	})
	if _, err := os.Stat(filepath.Join(dir, "fills")); err != nil {
		t.Fatal(err)
	}
}

// A fill that failed leaves nothing the next caller takes for complete;
// another key is another directory.
func TestFailedFillIsRedone(t *testing.T) {
	t.Setenv(BaseEnv, t.TempDir())
	var calls atomic.Int32
	_, err := Ensure("thing", "v1", func(dir string) error {
		calls.Add(1)
		os.WriteFile(filepath.Join(dir, "half"), nil, 0o644)
		return errors.New("network down")
	})
	if err == nil {
		t.Fatal("a failed fill returned no error")
	}
	dir, err := Ensure("thing", "v1", func(dir string) error {
		calls.Add(1)
		if _, err := os.Stat(filepath.Join(dir, "half")); err == nil {
			t.Error("the second fill found the first one's leftovers")
		}
		return nil
	})
	if err != nil || calls.Load() != 2 {
		t.Fatalf("second fill: %v, %d calls", err, calls.Load())
	}
	other, _ := Path("thing", "v2")
	if other == dir {
		t.Fatal("two keys share a directory")
	}
}
