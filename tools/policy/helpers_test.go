package policy

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentd/agentd/tools"
	"github.com/stretchr/testify/require"
)

// newEnv makes a workspace and a state directory in temp dirs.
func newEnv(t *testing.T) *tools.Env {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return &tools.Env{Root: root, SessionID: "s1", RunID: "r1", StateDir: t.TempDir(), Reads: tools.NewReadTracker()}
}

func writeFile(t *testing.T, env *tools.Env, rel, content string) string {
	t.Helper()
	p := filepath.Join(env.Root, filepath.FromSlash(rel))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func toolByName(t *testing.T, name string) tools.Tool {
	t.Helper()
	for _, tl := range tools.Builtins() {
		if tl.Info().Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

// prepare calls Prepare with args marshalled from v: the call the policy
// judges, as the agent would hand it over.
func prepare(t *testing.T, env *tools.Env, name string, v any) (*tools.Call, *tools.Result) {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return tools.Prepare(t.Context(), toolByName(t, name), env, b)
}

// call prepares and runs; a refusal in Prepare is returned as the result.
func call(t *testing.T, env *tools.Env, name string, v any) tools.Result {
	t.Helper()
	c, r := prepare(t, env, name, v)
	if r != nil {
		return *r
	}
	res, err := c.Run(context.WithoutCancel(t.Context()))
	require.NoError(t, err)
	return res
}

func mustOK(t *testing.T, r tools.Result) tools.Result {
	t.Helper()
	require.False(t, r.IsError, "unexpected error result: %s", r.Output)
	return r
}
