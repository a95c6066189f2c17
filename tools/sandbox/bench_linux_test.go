package sandbox

import (
	"context"
	"os"
	"os/exec"
	"testing"
)

// BenchmarkSpawn is the cost of a command: `true`, plain (os/exec), in
// Full, and through the sandbox in each profile. The difference with
// "plain" is what the sandbox adds (target: under 5 ms).
//
//	go test ./tools/sandbox -run '^$' -bench Spawn -benchtime 200x
func BenchmarkSpawn(b *testing.B) {
	requireSandbox(b)
	ws := b.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "LANG=C.UTF-8"}
	b.Run("plain", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, tc := range []struct {
		name    string
		profile Profile
		network bool
		mode    mode
	}{
		{"full", Full, false, modes[0]},
		{"read", Read, false, modes[0]},
		{"read+network", Read, true, modes[0]},
		{"workspace-write", WorkspaceWrite, false, modes[0]},
		{"read/landlock-only", Read, false, modes[1]},
	} {
		b.Run(tc.name, func(b *testing.B) {
			st := tc.mode.status()
			for b.Loop() {
				c, err := Command(context.Background(), Spec{Profile: tc.profile, Workspace: ws, Network: tc.network,
					Args: []string{"true"}, Env: env})
				if err != nil {
					b.Fatal(err)
				}
				c.status = &st
				if err := c.Run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
