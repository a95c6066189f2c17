package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	scaled "github.com/agentd/agentd/internal/await"
)

// TestHelperServe is not a test: the session tests run the test binary in
// the sandbox as a server on 127.0.0.1 that greets whoever connects.
func TestHelperServe(t *testing.T) {
	if os.Getenv("AGENTD_SANDBOX_SERVE") == "" {
		t.Skip("a helper process for the session network tests")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("listen failed:", err)
		os.Exit(1)
	}
	fmt.Printf("listening %d\n", ln.Addr().(*net.TCPAddr).Port)
	for {
		c, err := ln.Accept()
		if err != nil {
			os.Exit(1)
		}
		fmt.Fprintf(c, "hello from %s\n", os.Getenv("AGENTD_SANDBOX_SERVE"))
		c.Close()
	}
}

// server starts the helper server in session as a long-lived command (as a
// background process would be) and returns its port.
func server(t *testing.T, f *fixture, session string) int {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{Profile: Read, Workspace: f.ws, Session: session, Read: []string{exe},
		Args: []string{exe, "-test.run=^TestHelperServe$"}, Env: append(f.env, "AGENTD_SANDBOX_SERVE="+session)}
	ctx, cancel := context.WithCancel(context.Background())
	c, err := Command(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	c.Stdout, c.Stderr = pw, pw
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	if !c.Confinement().SessionNetwork {
		t.Fatalf("the server is not in its session's network: %+v", c.Confinement())
	}
	t.Cleanup(func() {
		cancel()
		_ = c.Wait()
		pw.Close()
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
	}()
	select {
	case line := <-lines:
		port, err := strconv.Atoi(strings.TrimPrefix(line, "listening "))
		if err != nil {
			t.Fatalf("the server says %q", line)
		}
		return port
	case <-time.After(scaled.Timeout(20 * time.Second)):
		t.Fatal("the server never said where it listens")
	}
	return 0
}

// connect is a command that reads what a server on 127.0.0.1:port says.
func connect(f *fixture, session string, network bool, port int) Spec {
	s := f.spec(Read, fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && cat <&3", port))
	s.Session, s.Network = session, network
	return s
}

// A session's commands share a network of their own: a server one of them
// runs on 127.0.0.1 answers the session's other commands, and nobody else:
// not another session, not a command granted the network (the host's
// network), not the host. Binding and connecting on the loopback needs no
// grant.
func TestSessionNetwork(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t)
	a, b := fmt.Sprintf("session-a-%d", time.Now().UnixNano()), fmt.Sprintf("session-b-%d", time.Now().UnixNano())
	t.Cleanup(func() { EndSession(a); EndSession(b) })
	port := server(t, f, a)

	for _, mode := range []string{"read", "workspace-write"} {
		spec := connect(f, a, false, port)
		if mode == "workspace-write" {
			spec.Profile = WorkspaceWrite
		}
		r := run(t, modes[0], spec)
		if r.err != nil || r.code != 0 || !strings.Contains(r.out, "hello from "+a) {
			t.Errorf("a %s command of the same session did not reach the server (exit %d, %v):\n%s", mode, r.code, r.err, r.out)
		}
		if !r.conf.SessionNetwork || r.conf.Network {
			t.Errorf("confinement %+v", r.conf)
		}
	}
	if r := run(t, modes[0], connect(f, b, false, port)); r.code == 0 || strings.Contains(r.out, "hello") {
		t.Errorf("another session reached the server (exit %d):\n%s", r.code, r.out)
	}
	if r := run(t, modes[0], connect(f, a, true, port)); strings.Contains(r.out, "hello from") {
		t.Errorf("a command with the network (the host's) reached the session's server:\n%s", r.out)
	}
	if r := run(t, modes[0], connect(f, "", false, port)); r.code == 0 || strings.Contains(r.out, "hello") {
		t.Errorf("a command of no session reached the server (exit %d):\n%s", r.code, r.out)
	}
	if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second); err == nil {
		greeting, _ := io.ReadAll(io.LimitReader(c, 64))
		c.Close()
		if strings.Contains(string(greeting), "hello from") {
			t.Errorf("the host reached the session's server: %q", greeting)
		}
	}
}

// Nothing leaves a session's network: the host's loopback (TCP and UDP)
// and any other address are out of reach, and the command is told the
// network is unreachable rather than left to time out.
func TestSessionNetworkIsLoopbackOnly(t *testing.T) {
	requireSandbox(t)
	session := fmt.Sprintf("session-%d", time.Now().UnixNano())
	t.Cleanup(func() { EndSession(session) })
	for _, udp := range []bool{false, true} {
		proto := map[bool]string{false: "tcp", true: "udp"}[udp]
		t.Run("host-"+proto, func(t *testing.T) {
			l := listen(t, udp)
			f := newFixture(t)
			spec := f.spec(Read, fmt.Sprintf("echo hello-%s > /dev/%s/127.0.0.1/%s", proto, proto, l.port()))
			spec.Session = session
			r := run(t, modes[0], spec)
			if r.err != nil {
				t.Fatal(r.err)
			}
			if got := l.received(t); len(got) > 0 {
				t.Errorf("the host's loopback received %q from a session's command", got)
			}
		})
	}
	f := newFixture(t)
	spec := f.spec(Read, "echo x > /dev/tcp/192.0.2.1/80")
	spec.Session = session
	r := run(t, modes[0], spec)
	if r.code == 0 || !strings.Contains(strings.ToLower(r.out), "network is unreachable") {
		t.Errorf("an outside address: exit %d:\n%s", r.code, r.out)
	}
	// UDP on the session's own loopback works, like TCP.
	spec = f.spec(Read, `exec 3<>/dev/udp/127.0.0.1/9 && echo ok`)
	spec.Session = session
	if r := run(t, modes[0], spec); r.code != 0 || r.out != "ok\n" {
		t.Errorf("UDP on the session's loopback: exit %d:\n%s", r.code, r.out)
	}
}

// TestHelperSessionDaemon is not a test: TestSessionNetworkEndsWithTheDaemon
// runs the test binary as a daemon with a session's command running, then
// kills it.
func TestHelperSessionDaemon(t *testing.T) {
	raw := os.Getenv("AGENTD_SANDBOX_SESSION_HELPER")
	if raw == "" {
		t.Skip("a helper process for TestSessionNetworkEndsWithTheDaemon")
	}
	var spec Spec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		t.Fatal(err)
	}
	c, err := Command(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	holders.mu.Lock()
	h := holders.sessions[spec.Session].h.proc.Pid
	holders.mu.Unlock()
	fmt.Printf("ready %d %d\n", h, c.Pid())
	time.Sleep(time.Hour) // until the test kills this process
}

// A daemon killed with SIGKILL leaves no session network behind: the
// holder and the commands in the namespace die with it.
func TestSessionNetworkEndsWithTheDaemon(t *testing.T) {
	requireSandbox(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	m := marker()
	spec := f.spec(Read, "exec sleep "+m)
	spec.Session = "s"
	raw, _ := json.Marshal(spec)
	daemon := exec.Command(exe, "-test.run=^TestHelperSessionDaemon$")
	daemon.Env = append(os.Environ(), "AGENTD_SANDBOX_SESSION_HELPER="+string(raw))
	daemon.Stderr = os.Stderr
	out, err := daemon.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	var holderPid, initPid int
	for sc.Scan() {
		if _, err := fmt.Sscanf(sc.Text(), "ready %d %d", &holderPid, &initPid); err == nil {
			break
		}
	}
	if holderPid == 0 {
		_ = daemon.Process.Kill()
		t.Fatal("the helper daemon never started its command")
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	await(t, "the command", 5*time.Second, func() bool { return len(sleeping(m)) > 0 })
	_ = daemon.Process.Kill()
	_ = daemon.Wait()
	await(t, "the holder, the init and the command to die with the daemon", 5*time.Second, func() bool {
		return !alive(holderPid) && !alive(initPid) && len(sleeping(m)) == 0
	})
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err == nil && !isZombie(st)
}

// A session's network ends with EndSession (its holder exits); the next
// command of the session gets a new one.
func TestEndSession(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t)
	session := fmt.Sprintf("session-%d", time.Now().UnixNano())
	spec := f.spec(Read, "readlink /proc/self/ns/net")
	spec.Session = session
	first := run(t, modes[0], spec)
	holders.mu.Lock()
	h := holders.sessions[session].h
	holders.mu.Unlock()
	again := run(t, modes[0], spec)
	if first.out != again.out || first.code != 0 {
		t.Fatalf("two commands of a session in different networks: %q, %q", first.out, again.out)
	}
	EndSession(session)
	await(t, "the holder to exit", 5*time.Second, func() bool { return !alive(h.proc.Pid) })
	if r := run(t, modes[0], spec); r.code != 0 || !r.conf.SessionNetwork {
		t.Errorf("after EndSession: exit %d, %+v:\n%s", r.code, r.conf, r.out)
	}
	holders.mu.Lock()
	next := holders.sessions[session].h
	holders.mu.Unlock()
	if next == h {
		t.Error("the session kept its ended holder")
	}
	EndSession(session)
}

// Commands that start together when no holder is running (a daemon's
// first commands: MCP servers started at once) share the holder one of
// them makes; none fails because another replaced it, nor when the idle
// holders are closed meanwhile.
func TestHoldersMadeOnceUnderConcurrency(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t)
	for round := range 3 {
		CloseIdle()
		errs := make(chan string, 16)
		done := make(chan struct{})
		for i := range 12 {
			go func() {
				defer func() { done <- struct{}{} }()
				spec := f.spec(Read, "echo ok")
				if i%3 == 0 {
					spec.Session = fmt.Sprintf("concurrent-%d", round)
				}
				if r := run(t, modes[0], spec); r.err != nil || r.out != "ok\n" {
					errs <- fmt.Sprintf("round %d, command %d: %v %q", round, i, r.err, r.out)
				}
				if i == 5 {
					CloseIdle()
				}
			}()
		}
		for range 12 {
			<-done
		}
		close(errs)
		for e := range errs {
			t.Error(e)
		}
		EndSession(fmt.Sprintf("concurrent-%d", round))
	}
}
