package tools

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/tools/sandbox"
)

// goModule writes a module with one test that serves and fetches over the
// loopback, as chi's and net/http's tests do.
func goModule(t *testing.T, env *Env, marker string) {
	t.Helper()
	writeFile(t, env, "go.mod", "module example.com/m\n\ngo 1.21\n")
	writeFile(t, env, "m.go", "package m\n\n// Marker makes this package's build its own.\nconst Marker = "+fmt.Sprintf("%q", marker)+"\n")
	writeFile(t, env, "m_test.go", `package m

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestServe(t *testing.T) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, Marker) }))
	defer s.Close()
	res, err := http.Get(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(b) != Marker {
		t.Fatalf("got %q", b)
	}
}
`)
}

// countOutputs counts the build outputs (-d files) under dir.
func countOutputs(dir string) int {
	n := 0
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, "-d") {
			n++
		}
		return nil
	})
	return n
}

// A confined `go test` of a module whose test binds the loopback passes
// without the network, and its build is warm: the standard library and
// everything the user built before come from the user's own build cache,
// and only what is new is stored, in agentd's cache of the workspace. The
// user's cache is not writable from the sandbox.
func TestConfinedGoTestIsWarm(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	if !sandbox.Check().Supports(sandbox.WorkspaceWrite) {
		t.Skip("no kernel sandbox here")
	}
	env := newEnv(t)
	env.Sandbox = NewSandbox(SandboxConfig{CacheDir: t.TempDir()}) // agentd's caches start empty
	goModule(t, env, fmt.Sprintf("warm-%d", time.Now().UnixNano()))
	// The user's cache holds net/http's test build (the user tested
	// something like it before).
	warm := exec.Command(goBin, "test", "-count=1", "-run", "^$", "net/http/httptest")
	warm.Dir = env.Root
	out, err := warm.CombinedOutput()
	require.NoError(t, err, "%s", out)

	r := runConfined(t, t.Context(), env, Confine{Profile: ProfileWorkspaceWrite}, RunCmdParams{Command: "go test -count=1 ./...", Timeout: 600})
	require.False(t, r.IsError, r.Output)
	assert.Contains(t, r.Output, "ok  \texample.com/m")

	own := filepath.Join(env.Sandbox.WorkspaceCacheDir(env.Root), "write", "go-build")
	n := countOutputs(own)
	assert.Positive(t, n, "what is new (this module, its test binary's main) is stored in agentd's cache")
	assert.Less(t, n, 40, "the standard library came from the user's cache, not rebuilt: %d outputs stored", n)

	user := userToolchainDirs(ChildEnv(os.Environ(), nil, nil)).goCache
	r = runConfined(t, t.Context(), env, Confine{Profile: ProfileWorkspaceWrite}, RunCmdParams{Command: "touch " + filepath.Join(user, "planted")})
	assert.True(t, r.IsError, "the user's build cache is writable from the sandbox: %s", r.Output)
	assert.NoFileExists(t, filepath.Join(user, "planted"))
}

// The user's module cache is read from its own path and never written: a
// command's writes there land in agentd's layer of the workspace, which the
// workspace's read commands see and another workspace's commands do not.
// Without the network a module the caches lack fails at once, and says why.
func TestConfinedModuleCache(t *testing.T) {
	if !sandbox.Check().Supports(sandbox.WorkspaceWrite) {
		t.Skip("no kernel sandbox here")
	}
	user := userToolchainDirs(ChildEnv(os.Environ(), nil, nil)).modCache
	if fi, err := os.Stat(user); err != nil || !fi.IsDir() {
		t.Skip("no module cache here")
	}
	cacheDir := t.TempDir()
	env := newEnv(t)
	env.Sandbox = NewSandbox(SandboxConfig{CacheDir: cacheDir})
	probe := fmt.Sprintf("agentd-overlay-probe-%d", time.Now().UnixNano())
	t.Cleanup(func() { os.Remove(filepath.Join(user, probe)) })

	// Without the network the go command does not write its module cache:
	// the user's is only read, and no layer is mounted.
	plant := `test "$GOMODCACHE" = ` + user + ` && echo planted > "$GOMODCACHE/` + probe + `" && cat "$GOMODCACHE/` + probe + `"`
	r := runConfined(t, t.Context(), env, Confine{Profile: ProfileWorkspaceWrite}, RunCmdParams{Command: plant})
	assert.True(t, r.IsError, r.Output)
	assert.NoFileExists(t, filepath.Join(user, probe), "the user's module cache was written")
	// With the network (downloads) it writes agentd's layer.
	r = runConfined(t, t.Context(), env, Confine{Profile: ProfileWorkspaceWrite, Network: true}, RunCmdParams{Command: plant})
	require.False(t, r.IsError, r.Output)
	assert.Contains(t, r.Output, "planted")
	assert.NoFileExists(t, filepath.Join(user, probe), "the user's module cache was written")
	r = runConfined(t, t.Context(), env, Confine{Profile: ProfileWorkspaceWrite}, RunCmdParams{Command: `cat "$GOMODCACHE/` + probe + `"`})
	assert.Contains(t, r.Output, "planted", "a later workspace-write command without the network sees it")

	r = runConfined(t, t.Context(), env, Confine{Profile: ProfileRead}, RunCmdParams{Command: `cat "$GOMODCACHE/` + probe + `"`})
	assert.Contains(t, r.Output, "planted", "a read command of the workspace sees what workspace-write ones added")
	r = runConfined(t, t.Context(), env, Confine{Profile: ProfileRead}, RunCmdParams{Command: `echo x > "$GOMODCACHE/` + probe + `-read"`})
	assert.True(t, r.IsError, "a read command wrote the module cache: %s", r.Output)

	other := newEnv(t)
	other.Sandbox = env.Sandbox
	r = runConfined(t, t.Context(), other, Confine{Profile: ProfileWorkspaceWrite}, RunCmdParams{Command: `cat "$GOMODCACHE/` + probe + `"`})
	assert.True(t, r.IsError, "another workspace sees this one's module cache layer: %s", r.Output)

	if _, err := exec.LookPath("go"); err == nil {
		writeFile(t, env, "go.mod", "module example.com/m\n\ngo 1.21\n\nrequire example.com/not/there v1.0.0\n")
		writeFile(t, env, "go.sum", "example.com/not/there v1.0.0 h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n"+
			"example.com/not/there v1.0.0/go.mod h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n")
		writeFile(t, env, "m.go", "package m\n\nimport _ \"example.com/not/there\"\n")
		r = runConfined(t, t.Context(), env, Confine{Profile: ProfileWorkspaceWrite}, RunCmdParams{Command: "go build ./..."})
		assert.True(t, r.IsError)
		assert.Contains(t, r.Output, "example.com/not/there")
		assert.Contains(t, r.Output, "[sandbox: this command ran without the network")
		assert.Contains(t, r.Output, "network: true")
	}
}
