package rpctest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/internal/await"
	"github.com/agentd/agentd/rpc"
	"github.com/agentd/agentd/rpc/wire"
	"github.com/agentd/agentd/tools"
)

// Exactly-once commands over the real binary (issue 12): the daemon is
// killed with SIGKILL while a command runs; after the restart the command
// is not run again, the model is told it was interrupted, and nothing the
// command started is left running.

// onceCommand notes each start in runs.txt, starts a long sleep in the
// background of its own shell, writes the shell's and the sleep's pids and
// waits: killed with the daemon, both would otherwise be left behind.
const onceCommand = `echo started >> runs.txt; sleep 300 & echo "$$ $!" > pids.txt; wait`

func onceScript(interactive bool) *modeltest.Script {
	args, _ := json.Marshal(tools.RunCmdParams{Command: onceCommand, Interactive: interactive})
	return &modeltest.Script{Turns: []modeltest.Turn{
		on("build it", modeltest.Reply{ToolCalls: []modeltest.ToolCall{{ID: "call_once", Name: "run_cmd", Arguments: args}}}),
		{Name: "told", Match: modeltest.Match{AfterTool: "run_cmd"}, Reply: modeltest.Reply{Text: "I will check what it did."}},
	}}
}

func TestCommandRunsOnceAcrossKill(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		policy      tools.Mode
		interactive bool
	}{
		"approved":     {policy: tools.ModeAsk},
		"auto-allowed": {policy: tools.ModeFullAuto},
		"interactive":  {policy: tools.ModeFullAuto, interactive: true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t, Binary, Config{Script: onceScript(c.interactive), Policy: c.policy})
			e := env.StartInitialized()
			run := e.Run(agent.RunParams{Prompt: "build it"})
			if c.policy == tools.ModeAsk {
				req := e.Requests(run.RunID, 1)[0]
				require.Equal(t, agent.KindConfirmCommand, req.Kind)
				e.Answer(Decide(req.RequestID, tools.AllowOnce, ""))
			}
			pids := awaitPids(t, env)
			e.Close(true) // SIGKILL, while the command runs

			e2 := env.StartInitialized()
			for _, pid := range pids {
				awaitGone(t, pid)
			}
			if c.policy != tools.ModeAsk {
				// Cut off in the middle of a step nobody approved: paused,
				// as any such run, until resumed.
				var evs rpc.EventsResult
				e2.MustCall(wire.MethodEvents, rpc.EventsParams{RunID: run.RunID}, &evs)
				require.Equal(t, agent.StatePaused, evs.State)
				e2.MustCall(wire.MethodResume, rpc.RunRef{RunID: run.RunID}, nil)
			}
			st := e2.Finished(run.RunID)
			assert.Equal(t, agent.StateCompleted, st.State, st.Error)
			assert.Equal(t, "started\n", env.WorkspaceFile("runs.txt"), "the command ran once")
			res := toolResults(env)["call_once"]
			assert.Contains(t, res, "restart", "the model is told the command was interrupted")
			assert.Contains(t, res, "not run again")
		})
	}
}

// proc is a process named by its pid and its start time, so that a
// recycled pid is not mistaken for it.
type osProc struct{ pid, start string }

// awaitPids waits for the command to write its pids, and names the
// processes they are. The command runs in the kernel sandbox's own PID
// namespace, so the pids it sees are not the daemon's: each is the process
// whose innermost pid (NSpid) it is and whose directory is the workspace.
func awaitPids(t *testing.T, env *Env) []osProc {
	t.Helper()
	var pids []osProc
	awaitCond(t, "the command's pids", func() bool {
		b, err := os.ReadFile(filepath.Join(env.Root, "pids.txt"))
		if err != nil || !strings.HasSuffix(string(b), "\n") {
			return false
		}
		pids = nil
		for _, f := range strings.Fields(string(b)) {
			host := hostPid(f, env.Root)
			if start, ok := procStart(host); ok && host != "" {
				pids = append(pids, osProc{host, start})
			}
		}
		return len(pids) == 2
	})
	return pids
}

// hostPid is the pid, as this process sees it, of the process that sees
// itself as nsPid and runs in dir; "" when there is none.
func hostPid(nsPid, dir string) string {
	statuses, _ := filepath.Glob("/proc/[0-9]*/status")
	for _, st := range statuses {
		b, err := os.ReadFile(st)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) < 2 || f[0] != "NSpid:" || f[len(f)-1] != nsPid {
				continue
			}
			pid := filepath.Base(filepath.Dir(st))
			if cwd, err := os.Readlink(filepath.Join("/proc", pid, "cwd")); err == nil && cwd == dir {
				return pid
			}
		}
	}
	return ""
}

// awaitGone waits for p to be gone (or a zombie, which runs nothing).
func awaitGone(t *testing.T, p osProc) {
	t.Helper()
	awaitCond(t, "process "+p.pid+" to be gone", func() bool {
		start, alive := procStart(p.pid)
		return !alive || start != p.start
	})
}

// procStart reads a live process's start time (field 22 of its stat); a
// zombie, which runs nothing, counts as gone.
func procStart(pid string) (string, bool) {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return "", false
	}
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if i < 0 || len(f) < 20 || f[0] == "Z" {
		return "", false
	}
	return f[19], true
}

// awaitCond polls a condition of the world outside the wire (files,
// processes) until it holds, failing after DefaultTimeout (scaled).
func awaitCond(t *testing.T, desc string, cond func() bool) {
	t.Helper()
	await.Until(t, desc, DefaultTimeout, cond)
}
