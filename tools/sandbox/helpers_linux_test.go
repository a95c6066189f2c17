package sandbox

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	scaled "github.com/agentd/agentd/internal/await"
)

// result is what a command did.
type result struct {
	out  string
	code int
	conf Confinement
	err  error // from Start: the command did not run
}

// mode is how much of the sandbox a test uses: everything this machine
// offers, or Landlock alone (as on a machine without user namespaces).
type mode struct {
	name   string
	status func() Status
}

var modes = []mode{
	{"namespaces", Check},
	{"landlock-only", landlockOnly},
}

func landlockOnly() Status {
	st := Check()
	st.Namespaces, st.NetNamespace, st.PrivateProc = false, false, false
	return st
}

func requireSandbox(t testing.TB) Status {
	t.Helper()
	st := Check()
	if !st.Supports(WorkspaceWrite) {
		t.Fatalf("this kernel should offer the whole sandbox (Landlock ABI 7, user namespaces):\n%s", st)
	}
	return st
}

func run(t testing.TB, m mode, spec Spec) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := Command(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	st := m.status()
	c.status = &st
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	c.WaitDelay = time.Second
	if err := c.Start(); err != nil {
		return result{err: err, code: -1}
	}
	_ = c.Wait()
	return result{out: out.String(), code: c.ExitCode(), conf: c.Confinement()}
}

// fixture is a workspace with a repository, a nested one and .agentd/, a
// directory outside it, and a fake HOME with an ssh key.
type fixture struct {
	ws, out, home string
	env           []string
}

const sshKey = "-----BEGIN FAKE KEY----- 8d2f7c1e"

func newFixture(t testing.TB) *fixture { return newFixtureIn(t, t.TempDir()) }

// visibleTempDir is a temporary directory outside every directory the
// sandbox masks (it lives next to the test's sources), like a workspace
// under /work or /srv: there the workspace and the outside share one
// mount, so what refuses a write is Landlock alone, not a mount boundary.
func visibleTempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp(".", ".sandbox-test-")
	if err != nil {
		t.Skipf("no temporary directory next to the sources: %v", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(abs) })
	return abs
}

func newFixtureIn(t testing.TB, base string) *fixture {
	t.Helper()
	f := &fixture{ws: filepath.Join(base, "ws"), out: filepath.Join(base, "outside"), home: filepath.Join(base, "home")}
	files := map[string]string{
		"ws/README":                  "hello from the workspace\n",
		"ws/.git/HEAD":               "ref: refs/heads/main\n",
		"ws/.git/config":             "[core]\n\tbare = false\n",
		"ws/.git/hooks/README":       "hooks\n",
		"ws/.git/modules/lib/HEAD":   "ref: refs/heads/main\n",
		"ws/.git/modules/lib/config": "[core]\n",
		"ws/sub/.git/HEAD":           "ref: refs/heads/main\n",
		"ws/sub/.git/config":         "[core]\n",
		"ws/.agentd/rules.json":      `{"rules": []}`,
		"outside/existing":           "outside\n",
		"home/.ssh/id_ed25519":       sshKey + "\n",
		"home/.config/gh/hosts.yml":  "oauth_token: gho_fake\n",
		"home/go/pkg/mod/cache/x.go": "package x\n",
	}
	for name, content := range files {
		p := filepath.Join(base, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f.env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + f.home, "LANG=C.UTF-8"}
	return f
}

func (f *fixture) spec(p Profile, script string) Spec {
	return Spec{Profile: p, Workspace: f.ws, Args: []string{"bash", "-c", script}, Env: f.env,
		Read: []string{f.out}, Protect: []string{filepath.Join(f.ws, "sub", ".git")}}
}

// listener records what arrives on a TCP or UDP port of 127.0.0.1. A
// negative check sends a sentinel after the command and reads up to it,
// so that "nothing arrived" is a fact, not a guess after a sleep.
type listener struct {
	addr string
	udp  bool
	mu   sync.Mutex
	got  []string
	cond *sync.Cond
}

func listen(t testing.TB, udp bool) *listener {
	t.Helper()
	l := &listener{udp: udp}
	l.cond = sync.NewCond(&l.mu)
	if udp {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pc.Close() })
		l.addr = pc.LocalAddr().String()
		go func() {
			buf := make([]byte, 4096)
			for {
				n, _, err := pc.ReadFrom(buf)
				if err != nil {
					return
				}
				l.record(string(buf[:n]))
			}
		}()
		return l
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	l.addr = ln.Addr().String()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			buf := new(bytes.Buffer)
			_, _ = buf.ReadFrom(c)
			c.Close()
			l.record(buf.String())
		}
	}()
	return l
}

func (l *listener) record(s string) {
	l.mu.Lock()
	l.got = append(l.got, strings.TrimSpace(s))
	l.mu.Unlock()
	l.cond.Broadcast()
}

func (l *listener) port() string { _, p, _ := net.SplitHostPort(l.addr); return p }

// received returns what arrived before a sentinel sent now.
func (l *listener) received(t testing.TB) []string {
	t.Helper()
	network := "tcp"
	if l.udp {
		network = "udp"
	}
	c, err := net.Dial(network, l.addr)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = c.Write([]byte("sentinel"))
	c.Close()
	deadline := time.AfterFunc(10*time.Second, func() { l.cond.Broadcast() })
	defer deadline.Stop()
	start := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		for i, s := range l.got {
			if s == "sentinel" {
				return append([]string(nil), l.got[:i]...)
			}
		}
		if time.Since(start) > 10*time.Second {
			t.Fatal("the sentinel never arrived")
		}
		l.cond.Wait()
	}
}

// await polls cond until it holds or the deadline passes.
func await(t testing.TB, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(scaled.Timeout(d)) // longer on a loaded machine
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// processesWith lists the pids whose command line contains marker.
func processesWith(marker string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if strings.Contains(strings.ReplaceAll(string(data), "\x00", " "), marker) {
			if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && isZombie(st) {
				continue
			}
			pids = append(pids, pid)
		}
	}
	return pids
}

func isZombie(stat []byte) bool {
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

func isUnavailable(err error) bool { return errors.Is(err, ErrUnavailable) }
