package acp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/agent/modeltest"
)

const twoRunsScript = `{
  "endpoint": {"models": [{"id": "fake"}, {"id": "big"}]},
  "turns": [
  {"name": "first", "match": {"lastUser": "first question"}, "reply": {"reasoning": "Greet them.", "text": "Hello there.", "chunks": 2}},
  {"name": "second", "match": {"lastUser": "second question"}, "reply": {"text": "Goodbye now.", "chunks": 2}},
  {"name": "write", "match": {"lastUser": "write it"}, "reply": {"toolCalls": [
    {"id": "call_w", "name": "write_file", "arguments": {"path": "auto.txt", "content": "no one asked\n"}}]}},
  {"name": "written", "match": {"afterTool": "write_file"}, "reply": {"text": "Written."}}
]}`

// replayed is a session's replay: each user message, then what the agent
// said and thought after it.
type replayed struct{ user, said, thought string }

func replayOf(ups []acpsdk.SessionUpdate) []replayed {
	var out []replayed
	for _, u := range ups {
		switch {
		case u.UserMessageChunk != nil:
			out = append(out, replayed{user: u.UserMessageChunk.Content.Text.Text})
		case u.AgentMessageChunk != nil && len(out) > 0:
			out[len(out)-1].said += u.AgentMessageChunk.Content.Text.Text
		case u.AgentThoughtChunk != nil && len(out) > 0:
			out[len(out)-1].thought += u.AgentThoughtChunk.Content.Text.Text
		}
	}
	return out
}

// TestLoadReplaysEveryRunAfterRestart: a session of two prompts, agentd
// restarted, and session/load shows both turns in order, thinking
// included; session/list names it after its first prompt.
func TestLoadReplaysEveryRunAfterRestart(t *testing.T) {
	state, ws := t.TempDir(), t.TempDir()
	url := script(t, twoRunsScript)
	h := start(t, config{stateDir: state, modelURL: url})
	id := h.newSession(ws)
	h.prompt(id, "first question")
	h.prompt(id, "second question")
	h.stop()

	h2 := start(t, config{stateDir: state, modelURL: url})
	list, err := h2.conn.ListSessions(h2.ctx(), acpsdk.ListSessionsRequest{Cwd: &ws})
	if err != nil || len(list.Sessions) != 1 || list.Sessions[0].SessionId != id || list.Sessions[0].Title == nil ||
		*list.Sessions[0].Title != "first question" {
		t.Fatalf("session/list: %+v, %v", list, err)
	}
	if _, err := h2.conn.LoadSession(h2.ctx(), acpsdk.LoadSessionRequest{SessionId: id, Cwd: ws, McpServers: []acpsdk.McpServer{}}); err != nil {
		t.Fatalf("session/load: %v", err)
	}
	got := replayOf(h2.client.of(id))
	want := []replayed{{user: "first question", said: "Hello there.", thought: "Greet them."}, {user: "second question", said: "Goodbye now."}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("replay %+v, want %+v", got, want)
	}
}

