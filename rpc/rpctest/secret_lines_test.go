package rpctest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/tools"
)

// secretLinesScript asks for a secret, then tries every read-only way to
// print it: lines that name it (printenv NAME, echo $NAME) and lines that
// print the whole environment (env, printenv). In the same step as the
// question, a line names the secret before it exists (judged without it).
func secretLinesScript() *modeltest.Script {
	run := func(id, line string) modeltest.ToolCall {
		return modeltest.ToolCall{ID: id, Name: tools.RunCmdToolName, Arguments: modeltest.Args(map[string]any{"command": line})}
	}
	return &modeltest.Script{Turns: []modeltest.Turn{
		{Name: "ask", Match: modeltest.Match{LastUser: "publish"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{
			{ID: "call_s", Name: "ask_user", Arguments: modeltest.Args(map[string]any{"question": "Your registry token?", "secret": true, "env_var": "REGISTRY_TOKEN"})},
			run("call_early", "printenv REGISTRY_TOKEN")}}},
		{Name: "print", Match: modeltest.Match{AfterTool: "run_cmd", MinToolResults: 2}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{
			run("call_printenv", "printenv REGISTRY_TOKEN"),
			run("call_echo", "echo $REGISTRY_TOKEN"),
			run("call_env", "env"),
			run("call_all", "printenv")}}},
		{Name: "done", Match: modeltest.Match{MinToolResults: 6}, Reply: modeltest.Reply{Text: "Done."}},
	}}
}

// TestReadOnlyLinesDoNotPrintASecret: a secret given through an ask_user
// secret question reaches only a command whose line names it, and such a
// line asks even in full-auto and although it only reads (printenv NAME,
// echo $NAME); read-only mode refuses it. The lines that print the whole
// environment (env, printenv) do not name it, so it is not in their
// environment; a line judged before the secret existed does not get it.
// The value reaches neither the model nor the editor nor the state.
func TestReadOnlyLinesDoNotPrintASecret(t *testing.T) {
	const secret = "s3cr3t-Value-42"
	for _, mode := range []tools.Mode{tools.ModeFullAuto, tools.ModeReadOnly} {
		t.Run(string(mode), func(t *testing.T) {
			both(t, func(t *testing.T) Config {
				return Config{Script: secretLinesScript(), Policy: mode}
			}, func(t *testing.T, env *Env) {
				e := env.StartInitialized()
				run := e.Run(agent.RunParams{Prompt: "publish the package"})
				q := e.Requests(run.RunID, 1)[0]
				require.Equal(t, agent.KindSecret, q.Kind)
				e.Answer(ReplyText(q.RequestID, secret))

				if mode == tools.ModeFullAuto {
					asked := e.Requests(run.RunID, 3)[1:]
					var lines []string
					for _, c := range asked {
						assert.Equal(t, agent.KindConfirmCommand, c.Kind)
						assert.Equal(t, []string{"REGISTRY_TOKEN"}, c.Secrets, c.Command)
						assert.Contains(t, c.Rule, "secret", c.Command)
						lines = append(lines, c.Command)
					}
					slices.Sort(lines)
					assert.Equal(t, []string{"echo $REGISTRY_TOKEN", "printenv REGISTRY_TOKEN"}, lines,
						"a read-only line that names the secret asks, even in full-auto")
					for _, c := range asked {
						d := tools.AllowOnce
						if c.Command == "printenv REGISTRY_TOKEN" {
							d = tools.RejectOnce
						}
						e.Answer(Decide(c.RequestID, d, ""))
					}
				}
				st := e.Finished(run.RunID)
				require.Equal(t, agent.StateCompleted, st.State, st.Error)
				assert.Len(t, e.inputRequestsAll(run.RunID), map[tools.Mode]int{tools.ModeFullAuto: 3, tools.ModeReadOnly: 1}[mode])

				results := toolResults(env)
				switch mode {
				case tools.ModeFullAuto:
					assert.Contains(t, results["call_echo"], "[secret $REGISTRY_TOKEN]", "the approved line got the value; the model reads its name")
					for _, id := range []string{"call_early", "call_env", "call_all"} {
						assert.Contains(t, results[id], "[exit code", "%s ran unasked", id)
						assert.NotContains(t, results[id], "REGISTRY_TOKEN=", "%s: the secret is not in its environment", id)
					}
				case tools.ModeReadOnly:
					for _, id := range []string{"call_printenv", "call_echo"} {
						assert.Contains(t, results[id], "the policy denies it", id)
						assert.Contains(t, results[id], "secret", id)
					}
				}
				for _, r := range env.Model.Requests() {
					for _, m := range r.Messages {
						assert.NotContains(t, m.Content, secret)
					}
				}
				for _, m := range e.Messages() {
					assert.NotContains(t, string(m.Params), secret)
				}
				_ = filepath.Walk(env.State, func(p string, fi os.FileInfo, err error) error {
					if err == nil && !fi.IsDir() && !strings.HasSuffix(p, ".sock") {
						data, _ := os.ReadFile(p)
						assert.NotContains(t, string(data), secret, p)
					}
					return nil
				})
			})
		})
	}
}
