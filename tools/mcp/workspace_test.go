package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A workspace server's paths are judged where they lead: a symlink in the
// workspace to a private directory is outside, a path inside is granted
// nothing of its own (the workspace is readable already), and the user's
// servers keep every key.
func TestWorkspaceServerPaths(t *testing.T) {
	root, private := t.TempDir(), t.TempDir()
	require.NoError(t, os.Symlink(private, filepath.Join(root, "link")))
	require.NoError(t, os.Mkdir(filepath.Join(root, "sub"), 0o755))
	refused := []Server{
		{Command: "x", Read: []string{"link"}},
		{Command: "x", Read: []string{"link/missing/file"}},
		{Command: "x", Read: []string{"sub/../../"}},
		{Command: "x", Cwd: "link"},
		{Command: "x", Cwd: "${AGENTD_TEST_NOPE:-" + private + "}"},
		{Command: "x", Write: []string{"sub"}},
		{Command: "x", Sandbox: "full"},
		{Command: "x", Env: map[string]string{"PATH": private}},
		{Command: "./link"}, // a directory is no program
		{URL: "https://mcp.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer ${PATH}"}},
		{Command: "x", Args: []string{"--token=${PATH}"}},
	}
	for _, s := range refused {
		s.Origin = OriginWorkspace
		err := s.checkWorkspace(root, nil)
		if assert.Error(t, err, "%+v", s) {
			assert.Contains(t, err.Error(), "a workspace server")
		}
		s.Origin = OriginUser
		assert.NoError(t, s.checkWorkspace(root, nil), "the user's configuration is trusted")
	}
	s := Server{Command: "/bin/sh", Cwd: "sub", Read: []string{"sub", "."}, Sandbox: "workspace-write", Network: true, Origin: OriginWorkspace}
	g, err := s.workspaceGrants(root)
	require.NoError(t, err)
	real, _ := filepath.EvalSymlinks(root)
	assert.Equal(t, filepath.Join(real, "sub"), g.dir)
	sh, _ := filepath.EvalSymlinks("/bin/sh")
	assert.Equal(t, []string{sh}, g.read, "only the program, as the file it resolves to")
}

// A workspace server's state never is, lies in or holds a user server's,
// and workspace names that read alike keep theirs apart.
func TestStateDirsStayApart(t *testing.T) {
	st := "/state"
	dirs := map[string]bool{}
	for _, s := range []Server{
		{Name: "my_tools", Origin: OriginUser}, {Name: "my tools", Origin: OriginWorkspace},
		{Name: "my_tools", Origin: OriginWorkspace}, {Name: "my.tools", Origin: OriginWorkspace}, {Name: "workspace", Origin: OriginUser},
		{Name: ".workspace", Origin: OriginUser},
	} {
		d := stateDirOf(st, s)
		assert.False(t, dirs[d], "%s shared by %+v", d, s)
		dirs[d] = true
	}
	for d := range dirs {
		for e := range dirs {
			if d != e {
				assert.False(t, strings.HasPrefix(d, e+"/"), "%s lies in %s", d, e)
			}
		}
	}
	assert.Equal(t, "/state/mcp/github", StateDir(st, "github"), "a plain name keeps its directory")
}
