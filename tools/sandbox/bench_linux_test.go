package sandbox

import (
	"context"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// awaitWarm waits until an entry point of that kind is started and waiting.
func awaitWarm(b *testing.B, k nsKey) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		warm.mu.Lock()
		ready := warm.ready[k] != nil
		warm.mu.Unlock()
		if ready {
			return
		}
		if time.Now().After(deadline) {
			b.Fatal("no entry point started")
		}
		go refill(k)
		time.Sleep(200 * time.Microsecond)
	}
}

// cpuPerOp reports the CPU time (user and system, of this process and of
// its children) per operation: on a shared machine it moves much less
// with the load than the wall time does.
func cpuPerOp(b *testing.B) func() {
	start := cpuTime()
	return func() {
		b.ReportMetric(float64((cpuTime()-start).Microseconds())/1000/float64(b.N), "cpu-ms/op")
	}
}

func cpuTime() time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		_ = syscall.Getrusage(who, &ru)
		total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return total
}

// BenchmarkSpawn is the cost of a command: `true`, plain (os/exec), in
// Full, and through the sandbox in each profile. The difference with
// "plain" in ns/op is what the sandbox adds to a command's latency (target:
// under 5 ms), an entry point being ready as it is between a model's turns;
// cpu-ms/op counts everything, the start of the next entry point included.
//
//	go test ./tools/sandbox -run '^$' -bench Spawn -benchtime 200x
func BenchmarkSpawn(b *testing.B) {
	requireSandbox(b)
	ws := b.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "LANG=C.UTF-8"}
	b.Run("plain", func(b *testing.B) {
		defer cpuPerOp(b)()
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
			defer cpuPerOp(b)()
			key := nsKey{ns: st.Namespaces}
			for i := 0; i < b.N; i++ {
				if tc.profile != Full {
					// A command follows a model's turn: the next entry point
					// is ready by then. Wait for it outside the timing (its
					// CPU time still counts in cpu-ms/op).
					b.StopTimer()
					awaitWarm(b, key)
					b.StartTimer()
				}
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
