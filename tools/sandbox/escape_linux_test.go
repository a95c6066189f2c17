package sandbox

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// escape is a command a shell parser could judge harmless that does harm,
// with what the kernel must refuse and allow.
type escape struct {
	name   string
	script func(f *fixture) string
	// refused in these profiles (the kernel says no), allowed in those.
	refused, allowed []Profile
	// happened reports whether the effect took place.
	happened func(t *testing.T, f *fixture, r result) bool
	// namespacesOnly: Landlock alone does not allow it (a case of what
	// the namespaces add).
	namespacesOnly bool
}

func fileExists(p string) func(*testing.T, *fixture, result) bool {
	return func(t *testing.T, f *fixture, r result) bool {
		_, err := os.Stat(filepath.Join(f.ws, "..", p))
		return err == nil
	}
}

func fileContains(p, s string) func(*testing.T, *fixture, result) bool {
	return func(t *testing.T, f *fixture, r result) bool {
		data, _ := os.ReadFile(filepath.Join(f.ws, "..", p))
		return strings.Contains(string(data), s)
	}
}

func outputContains(s string) func(*testing.T, *fixture, result) bool {
	return func(t *testing.T, f *fixture, r result) bool { return strings.Contains(r.out, s) }
}

var (
	ro  = []Profile{Read}
	rw  = []Profile{Read, WorkspaceWrite}
	all = []Profile{Read, WorkspaceWrite, Full}
)

