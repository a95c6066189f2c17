package acp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/tools/sandbox"
)

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// announced waits for the session's available_commands_update and returns
// its commands by name, in order.
func announced(t *testing.T, h *harness, id acpsdk.SessionId) []acpsdk.AvailableCommand {
	t.Helper()
	var cmds []acpsdk.AvailableCommand
	waitFor(t, "available commands", func() bool {
		for _, u := range h.client.of(id) {
			if u.AvailableCommandsUpdate != nil {
				cmds = u.AvailableCommandsUpdate.AvailableCommands
				return true
			}
		}
		return false
	})
	return cmds
}

// Custom commands are announced with agentd's own, and "/name args"
// reaches the model expanded, while the session's history keeps what the
// user typed.
func TestCustomCommandsOverACP(t *testing.T) {
	model := modeltest.StartT(t, &modeltest.Script{Turns: []modeltest.Turn{
		{Name: "review", Match: modeltest.Match{LastUser: "Review cart.go with care"}, Reply: modeltest.Reply{Text: "Reviewed."}},
	}})
	ws, user, state := t.TempDir(), t.TempDir(), t.TempDir()
	writeTree(t, filepath.Join(ws, ".agentd", "commands"), map[string]string{
		"review.md": "---\ndescription: Review a file\nargument-hint: <file>\n---\nReview $ARGUMENTS with care.",
		"broken.md": "---\nnever closed",
		"search.md": "A command named like agentd's own.",
	})
	writeTree(t, filepath.Join(user, "commands"), map[string]string{"git/commit.md": "Write the commit message."})
	h := start(t, config{stateDir: state, modelURL: model.URL, userConfigDir: user})
	id := h.newSession(ws)

	cmds := announced(t, h, id)
	names := make([]string, len(cmds))
	desc := map[string]acpsdk.AvailableCommand{}
	for i, c := range cmds {
		names[i] = c.Name
		desc[c.Name] = c
	}
	for i, own := range commands {
		if names[i] != own.Name {
			t.Fatalf("announced %q: agentd's own come first", names)
		}
	}
	if got := strings.Join(names[len(commands):], " "); got != "broken git:commit review" {
		t.Fatalf("announced %q: after agentd's own, the custom commands by name, without the one named like ours", names)
	}
	if c := desc["review"]; c.Description != "Review a file (workspace command)" || c.Input == nil || c.Input.Unstructured.Hint != "<file>" {
		t.Fatalf("review announced as %+v", c)
	}
	if c := desc["git:commit"]; c.Description != "Write the commit message. (user command)" {
		t.Fatalf("git:commit announced as %+v", c)
	}
	if !strings.HasPrefix(desc["broken"].Description, "broken: the front matter has no closing --- line") {
		t.Fatalf("broken announced as %+v", desc["broken"])
	}

	if stop := h.prompt(id, "/review cart.go"); stop != acpsdk.StopReasonEndTurn {
		t.Fatalf("stop reason %s", stop)
	}
	if got := h.client.text(id); !strings.Contains(got, "Reviewed.") {
		t.Fatalf("answer %q", got)
	}
	reqs := model.Requests()
	if last := reqs[len(reqs)-1].Last(); last.Role != "user" || !strings.Contains(last.Content, "Review cart.go with care.") || strings.Contains(last.Content, "/review") {
		t.Fatalf("the model read %+v", last)
	}

	_, err := h.conn.Prompt(h.ctx(), acpsdk.PromptRequest{SessionId: id, Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("/broken please")}})
	if err == nil || !strings.Contains(err.Error(), "no closing ---") {
		t.Fatalf("a broken command: %v", err)
	}

	// Loaded again, the history shows what the user typed.
	h.stop()
	h2 := start(t, config{stateDir: state, modelURL: model.URL, userConfigDir: user})
	if _, err := h2.conn.LoadSession(h2.ctx(), acpsdk.LoadSessionRequest{SessionId: id, Cwd: ws, McpServers: []acpsdk.McpServer{}}); err != nil {
		t.Fatalf("session/load: %v", err)
	}
	ups := h2.client.of(id)
	if len(ups) == 0 || ups[0].UserMessageChunk == nil || ups[0].UserMessageChunk.Content.Text.Text != "/review cart.go" {
		t.Fatalf("replay does not start with the typed prompt: %+v", ups)
	}
	if len(announced(t, h2, id)) != len(cmds) {
		t.Fatal("session/load announces the commands again")
	}
}

// A hook that fails is shown in the chat, and the turn ends as usual.
func TestHookFailureShownOverACP(t *testing.T) {
	if !sandbox.Check().Supports(sandbox.Read) {
		t.Skip("the kernel sandbox cannot confine hooks here")
	}
	model := modeltest.StartT(t, &modeltest.Script{Turns: []modeltest.Turn{{Reply: modeltest.Reply{Text: "Hello."}}}})
	hooks := agent.Hooks{agent.HookRunFinished: {{Command: "echo 'no notifier' >&2; exit 1", Timeout: 20 * time.Second}}}
	h := start(t, config{stateDir: t.TempDir(), modelURL: model.URL, hooks: hooks})
	id := h.newSession(t.TempDir())
	if stop := h.prompt(id, "hi"); stop != acpsdk.StopReasonEndTurn {
		t.Fatalf("stop reason %s", stop)
	}
	got := h.client.text(id)
	if !strings.Contains(got, "Hello.") || !strings.Contains(got, "> agentd: The run_finished hook `echo 'no notifier' >&2; exit 1` failed: exit status 1: no notifier; the run went on without it.") {
		t.Fatalf("chat %q", got)
	}
}
