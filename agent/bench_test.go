package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentd/agentd/tools"
)

// instantModel answers at once: steps tool calls (update_plan, so the loop
// itself is what is measured, then read_file for a real tool), then text.
type instantModel struct {
	steps int
	tool  string
	n     atomic.Int64
}

func (m *instantModel) Complete(ctx context.Context, req ModelRequest, out ModelStream) (ModelReply, error) {
	i := m.n.Add(1)
	if i%int64(m.steps+1) == 0 {
		out.text("done")
		return ModelReply{Text: "done"}, nil
	}
	args := fmt.Sprintf(`{"plan":[{"step":"step %d","status":"in_progress"}]}`, i)
	if m.tool == "read_file" {
		args = fmt.Sprintf(`{"path":"a.txt","offset":%d}`, i%5)
	}
	return ModelReply{ToolCalls: []ToolCall{{ID: fmt.Sprint("c", i), Name: m.tool, Args: json.RawMessage(args)}}}, nil
}

// endings is a Listener that reports the state each run ends in.
type endings struct {
	nobody
	done chan State
}

func (l endings) RunState(st RunState) {
	if st.State.Finished() {
		l.done <- st.State
	}
}

func benchAgent(b *testing.B, m Model) (*Agent, chan State) {
	root := b.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte(strings.Repeat("line\n", 50)), 0o644); err != nil {
		b.Fatal(err)
	}
	done := make(chan State, 16)
	a, err := New(Config{Root: root, StateDir: b.TempDir(), Model: ModelConfig{BaseURL: "x", Name: "instant"},
		NewModel: func(ModelConfig) Model { return m }, Policy: tools.ModeFullAuto, MaxSteps: 1000,
		Listener: endings{done: done}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(a.Shutdown)
	return a, done
}

// BenchmarkLoopStep reports the loop's own cost per step (model call, tool
// dispatch, events, checkpoint) with a model that answers instantly. A run
// of 200 steps makes the per-run costs (opening logs, the final durable
// save) negligible; BenchmarkRunFixedCost reports those.
func BenchmarkLoopStep(b *testing.B) {
	for _, tool := range []string{planToolName, "read_file"} {
		b.Run(tool, func(b *testing.B) {
			const steps = 200
			a, done := benchAgent(b, &instantModel{steps: steps, tool: tool})
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if _, err := a.Run(context.Background(), RunParams{Prompt: "update the plan"}); err != nil {
					b.Fatal(err)
				}
				if st := <-done; st != StateCompleted {
					b.Fatalf("run ended %s", st)
				}
			}
			b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N*(steps+1)), "µs/step")
		})
	}
}

// BenchmarkRunFixedCost is a run with no tool call: start, one instant
// model reply, and the durable end of the run.
func BenchmarkRunFixedCost(b *testing.B) {
	a, done := benchAgent(b, &instantModel{steps: 0, tool: planToolName})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := a.Run(context.Background(), RunParams{Prompt: "hi there"}); err != nil {
			b.Fatal(err)
		}
		<-done
	}
}

// BenchmarkPersistPausedRun reports the cost of durably saving a run as it
// pauses on two questions, after 40 messages of history: one line of the
// run's journal (the step's new messages and the run's state), synced.
func BenchmarkPersistPausedRun(b *testing.B) {
	st, err := openStore(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	a := &Agent{store: st, log: slog.New(slog.DiscardHandler)}
	rec := &runRecord{ID: newID("r"), SessionID: newID("s"), State: StateRequiresAction}
	r := a.newRunForTest(rec)
	for i := 0; i < 40; i++ {
		rec.Messages = append(rec.Messages, Message{Role: RoleAssistant, Content: strings.Repeat("words of a reply ", 30)})
	}
	if err := r.persistLocked(true); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		req := &InputRequest{RequestID: newID("q"), Kind: KindQuestion, Message: "Which port?"}
		rec.Pending = append(rec.Pending, &pendingCall{Call: ToolCall{ID: fmt.Sprint("c", i), Name: askToolName, Args: json.RawMessage(`{"question":"?"}`)},
			RequestID: req.RequestID})
		rec.Requests = append(rec.Requests, &request{Req: req, Origin: originCall, CallID: fmt.Sprint("c", i)})
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rec.Messages = append(rec.Messages, Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c", Name: askToolName, Args: json.RawMessage(`{}`)}}})
		if err := r.persistLocked(true); err != nil {
			b.Fatal(err)
		}
	}
}