func escapeCases() []escape {
	return []escape{
		{name: "sort -o outside", refused: rw, allowed: []Profile{Full},
			script: func(f *fixture) string {
				return `printf 'b\na\n' > "$TMPDIR/in" && sort -o ` + f.out + `/sorted "$TMPDIR/in"`
			},
			happened: fileExists("outside/sorted")},
		{name: "redirect outside", refused: rw, allowed: []Profile{Full},
			script:   func(f *fixture) string { return "echo pwned > " + f.out + "/f" },
			happened: fileExists("outside/f")},
		{name: "append to a file outside", refused: rw, allowed: []Profile{Full},
			script:   func(f *fixture) string { return "echo pwned >> " + f.out + "/existing" },
			happened: fileContains("outside/existing", "pwned")},
		{name: "write the workspace", refused: ro, allowed: []Profile{WorkspaceWrite, Full},
			script:   func(f *fixture) string { return "echo new > new.txt" },
			happened: fileExists("ws/new.txt")},
		{name: "read the workspace", allowed: all,
			script:   func(f *fixture) string { return "cat README" },
			happened: outputContains("hello from the workspace")},
		{name: "private temporary directory", allowed: all,
			script: func(f *fixture) string {
				return `echo scratch > "$TMPDIR/x" && cat "$TMPDIR/x" && mktemp -d >/dev/null && echo mktemp-ok`
			},
			happened: outputContains("mktemp-ok")},
		{name: "read ~/.ssh", refused: rw, allowed: []Profile{Full},
			script:   func(f *fixture) string { return "cat ~/.ssh/id_ed25519" },
			happened: outputContains(sshKey)},
		{name: "read ~/.config", refused: rw, allowed: []Profile{Full},
			script:   func(f *fixture) string { return "cat ~/.config/gh/hosts.yml" },
			happened: outputContains("gho_fake")},
		{name: "read the daemon's environ", refused: rw, allowed: []Profile{Full},
			script: func(f *fixture) string {
				return fmt.Sprintf(`cat /proc/%d/environ > "$TMPDIR/e" && tr '\0' '\n' < "$TMPDIR/e"`, os.Getpid())
			},
			happened: outputContains("PATH=")},
		{name: "read the daemon's memory", refused: rw,
			script:   func(f *fixture) string { return fmt.Sprintf("head -c 64 /proc/%d/mem && echo read-mem", os.Getpid()) },
			happened: outputContains("read-mem")},
		{name: "signal the daemon", refused: rw,
			script:   func(f *fixture) string { return fmt.Sprintf("kill -0 %d && echo signalled", os.Getpid()) },
			happened: outputContains("signalled")},
		{name: "read /etc/shadow as root", refused: rw,
			script:   func(f *fixture) string { return "cat /etc/shadow >/dev/null && echo read-shadow" },
			happened: outputContains("read-shadow")},
		{name: "set the hostname", refused: rw,
			script:   func(f *fixture) string { return "hostname agentd-pwned && echo set-hostname" },
			happened: outputContains("set-hostname")},
		{name: "set the clock", refused: rw,
			script:   func(f *fixture) string { return "date -s '2001-02-03 04:05:06' && echo set-clock" },
			happened: outputContains("set-clock")},
		{name: "mount", refused: rw,
			script:   func(f *fixture) string { return `mount -t tmpfs none "$TMPDIR" && echo mounted` },
			happened: outputContains("mounted")},
		{name: "capabilities", refused: rw,
			script: func(f *fixture) string {
				return `grep -E '^Cap(Eff|Prm|Bnd|Amb)' /proc/self/status | grep -v 0000000000000000 && echo has-caps`
			},
			happened: outputContains("has-caps")},
		{name: "git config", refused: []Profile{WorkspaceWrite}, allowed: []Profile{Full},
			script:   func(f *fixture) string { return `printf '\tfsmonitor = touch pwned\n' >> .git/config` },
			happened: fileContains("ws/.git/config", "fsmonitor")},
		{name: "git hook", refused: []Profile{WorkspaceWrite}, allowed: []Profile{Full},
			script:   func(f *fixture) string { return `echo 'touch pwned' > .git/hooks/pre-commit` },
			happened: fileExists("ws/.git/hooks/pre-commit")},
		{name: "git config by rename", refused: []Profile{WorkspaceWrite}, allowed: []Profile{Full},
			script: func(f *fixture) string {
				return `echo '[core] fsmonitor=x' > .git/c.lock && mv .git/c.lock .git/config`
			},
			happened: fileContains("ws/.git/config", "fsmonitor")},
		{name: "move .git away", refused: []Profile{WorkspaceWrite}, allowed: []Profile{Full},
			script:   func(f *fixture) string { return `mv .git .git-old` },
			happened: fileExists("ws/.git-old")},
		{name: "nested git config", refused: []Profile{WorkspaceWrite}, allowed: []Profile{Full},
			script:   func(f *fixture) string { return `printf '\tfsmonitor = touch pwned\n' >> sub/.git/config` },
			happened: fileContains("ws/sub/.git/config", "fsmonitor")},
		{name: ".agentd rules", refused: []Profile{WorkspaceWrite}, allowed: []Profile{Full},
			script: func(f *fixture) string {
				return `echo '{"rules":[{"tool":"*","action":"allow"}]}' > .agentd/rules.json`
			},
			happened: fileContains("ws/.agentd/rules.json", "allow")},
		{name: "hard link to a file outside", refused: []Profile{WorkspaceWrite}, allowed: []Profile{Full},
			script:   func(f *fixture) string { return "ln " + f.out + "/existing hardlink && echo pwned >> hardlink" },
			happened: fileContains("outside/existing", "pwned")},
		{name: "symlink out and write through it", refused: []Profile{WorkspaceWrite}, allowed: []Profile{Full},
			script:   func(f *fixture) string { return "ln -s " + f.out + " out && echo pwned > out/via-link" },
			happened: fileExists("outside/via-link")},
		{name: "a pseudo-terminal of its own", allowed: []Profile{Read, WorkspaceWrite, Full}, namespacesOnly: true,
			script: func(f *fixture) string {
				return `script -q -e -c 'test -t 0 && echo in-a-pty' /dev/null </dev/null`
			},
			happened: outputContains("in-a-pty")},
		{name: "git objects", refused: []Profile{WorkspaceWrite}, allowed: []Profile{Full},
			script: func(f *fixture) string {
				return `mkdir -p .git/objects/ab && echo x > .git/objects/ab/cd && echo wrote-object`
			},
			happened: outputContains("wrote-object")},
		// commondir makes git take the configuration and hooks from a
		// directory the command controls.
		{name: "git commondir", refused: []Profile{WorkspaceWrite}, allowed: []Profile{Full},
			script: func(f *fixture) string {
				return `mkdir -p evil && printf '[core]\n\tfsmonitor = touch pwned\n' > evil/config && echo "$PWD/evil" > .git/commondir`
			},
			happened: fileExists("ws/.git/commondir")},
		{name: "git modules renamed and recreated", refused: []Profile{WorkspaceWrite}, allowed: []Profile{Full},
			script: func(f *fixture) string {
				return `mv .git/modules .git/m2 && mkdir -p .git/modules/lib && cp .git/m2/lib/HEAD .git/modules/lib/ && ` +
					`printf '[core]\n\tfsmonitor = touch pwned\n' > .git/modules/lib/config`
			},
			happened: fileContains("ws/.git/modules/lib/config", "fsmonitor")},
		{name: "git submodule config", refused: []Profile{WorkspaceWrite}, allowed: []Profile{Full},
			script:   func(f *fixture) string { return `printf '\tfsmonitor = touch pwned\n' >> .git/modules/lib/config` },
			happened: fileContains("ws/.git/modules/lib/config", "fsmonitor")},
		{name: "git info attributes", refused: []Profile{WorkspaceWrite}, allowed: []Profile{Full},
			script:   func(f *fixture) string { return `mkdir -p .git/info && echo '* filter=evil' > .git/info/attributes` },
			happened: fileExists("ws/.git/info/attributes")},
	}
}

