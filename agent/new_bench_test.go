package agent

import "testing"

// BenchmarkNew is opening a workspace's state at initialize: the policy,
// the tools, the sessions and the paused runs.
func BenchmarkNew(b *testing.B) {
	root, state := b.TempDir(), b.TempDir()
	for i := 0; i < b.N; i++ {
		a, err := New(Config{Root: root, StateDir: state})
		if err != nil {
			b.Fatal(err)
		}
		a.Shutdown()
	}
}
