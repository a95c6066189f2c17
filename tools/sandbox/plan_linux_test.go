package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The allow-list takes what programs need and nothing beside it: the
// certificates, not the keys in the next directory; a new service's
// credentials are out without anyone naming them.
func TestEtcAllowedIn(t *testing.T) {
	etc := t.TempDir()
	for _, f := range []string{"passwd", "shadow", "gshadow-", "hosts", "ssh/ssh_config", "ssh/ssh_host_ed25519_key",
		"ssh/ssh_host_ed25519_key.pub", "ssl/certs/ca.pem", "ssl/private/key.pem", "sudoers.d/x", "java-17-openjdk/x",
		"letsencrypt/live/example.com/privkey.pem", "kubernetes/admin.conf", "mysql/debian.cnf", "npmrc"} {
		p := filepath.Join(etc, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got := etcAllowedIn(etc)
	for i := range got {
		got[i], _ = filepath.Rel(etc, got[i])
	}
	want := []string{"hosts", "java-17-openjdk", "passwd", "ssh/ssh_config", "ssl/certs"}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestToolchainPathsKeepHomeAndProjectsOut(t *testing.T) {
	env := []string{"HOME=/home/u", "GOPATH=/home/u/go:/opt/gopath", "CARGO_HOME=/home/u/.cargo", "GOROOT=/usr/local/go",
		"PATH=/home/u/.local/bin:/home/u:/:/work:relative:/usr/bin:/opt/tools/bin"}
	got := toolchainPaths(env, "/work/project")
	for _, want := range []string{"/home/u/go/pkg/mod", "/home/u/.cache/go-build", "/opt/gopath/pkg/mod", "/opt/gopath/bin",
		"/home/u/.cargo/bin", "/home/u/.cargo/registry", "/usr/local/go", "/home/u/.local/bin", "/usr/bin", "/opt/tools/bin"} {
		if !slices.Contains(got, want) {
			t.Errorf("%s missing from %v", want, got)
		}
	}
	for _, bad := range []string{"/home/u", "/", "/work", "relative", "/home/u/.cargo", "/home/u/.ssh", "/home/u/go"} {
		if slices.Contains(got, bad) {
			t.Errorf("%s must not be readable: %v", bad, got)
		}
	}
}

func TestGitProtections(t *testing.T) {
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, ".git", "modules", "lib", "x", "modules", "y"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"lib/x/HEAD", "lib/x/modules/y/HEAD"} {
		if err := os.WriteFile(filepath.Join(ws, ".git", "modules", f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"config", "hooks", "modules/lib/x/config", "modules/lib/x/hooks", "modules/lib/x/modules/y/hooks"} {
		if err := os.MkdirAll(filepath.Join(ws, ".git", name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Any command: the whole git directory, read-only.
	g, err := gitProtections(ws, false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(g.readOnly, []string{filepath.Join(ws, ".git")}) || len(g.pins)+len(g.write)+len(g.absent) != 0 {
		t.Errorf("read-only %v pins %v write %v absent %v", g.readOnly, g.pins, g.write, g.absent)
	}
	// Git itself: the guarded entries read-only, every directory holding
	// them pinned, the missing ones watched.
	g, err = gitProtections(ws, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{".git/config", ".git/hooks", ".git/modules/lib/x/config", ".git/modules/lib/x/hooks",
		".git/modules/lib/x/modules/y/hooks"} {
		if !slices.Contains(g.readOnly, filepath.Join(ws, want)) {
			t.Errorf("%s not protected: %v", want, g.readOnly)
		}
	}
	for _, want := range []string{".git", ".git/modules", ".git/modules/lib", ".git/modules/lib/x", ".git/modules/lib/x/modules/y"} {
		if !slices.Contains(g.pins, filepath.Join(ws, want)) {
			t.Errorf("%s not pinned: %v", want, g.pins)
		}
	}
	for _, want := range []string{".git/commondir", ".git/config.worktree", ".git/info", ".git/modules/lib/x/commondir"} {
		if !slices.Contains(g.absent, filepath.Join(ws, want)) {
			t.Errorf("%s not watched: %v", want, g.absent)
		}
	}
	if len(g.write) != 0 {
		t.Errorf("write %v", g.write)
	}

	link := t.TempDir()
	if err := os.Symlink(filepath.Join(ws, ".git"), filepath.Join(link, ".git")); err != nil {
		t.Fatal(err)
	}
	var se *SetupError
	if _, err := gitProtections(link, false); !errors.As(err, &se) {
		t.Errorf("a symlinked .git must be refused, got %v", err)
	}
}

// With the workspace under /tmp, a read-only command gets a private
// directory inside the masked /tmp rather than the whole of it, which
// would make the workspace bound back there writable.
func TestMaskKeepsReadOnlyPathsReadOnly(t *testing.T) {
	ws := t.TempDir() // under /tmp
	st := Status{Landlock: 7, EntryPoint: true, Namespaces: true, NetNamespace: true}
	for _, tc := range []struct {
		profile Profile
		tmp     string
	}{{Read, "/tmp/" + privateSub}, {WorkspaceWrite, "/tmp"}} {
		p, err := buildPlan(Spec{Profile: tc.profile, Workspace: ws, Dir: ws, Args: []string{"/bin/true"},
			Env: []string{"HOME=/nonexistent-home"}}, st, "")
		if err != nil {
			t.Fatal(err)
		}
		if got := envGet(p.Env, "TMPDIR"); got != tc.tmp {
			t.Errorf("%s: TMPDIR %s, want %s", tc.profile, got, tc.tmp)
		}
		if !slices.Contains(p.Keep, ws) || !slices.Contains(p.Masks, "/tmp") {
			t.Errorf("%s: keep %v masks %v", tc.profile, p.Keep, p.Masks)
		}
		for _, r := range p.Rules {
			if r.Path == "/tmp" && r.Access == accWrite && tc.profile == Read {
				t.Errorf("read: /tmp is writable, and with it the workspace")
			}
		}
	}
}

func TestSpecValidation(t *testing.T) {
	for _, s := range []Spec{
		{Profile: Read, Workspace: "relative", Args: []string{"x"}},
		{Profile: Read, Workspace: "/w"},
		{Profile: 0, Workspace: "/w", Args: []string{"x"}},
		{Profile: Read, Workspace: "/w", Args: []string{"x"}, Write: []string{"rel"}},
	} {
		if _, err := Command(context.Background(), s); err == nil {
			t.Errorf("%+v accepted", s)
		}
	}
	if p, err := ParseProfile("workspace-write"); err != nil || p != WorkspaceWrite {
		t.Errorf("ParseProfile: %v %v", p, err)
	}
}