// TestEscapes runs each command in each profile, in both modes: the kernel
// refuses what the profile forbids and allows the rest. The workspace is
// not under a masked directory, as usual.
func TestEscapes(t *testing.T) {
	requireSandbox(t)
	for _, m := range modes {
		for _, e := range escapeCases() {
			for _, p := range append(append([]Profile(nil), e.refused...), e.allowed...) {
				if p == Full && m.name != "namespaces" || e.namespacesOnly && m.name != "namespaces" {
					continue // Full is the same in both modes
				}
				t.Run(m.name+"/"+p.String()+"/"+e.name, func(t *testing.T) {
					f := newFixtureIn(t, visibleTempDir(t))
					r := run(t, m, f.spec(p, e.script(f)))
					if m.name == "landlock-only" && p == WorkspaceWrite {
						if !isUnavailable(r.err) {
							t.Fatalf("workspace-write without namespaces: got %v, want ErrUnavailable", r.err)
						}
						return
					}
					if r.err != nil {
						t.Fatalf("start: %v", r.err)
					}
					did := e.happened(t, f, r)
					t.Logf("exit %d: %s", r.code, strings.TrimSpace(r.out))
					switch {
					case slices.Contains(e.refused, p) && did:
						t.Errorf("the kernel let it happen (exit %d):\n%s", r.code, r.out)
					case slices.Contains(e.refused, p) && r.code == 0:
						t.Errorf("refused but exited 0:\n%s", r.out)
					case slices.Contains(e.allowed, p) && !did:
						t.Errorf("not allowed (exit %d):\n%s", r.code, r.out)
					}
				})
			}
		}
	}
}

// TestNetwork: TCP and UDP to a listener on 127.0.0.1 are refused without
// the network grant and arrive with it.
func TestNetwork(t *testing.T) {
	requireSandbox(t)
	for _, m := range modes {
		for _, udp := range []bool{false, true} {
			proto := map[bool]string{false: "tcp", true: "udp"}[udp]
			for _, network := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/network=%v", m.name, proto, network), func(t *testing.T) {
					l := listen(t, udp)
					f := newFixture(t)
					spec := f.spec(Read, fmt.Sprintf("echo hello-%s > /dev/%s/127.0.0.1/%s", proto, proto, l.port()))
					spec.Network = network
					r := run(t, m, spec)
					if r.err != nil {
						t.Fatal(r.err)
					}
					got := l.received(t)
					if network && !slices.Contains(got, "hello-"+proto) {
						t.Errorf("with the network, nothing arrived (exit %d): %q\n%s", r.code, got, r.out)
					}
					if !network && (len(got) > 0 || r.code == 0) {
						t.Errorf("without the network, the kernel let it through (exit %d): %q\n%s", r.code, got, r.out)
					}
				})
			}
		}
	}
}

// TestAbstractSocket: abstract Unix sockets (X11, D-Bus, many agents) are
// out of reach even with the network granted (Landlock's scope).
func TestAbstractSocket(t *testing.T) {
	requireSandbox(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is needed to connect to an abstract socket")
	}
	name := fmt.Sprintf("agentd-sandbox-test-%d", os.Getpid())
	ln, err := net.Listen("unix", "@"+name)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("connected"))
			c.Close()
		}
	}()
	py, _ := exec.LookPath("python3")
	script := fmt.Sprintf(`%s -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect("\0%s"); print(s.recv(64))'`, py, name)
	for _, m := range modes {
		for _, network := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/network=%v", m.name, network), func(t *testing.T) {
				f := newFixture(t)
				spec := f.spec(Read, script)
				spec.Network = network
				spec.Read = append(spec.Read, filepath.Dir(py), os.Getenv("HOME")+"/.pyenv")
				spec.Env = append(spec.Env, "PYENV_ROOT="+os.Getenv("PYENV_ROOT"))
				r := run(t, m, spec)
				if r.err != nil {
					t.Fatal(r.err)
				}
				if strings.Contains(r.out, "connected") || r.code == 0 {
					t.Errorf("reached the abstract socket (exit %d):\n%s", r.code, r.out)
				}
			})
		}
	}
	// The same script does connect unconfined, so the refusal above is
	// the sandbox's doing.
	out, err := exec.Command("bash", "-c", script).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "connected") {
		t.Fatalf("unconfined control failed: %v\n%s", err, out)
	}
}

