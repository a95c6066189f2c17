package sandbox

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// plantInEtc writes a file under the real /etc (root only), making the
// directories it needs, and removes what it made when the test ends.
func plantInEtc(t *testing.T, rel, content string) string {
	t.Helper()
	p := filepath.Join("/etc", rel)
	var made []string
	for d := filepath.Dir(p); d != "/etc"; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); os.IsNotExist(err) {
			made = append(made, d)
		}
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Skipf("cannot write under /etc: %v", err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Skipf("cannot write under /etc: %v", err)
	}
	t.Cleanup(func() {
		os.Remove(p)
		for _, d := range made { // innermost first
			os.Remove(d)
		}
	})
	return p
}

// Services' credentials under /etc, which a deny-list never named — a TLS
// private key, a cluster's admin credentials, a database's maintenance
// password — are unreadable in every confined profile (root's rights do not
// matter: Landlock refuses), while the tools a command runs still find
// what they need in /etc: users, hosts, the time zone, the certificates
// (curl's and Python's roots), git's and Java's settings.
func TestEtcByAllowList(t *testing.T) {
	requireSandbox(t)
	if os.Getuid() != 0 {
		t.Skip("planting files under /etc needs root")
	}
	tag := fmt.Sprintf("agentd-test-%d", rand.IntN(1_000_000))
	secrets := []string{
		plantInEtc(t, "letsencrypt/live/"+tag+".example.com/privkey.pem", "-----BEGIN PRIVATE KEY----- SECRET-CONTENT"),
		plantInEtc(t, "kubernetes/"+tag+"-admin.conf", "client-key-data: SECRET-CONTENT"),
		plantInEtc(t, "mysql/"+tag+"-debian.cnf", "password = SECRET-CONTENT"),
	}
	for _, m := range modes {
		for _, p := range []Profile{Read, WorkspaceWrite} {
			if m.name == "landlock-only" && p == WorkspaceWrite {
				continue
			}
			t.Run(m.name+"/"+p.String(), func(t *testing.T) {
				f := newFixture(t)
				for _, s := range secrets {
					r := run(t, m, f.spec(p, "cat "+s))
					if r.err != nil {
						t.Fatal(r.err)
					}
					if r.code == 0 || strings.Contains(r.out, "SECRET-CONTENT") {
						t.Errorf("read %s (exit %d): %s", s, r.code, r.out)
					}
				}
			})
		}
	}
	// What programs need, read through the tools themselves.
	checks := []struct{ name, script, want string }{
		{"users", "id -un; getent passwd root | cut -d: -f1", "root\nroot"},
		{"hosts", "getent hosts localhost | head -1 | tr -s ' ' | cut -d' ' -f2", "localhost"},
		{"time zone", "date +%Z >/dev/null && test -r /etc/localtime && echo tz", "tz"},
		{"certificates", "openssl x509 -noout -subject -in /etc/ssl/certs/ca-certificates.crt >/dev/null && echo certs", "certs"},
		{"git", "git config --system --list >/dev/null 2>&1; git init -q repo && git -C repo status --short && echo git", "git"},
	}
	if _, err := exec.LookPath("python3"); err == nil {
		checks = append(checks, struct{ name, script, want string }{"python's TLS roots",
			`python3 -c 'import ssl; c = ssl.create_default_context(); print(len(c.get_ca_certs()) > 0 or ssl.get_default_verify_paths().cafile)'`, ""})
	}
	if _, err := exec.LookPath("node"); err == nil {
		checks = append(checks, struct{ name, script, want string }{"node", `node -e 'console.log(require("tls").rootCertificates.length > 0)'`, "true"})
	}
	if _, err := exec.LookPath("java"); err == nil {
		checks = append(checks, struct{ name, script, want string }{"java", `java -XshowSettings:properties -version 2>&1 | grep -q java.home && echo java`, "java"})
	}
	if goBin, err := exec.LookPath("go"); err == nil {
		checks = append(checks, struct{ name, script, want string }{"go", filepath.Join(filepath.Dir(goBin), "go") + " version | cut -c1-5", "go ve"})
	}
	for _, m := range modes {
		for _, c := range checks {
			t.Run(m.name+"/"+c.name, func(t *testing.T) {
				f := newFixture(t)
				spec := f.spec(Read, c.script)
				if c.name == "git" {
					spec = f.spec(WorkspaceWrite, c.script)
					if m.name == "landlock-only" {
						spec = f.spec(Read, "git -C .. status --short >/dev/null 2>&1; git --version >/dev/null && echo git")
					}
				}
				spec.Env = append(spec.Env, "PATH="+os.Getenv("PATH"), "PYENV_ROOT="+os.Getenv("PYENV_ROOT"))
				spec.Env = append(spec.Env, "HOME="+os.Getenv("HOME"))
				r := run(t, m, spec)
				if r.err != nil {
					t.Fatal(r.err)
				}
				if r.code != 0 || !strings.Contains(r.out, c.want) || strings.Contains(r.out, "False") {
					t.Errorf("%s: exit %d, want %q:\n%s", c.script, r.code, c.want, r.out)
				}
			})
		}
	}
}