// TestConfigOptionsModelEffortAndMode: the model, effort and mode offered
// as config options, set before the first prompt and between prompts, and
// used by the runs; after a restart the loaded session says them again.
func TestConfigOptionsModelEffortAndMode(t *testing.T) {
	s, err := modeltest.ParseScript([]byte(twoRunsScript))
	if err != nil {
		t.Fatal(err)
	}
	srv := modeltest.StartT(t, s)
	state, ws := t.TempDir(), t.TempDir()
	h := start(t, config{stateDir: state, modelURL: srv.URL})
	resp, err := h.conn.NewSession(h.ctx(), acpsdk.NewSessionRequest{Cwd: ws, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	id := resp.SessionId
	opts := optionValues(resp.ConfigOptions)
	if opts["mode"] != "ask" || opts["model"] != "fake" || opts["reasoning_effort"] != "default" {
		t.Fatalf("config options %v", opts)
	}
	if choices := optionChoices(resp.ConfigOptions, "model"); strings.Join(choices, ",") != "fake,big" {
		t.Fatalf("model choices %v", choices)
	}
	if resp.Models == nil || resp.Models.CurrentModelId != "fake" || len(resp.Models.AvailableModels) != 2 {
		t.Fatalf("models %+v", resp.Models)
	}

	set := func(option, value string) map[string]string {
		t.Helper()
		r, err := h.conn.SetSessionConfigOption(h.ctx(), acpsdk.SetSessionConfigOptionRequest{ValueId: &acpsdk.SetSessionConfigOptionValueId{
			SessionId: id, ConfigId: acpsdk.SessionConfigId(option), Value: acpsdk.SessionConfigValueId(value)}})
		if err != nil {
			t.Fatalf("set %s=%s: %v", option, value, err)
		}
		return optionValues(r.ConfigOptions)
	}
	if got := set("model", "big"); got["model"] != "big" {
		t.Fatalf("after setting the model: %v", got)
	}
	if got := set("reasoning_effort", "high"); got["reasoning_effort"] != "high" {
		t.Fatalf("after setting the effort: %v", got)
	}
	h.prompt(id, "first question") // the first run takes the choices made before it

	set("reasoning_effort", "default")
	if _, err := h.conn.UnstableSetSessionModel(h.ctx(), acpsdk.UnstableSetSessionModelRequest{SessionId: id, ModelId: "fake"}); err != nil {
		t.Fatalf("session/set_model: %v", err)
	}
	if got := set("mode", "full-auto"); got["mode"] != "full-auto" {
		t.Fatalf("after setting the mode: %v", got)
	}
	h.prompt(id, "second question")
	if stop := h.prompt(id, "write it"); stop != acpsdk.StopReasonEndTurn {
		t.Fatalf("write: %s", stop)
	}
	select {
	case p := <-h.client.asked:
		t.Fatalf("full-auto asked for permission: %+v", p)
	default:
	}
	if data, err := os.ReadFile(filepath.Join(ws, "auto.txt")); err != nil || string(data) != "no one asked\n" {
		t.Fatalf("auto.txt = %q, %v", data, err)
	}
	var got []string
	for _, r := range srv.Requests() {
		got = append(got, r.Model+"/"+r.ReasoningEffort)
	}
	if strings.Join(got, " ") != "big/high fake/ fake/ fake/" {
		t.Fatalf("requests named %v", got)
	}
	for _, bad := range [][2]string{{"reasoning_effort", "max"}, {"mode", "yolo"}, {"colour", "blue"}} {
		if _, err := h.conn.SetSessionConfigOption(h.ctx(), acpsdk.SetSessionConfigOptionRequest{ValueId: &acpsdk.SetSessionConfigOptionValueId{
			SessionId: id, ConfigId: acpsdk.SessionConfigId(bad[0]), Value: acpsdk.SessionConfigValueId(bad[1])}}); err == nil {
			t.Fatalf("%s=%s accepted", bad[0], bad[1])
		}
	}
	h.stop()

	h2 := start(t, config{stateDir: state, modelURL: srv.URL})
	loaded, err := h2.conn.LoadSession(h2.ctx(), acpsdk.LoadSessionRequest{SessionId: id, Cwd: ws, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatalf("session/load: %v", err)
	}
	if opts := optionValues(loaded.ConfigOptions); opts["mode"] != "full-auto" || opts["model"] != "fake" || opts["reasoning_effort"] != "default" {
		t.Fatalf("loaded config options %v", opts)
	}
	if loaded.Modes == nil || loaded.Modes.CurrentModeId != "full-auto" {
		t.Fatalf("loaded modes %+v", loaded.Modes)
	}
}

func optionValues(opts []acpsdk.SessionConfigOption) map[string]string {
	out := map[string]string{}
	for _, o := range opts {
		if o.Select != nil {
			out[string(o.Select.Id)] = string(o.Select.CurrentValue)
		}
	}
	return out
}

func optionChoices(opts []acpsdk.SessionConfigOption, id string) []string {
	var out []string
	for _, o := range opts {
		if o.Select != nil && string(o.Select.Id) == id && o.Select.Options.Ungrouped != nil {
			for _, v := range *o.Select.Options.Ungrouped {
				out = append(out, string(v.Value))
			}
		}
	}
	return out
}
