package rpctest

import (
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/tools"
)

// A hostile model (issue 24) gives two calls of one reply the same
// tool_call_id: a harmless command, then one the user will reject. The user
// approves the first (without the sandbox, or with the network its line
// asks for) and rejects the second. Approval was bound to the model's id,
// not to what the user saw: the rejected command ran, with the first one's
// rights. Now every call of a conversation has an id of its own (agentd
// makes one for a call whose id is taken), an answer reaches the call its
// request showed, and the audit names the call that ran.
func TestOneCallIDTwoCommands(t *testing.T) {
	for _, tc := range []struct {
		name     string
		approve  tools.Decision
		network  bool
		approved string // the first command
	}{
		{name: "allow_full", approve: tools.AllowFull, approved: "touch approved.txt"},
		{name: "network", approve: tools.AllowOnce, network: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var (
				mu   sync.Mutex
				hits []string
			)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				hits = append(hits, r.URL.Path)
				mu.Unlock()
				fmt.Fprintln(w, "ok")
			})}
			go srv.Serve(ln)
			t.Cleanup(func() { srv.Close() })
			url := "http://" + ln.Addr().String()
			first, second := tc.approved, "touch rejected.txt; curl -s "+url+"/rejected"
			if tc.network {
				first = "curl -s " + url + "/approved"
			}
			both(t, hostileConfig(tools.ModeAsk, nil), func(t *testing.T, env *Env) {
				firstArgs := cmd(first)
				if tc.network {
					firstArgs["network"] = true // this machine's server is outside the session's network
				}
				env.Model.Append(
					turn("twins", callOf("call_twin", "run_cmd", firstArgs), callOf("call_twin", "run_cmd", cmd(second))),
					doneAfterTools())
				e := env.StartInitialized()
				run := e.Run(agent.RunParams{Prompt: "«twins»"})
				reqs := e.Requests(run.RunID, 2)
				require.Equal(t, first, reqs[0].Command)
				require.Equal(t, second, reqs[1].Command)
				assert.NotEqual(t, reqs[0].ToolCallID, reqs[1].ToolCallID, "each call has its own id")
				assert.Equal(t, "call_twin", reqs[0].ToolCallID, "the model's id where it is unique")
				assert.Equal(t, tc.network, reqs[0].Network)
				e.Answer(Decide(reqs[0].RequestID, tc.approve, ""))
				e.Answer(Decide(reqs[1].RequestID, tools.RejectOnce, "no"))
				st := e.Finished(run.RunID)
				require.Equal(t, agent.StateCompleted, st.State, st.Error)

				assert.NoFileExists(t, filepath.Join(env.Root, "rejected.txt"), "the rejected command never ran")
				if !tc.network {
					assert.FileExists(t, filepath.Join(env.Root, "approved.txt"), "the approved command ran")
				}
				mu.Lock()
				assert.NotContains(t, hits, "/rejected", "the rejected command never reached the network")
				if tc.network {
					assert.Contains(t, hits, "/approved", "the approved command had the network")
				}
				mu.Unlock()

				// The model reads a result for each call, by its own id.
				res := toolResults(env)
				assert.Contains(t, res[reqs[1].ToolCallID], "rejected")
				assert.NotContains(t, res[reqs[0].ToolCallID], "rejected")

				ran := auditLines(t, env, first)
				assert.True(t, hasAudit(ran, string(tc.approve), string(agent.ByUser)), "%v", ran)
				assert.True(t, hasCall(ran, "executed", reqs[0].ToolCallID), "the audit names the call that ran: %v", ran)
				for _, l := range auditLines(t, env, second) {
					assert.NotEqual(t, "executed", l["decision"], "the audit shows the rejected command ran: %v", l)
					assert.Equal(t, reqs[1].ToolCallID, l["callId"], "%v", l)
				}
			})
		})
	}
}

func hasCall(lines []map[string]any, decision, callID string) bool {
	for _, l := range lines {
		if l["decision"] == decision && l["callId"] == callID {
			return true
		}
	}
	return false
}
