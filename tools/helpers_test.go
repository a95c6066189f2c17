package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// newEnv makes a workspace and a state directory in temp dirs.
func newEnv(t *testing.T) *Env {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return &Env{Root: root, SessionID: "s1", RunID: "r1", StateDir: t.TempDir(), Reads: NewReadTracker()}
}

func writeFile(t *testing.T, env *Env, rel, content string) string {
	t.Helper()
	p := filepath.Join(env.Root, filepath.FromSlash(rel))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func readBack(t *testing.T, env *Env, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(env.Root, filepath.FromSlash(rel)))
	require.NoError(t, err)
	return string(b)
}

func toolByName(t *testing.T, name string) Tool {
	t.Helper()
	for _, tl := range Builtins() {
		if tl.Info().Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

// prepare calls Prepare with args marshalled from v.
func prepare(t *testing.T, env *Env, name string, v any) (*Call, *Result) {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return Prepare(t.Context(), toolByName(t, name), env, b)
}

// call prepares and runs; a refusal in Prepare is returned as the result.
func call(t *testing.T, env *Env, name string, v any) Result {
	t.Helper()
	c, r := prepare(t, env, name, v)
	if r != nil {
		return *r
	}
	res, err := c.Run(context.WithoutCancel(t.Context()))
	require.NoError(t, err)
	return res
}

func mustOK(t *testing.T, r Result) Result {
	t.Helper()
	require.False(t, r.IsError, "unexpected error result: %s", r.Output)
	return r
}

func mustErr(t *testing.T, r Result) Result {
	t.Helper()
	require.True(t, r.IsError, "expected an error result, got: %s", r.Output)
	return r
}
