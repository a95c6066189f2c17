package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// What a failing command printed is read back against its grants: the
// path it could not read (outside the workspace, or in the masked HOME,
// where it is "missing"), the directory it could not write, the network;
// a command that failed for its own reasons is told nothing.
func TestRefused(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t)
	private := filepath.Join(t.TempDir(), "tools") // under the masked /tmp
	if err := os.MkdirAll(private, 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(private, "server.sh")
	if err := os.WriteFile(script, []byte("echo hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want []Refusal
	}{
		{"a script outside the workspace", []string{"bash", script}, []Refusal{{Path: script, Right: "read"}}},
		{"a file outside", []string{"cat", filepath.Join(f.out, "existing"), filepath.Join(f.home, ".ssh", "id_ed25519")},
			[]Refusal{{Path: filepath.Join(f.home, ".ssh", "id_ed25519"), Right: "read"}}},
		{"a cache outside", []string{"mkdir", "-p", filepath.Join(f.out, "cache", "x")}, []Refusal{{Path: filepath.Join(f.out, "cache"), Right: "write"}}},
		{"the workspace in read", []string{"touch", filepath.Join(f.ws, "new.txt")}, []Refusal{{Path: filepath.Join(f.ws, "new.txt"), Right: "write"}}},
		{"its own failure", []string{"cat", "/nonexistent/file"}, nil},
		{"a failing program", []string{"bash", "-c", "echo 'error: bad input in /usr/share/x' >&2; exit 3"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Command(context.Background(), Spec{Profile: Read, Workspace: f.ws, Args: tc.args, Env: f.env, Read: []string{f.out}})
			if err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			c.Stdout, c.Stderr = &out, &out
			if err := c.Run(); err != nil {
				t.Fatal(err)
			}
			got := c.Refused(out.String())
			t.Logf("exit %d: %s → %v", c.ExitCode(), strings.TrimSpace(out.String()), got)
			for _, w := range tc.want {
				if !slices.Contains(got, w) {
					t.Errorf("missing %v in %v", w, got)
				}
			}
			if tc.want == nil && len(got) > 0 {
				t.Errorf("refusals where the sandbox refused nothing: %v", got)
			}
		})
	}
}