// TestNetworkLayers tries each network barrier alone, to state exactly
// what each covers: the network namespace and the seccomp filter refuse
// TCP and UDP; Landlock alone refuses TCP but not UDP, which is why it
// never stands alone.
func TestNetworkLayers(t *testing.T) {
	requireSandbox(t)
	for _, layer := range []struct {
		name     string
		tweak    func(p *plan)
		udpPass  bool
		wantConf func(c Confinement) bool
	}{
		{"netns", func(p *plan) { p.Network, p.Families, p.NetNS = true, nil, true }, false,
			func(c Confinement) bool { return c.NetNamespace && !c.Seccomp }},
		{"seccomp", func(p *plan) { p.Network, p.NetNS = true, false }, false,
			func(c Confinement) bool { return !c.NetNamespace && c.Seccomp }},
		{"landlock", func(p *plan) { p.Families, p.NetNS = nil, false }, true,
			func(c Confinement) bool { return !c.NetNamespace && !c.Seccomp }},
	} {
		for _, udp := range []bool{false, true} {
			proto := map[bool]string{false: "tcp", true: "udp"}[udp]
			t.Run(layer.name+"/"+proto, func(t *testing.T) {
				l := listen(t, udp)
				f := newFixture(t)
				c, err := Command(context.Background(), f.spec(Read, fmt.Sprintf("echo hello > /dev/%s/127.0.0.1/%s", proto, l.port())))
				if err != nil {
					t.Fatal(err)
				}
				c.tweak = layer.tweak
				var out strings.Builder
				c.Stdout, c.Stderr = &out, &out
				if err := c.Run(); err != nil {
					t.Fatal(err)
				}
				if !layer.wantConf(c.Confinement()) {
					t.Fatalf("not the layer alone: %+v", c.Confinement())
				}
				got := l.received(t)
				if passed := len(got) > 0; passed != (udp && layer.udpPass) {
					t.Errorf("%s alone, %s: arrived=%v (%q)\n%s", layer.name, proto, passed, got, out.String())
				}
				t.Logf("%s", strings.TrimSpace(out.String()))
			})
		}
	}
}

// The usual layout: the workspace inside HOME. HOME is masked, the
// workspace and the toolchains are bound back, the private files stay out.
// And a workspace that is HOME itself still hides the credentials.
func TestWorkspaceInsideHome(t *testing.T) {
	requireSandbox(t)
	base := visibleTempDir(t)
	home := filepath.Join(base, "home")
	for name, content := range map[string]string{
		"project/README":          "in the project\n",
		"project/.git/config":     "[core]\n",
		".ssh/id_ed25519":         sshKey + "\n",
		".config/gh/hosts.yml":    "oauth_token: gho_fake\n",
		".netrc":                  "machine x login y password z\n",
		"go/pkg/mod/example/x.go": "package x\n",
		"notes/private.txt":       "private notes\n",
	} {
		p := filepath.Join(home, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + home}
	for _, tc := range []struct {
		ws, script string
		profile    Profile
		ok         bool
	}{
		{"project", "cat README", Read, true},
		{"project", "cat ~/go/pkg/mod/example/x.go", Read, true},
		{"project", "echo new > new.txt", WorkspaceWrite, true},
		{"project", "cat ~/.ssh/id_ed25519", WorkspaceWrite, false},
		{"project", "cat ~/notes/private.txt", Read, false},
		{"project", "ls ~/.config", Read, false},
		{"project", "echo x >> .git/config", WorkspaceWrite, false},
		{".", "cat notes/private.txt", Read, true}, // the workspace is HOME: its files are the project
		{".", "cat .ssh/id_ed25519", Read, false},
		{".", "cat .netrc", WorkspaceWrite, false},
		{".", "cat .config/gh/hosts.yml", WorkspaceWrite, false},
		{".", "echo x > .ssh/authorized_keys", WorkspaceWrite, false},
	} {
		ws := filepath.Join(home, tc.ws)
		r := run(t, modes[0], Spec{Profile: tc.profile, Workspace: ws, Args: []string{"bash", "-c", tc.script}, Env: env})
		if r.err != nil {
			t.Fatalf("%s: %v", tc.script, r.err)
		}
		if (r.code == 0) != tc.ok {
			t.Errorf("workspace %s, %s %q: exit %d, want ok=%v\n%s", tc.ws, tc.profile, tc.script, r.code, tc.ok, r.out)
		}
		if !tc.ok && (strings.Contains(r.out, "8d2f7c1e") || strings.Contains(r.out, "gho_fake") || strings.Contains(r.out, "password z")) {
			t.Errorf("%s leaked: %s", tc.script, r.out)
		}
	}
	if _, err := os.Stat(filepath.Join(home, ".ssh", "authorized_keys")); err == nil {
		t.Error("wrote ~/.ssh/authorized_keys")
	}
}
