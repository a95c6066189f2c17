package proctest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// Agentd returns an agentd binary built from this module for the test
// process (with the race detector if the test has it), built the first
// time it is asked for; Cleanup, from the package's TestMain, removes it.
func Agentd(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "agentd-test-bin")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "agentd")
		args := []string{"build", "-o", binPath}
		cgo := "CGO_ENABLED=0" // as the README's install line builds it
		if raceEnabled {
			args, cgo = append(args, "-race"), "CGO_ENABLED=1" // the race detector needs cgo
		}
		cmd := exec.Command("go", append(args, "github.com/agentd/agentd/cmd/agentd")...)
		cmd.Env = append(os.Environ(), cgo)
		out, err := cmd.CombinedOutput()
		if err != nil {
			binErr = errors.New(string(out))
		}
	})
	if binErr != nil {
		t.Fatalf("building agentd: %v", binErr)
	}
	return binPath
}

// Cleanup removes what the package's tests built (Agentd's binary). Call
// it from TestMain after m.Run.
func Cleanup() {
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
}
