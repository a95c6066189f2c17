package tools

import (
	"os"
	"testing"
	"time"
)

// BenchmarkRunCmdTrue is run_cmd's path for `true`, prepared and run as
// the agent runs it, in each profile: full is the path without the
// sandbox. A pause that is not timed stands for the model's turn, when the
// sandbox starts its next entry point.
func BenchmarkRunCmdTrue(b *testing.B) {
	pause := 20 * time.Millisecond
	if d, err := time.ParseDuration(os.Getenv("AGENTD_BENCH_PAUSE")); err == nil {
		pause = d // a loaded machine starts the next entry point slower
	}
	for _, p := range []Profile{ProfileFull, ProfileRead, ProfileWorkspaceWrite} {
		b.Run(string(p), func(b *testing.B) {
			env := &Env{Root: b.TempDir(), SessionID: "s", RunID: "r", StateDir: b.TempDir(), Reads: NewReadTracker()}
			args := []byte(`{"command":"true"}`)
			tool := runCmdTool{}
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				time.Sleep(pause)
				b.StartTimer()
				c, r := Prepare(b.Context(), tool, env, args)
				if r != nil {
					b.Fatal(r.Output)
				}
				c.Command.Confine = Confine{Profile: p}
				res, err := c.Run(b.Context())
				if err != nil || res.IsError {
					b.Fatal(err, res.Output)
				}
			}
		})
	}
}
