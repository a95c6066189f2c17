package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// stepClock answers at once, reading a 1 KiB file a step so that the
// conversation grows as a real one does, and notes when each step's model
// call came: the time between two calls is what the loop spent on a step
// (the tool, the checkpoint, the events, the next request).
type stepClock struct {
	steps int
	mu    sync.Mutex
	at    []time.Time
}

func (m *stepClock) Complete(ctx context.Context, req ModelRequest, out ModelStream) (ModelReply, error) {
	m.mu.Lock()
	m.at = append(m.at, time.Now())
	i := len(m.at)
	m.mu.Unlock()
	if i > m.steps {
		out.text("done")
		return ModelReply{Text: "done"}, nil
	}
	args := fmt.Sprintf(`{"path":"big.txt","offset":%d}`, 1+i%4)
	return ModelReply{ToolCalls: []ToolCall{{ID: fmt.Sprint("c", i), Name: "read_file", Args: json.RawMessage(args)}}}, nil
}

// perStep is the median time of steps from..to (1-based) of the last run:
// on a shared machine a mean is mostly the odd step the scheduler or the
// collector stretched.
func (m *stepClock) perStep(from, to int) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	var d []time.Duration
	for i := from; i <= to; i++ {
		d = append(d, m.at[i].Sub(m.at[i-1]))
	}
	slices.Sort(d)
	return d[len(d)/2]
}

// BenchmarkStepTime reports what one step of a long run costs early
// (the median of steps 5–15) and late (190–200), with a model that answers
// at once: the two stay close when a step's cost does not grow with the
// conversation. writes/step counts the write system calls of the whole
// process (the journal, the event log, the audit and trace logs).
func BenchmarkStepTime(b *testing.B) {
	const steps = 200
	m := &stepClock{steps: steps}
	a, done := benchAgent(b, m)
	if err := os.WriteFile(filepath.Join(a.cfg.Root, "big.txt"), []byte(strings.Repeat("a line of text of some length\n", 34)), 0o644); err != nil {
		b.Fatal(err)
	}
	var early, late time.Duration
	writes := syscw()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.mu.Lock()
		m.at = m.at[:0]
		m.mu.Unlock()
		if _, err := a.Run(context.Background(), RunParams{Prompt: "read it"}); err != nil {
			b.Fatal(err)
		}
		if st := <-done; st != StateCompleted {
			b.Fatalf("run ended %s", st)
		}
		early += m.perStep(5, 15)
		late += m.perStep(190, 200)
	}
	b.StopTimer()
	b.ReportMetric(float64(early.Microseconds())/float64(b.N), "µs/step@10")
	b.ReportMetric(float64(late.Microseconds())/float64(b.N), "µs/step@200")
	if w := syscw(); w >= 0 && writes >= 0 {
		b.ReportMetric(float64(w-writes)/float64(b.N*(steps+1)), "writes/step")
	}
}

// syscw is the number of write system calls the process made, -1 where
// /proc does not say.
func syscw() int64 {
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "syscw: "); ok {
			var n int64
			fmt.Sscan(v, &n)
			return n
		}
	}
	return -1
}
