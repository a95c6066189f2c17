package acp

import (
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"testing/iotest"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/tools"
)

// debugLog is a debug-level JSON log the test reads back.
func debugLog() (*slog.Logger, *syncBuffer) {
	buf := &syncBuffer{}
	return slog.New(slog.NewJSONHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})), buf
}

type logLine map[string]any

func logLines(t *testing.T, buf *syncBuffer) []logLine {
	t.Helper()
	var out []logLine
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m logLine
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// find returns the first line with every field given, "" meaning any
// value; a string value must be contained in the field.
func find(lines []logLine, fields map[string]string) logLine {
	for _, l := range lines {
		ok := true
		for k, v := range fields {
			s, has := l[k].(string)
			if !has || !strings.Contains(s, v) {
				ok = false
				break
			}
		}
		if ok {
			return l
		}
	}
	return nil
}

// Every message both ways is logged at debug level, responses with the
// method they answer: a permission's outcome among them.
func TestWireLogRecordsEveryMessage(t *testing.T) {
	log, buf := debugLog()
	h := start(t, config{stateDir: t.TempDir(), modelURL: script(t, writeScript), log: log})
	id := h.newSession(t.TempDir())
	h.client.setPermission(func(acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
		return selected(tools.RejectOnce)
	})
	h.prompt(id, "write my notes")
	lines := logLines(t, buf)
	for _, want := range []map[string]string{
		{"msg": "acp recv", "kind": "request", "method": "initialize", "params": `"protocolVersion":1`},
		{"msg": "acp send", "kind": "response", "method": "initialize", "result": `"loadSession":true`},
		{"msg": "acp recv", "kind": "request", "method": "session/new"},
		{"msg": "acp send", "kind": "response", "method": "session/new", "result": string(id)},
		{"msg": "acp recv", "kind": "request", "method": "session/prompt", "params": "write my notes"},
		{"msg": "acp send", "kind": "notification", "method": "session/update", "params": `"sessionUpdate":"tool_call"`},
		{"msg": "acp send", "kind": "request", "method": "session/request_permission", "params": "notes.txt"},
		{"msg": "acp recv", "kind": "response", "method": "session/request_permission", "result": `"optionId":"reject_once"`},
		{"msg": "acp permission answered", "decision": "reject_once"},
		{"msg": "acp send", "kind": "response", "method": "session/prompt", "result": `"stopReason":"end_turn"`},
	} {
		if find(lines, want) == nil {
			t.Errorf("no log line with %v", want)
		}
	}
	if t.Failed() {
		t.Logf("log:\n%s", buf.String())
	}
}

const secretScript = `{"turns": [
  {"name": "ask-secret", "match": {"lastUser": "deploy"}, "reply": {"toolCalls": [
    {"id": "call_sec", "name": "ask_user", "arguments": {"question": "Your deploy token?", "secret": true, "env_var": "DEPLOY_TOKEN"}}]}},
  {"name": "use", "match": {"afterTool": "ask_user"}, "reply": {"toolCalls": [
    {"id": "call_use", "name": "run_cmd", "arguments": {"command": "echo token=$DEPLOY_TOKEN"}}]}},
  {"name": "done", "match": {"afterTool": "run_cmd"}, "reply": {"text": "Deployed."}}
]}`

// The prompt that answers a secret question is not logged, nor is the
// value anywhere later.
func TestWireLogHidesSecretAnswer(t *testing.T) {
	const secret = "s3cr3t-v4lue-42"
	log, buf := debugLog()
	h := start(t, config{stateDir: t.TempDir(), modelURL: script(t, secretScript), log: log})
	h.client.setPermission(func(acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
		return selected(tools.AllowOnce)
	})
	id := h.newSession(t.TempDir())
	if stop := h.prompt(id, "deploy it"); stop != acpsdk.StopReasonEndTurn {
		t.Fatalf("stop reason %q", stop)
	}
	h.prompt(id, "  "+secret+"\n")
	if !strings.HasSuffix(h.client.text(id), "Deployed.") {
		t.Fatalf("the run did not finish: %q", h.client.text(id))
	}
	if strings.Contains(buf.String(), secret) {
		t.Fatalf("the secret is in the log:\n%s", buf.String())
	}
	lines := logLines(t, buf)
	if find(lines, map[string]string{"msg": "acp recv", "method": "session/prompt", "params": "secret question: not logged"}) == nil {
		t.Fatalf("the secret answer's prompt is not marked:\n%s", buf.String())
	}
	if find(lines, map[string]string{"msg": "acp send", "method": "session/update", "params": "token="}) == nil {
		t.Fatalf("the command's output is not logged:\n%s", buf.String())
	}
}

// Lines are logged whole however the reads cut them, and long strings are
// clipped.
func TestWireLogLinesAndClipping(t *testing.T) {
	log, buf := debugLog()
	wl := newWireLog(log, func(string) bool { return false })
	long := strings.Repeat("é", 400)
	in := `{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"` + long + `"}]}}` + "\n" +
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}` + "\n" + "not json\n"
	got, err := io.ReadAll(wl.reader(iotest.OneByteReader(strings.NewReader(in))))
	if err != nil || string(got) != in {
		t.Fatalf("the bytes did not pass through: %v", err)
	}
	lines := logLines(t, buf)
	if len(lines) != 3 {
		t.Fatalf("%d log lines:\n%s", len(lines), buf.String())
	}
	params, _ := lines[0]["params"].(string)
	if !strings.Contains(params, "…(800 bytes)") || len(params) > 2*wireClip {
		t.Fatalf("long text not clipped: %s", params)
	}
	if lines[1]["method"] != "session/cancel" || lines[1]["kind"] != "notification" {
		t.Fatalf("notification logged as %v", lines[1])
	}
	if lines[2]["kind"] != "unreadable" {
		t.Fatalf("bad line logged as %v", lines[2])
	}
}

// TestRedTeamWireLogHidesMCPCredentials: an editor passes MCP servers with
// their tokens in session/new (env entries, headers). The debug log wrote
// them as they came: a log a user attaches to a bug report handed them
// out. Credentials are blanked; the rest stays readable.
func TestRedTeamWireLogHidesMCPCredentials(t *testing.T) {
	log, buf := debugLog()
	l := newWireLog(log, func(string) bool { return false })
	l.record(true, []byte(`{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"/w","mcpServers":[`+
		`{"name":"github","command":"npx","args":["-y","server-github"],"env":[{"name":"GITHUB_PERSONAL_ACCESS_TOKEN","value":"ghp-tok-111"},{"name":"LOG_LEVEL","value":"debug"}]},`+
		`{"type":"http","name":"docs","url":"https://docs.example/mcp","headers":[{"name":"Authorization","value":"Bearer hdr-tok-222"},{"name":"X-Api-Key","value":"key-333"}]}],`+
		`"_meta":{"apiKey":"meta-444"}}}`))
	out := buf.String()
	for _, secret := range []string{"ghp-tok-111", "hdr-tok-222", "key-333", "meta-444"} {
		if strings.Contains(out, secret) {
			t.Errorf("the log holds %s: %s", secret, out)
		}
	}
	for _, kept := range []string{"server-github", `\"value\":\"debug\"`, "https://docs.example/mcp", "GITHUB_PERSONAL_ACCESS_TOKEN"} {
		if !strings.Contains(out, kept) {
			t.Errorf("the log lost %s: %s", kept, out)
		}
	}
}
