package acp

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/tools"
)

const choiceScript = `{"turns": [
  {"name": "ask", "match": {"lastUser": "colour"}, "reply": {"toolCalls": [
    {"id": "call_ask_1", "name": "ask_user", "arguments": {"question": "Which colour?", "options": ["red", "blue"]}}]}},
  {"name": "chose-blue", "match": {"afterTool": "ask_user", "lastTool": "chose: blue"}, "reply": {"text": "You chose blue."}},
  {"name": "ask-many", "match": {"lastUser": "toppings"}, "reply": {"toolCalls": [
    {"id": "call_ask_2", "name": "ask_user", "arguments": {"question": "Which toppings?", "options": ["cheese", "ham", "olives"], "multiple": true}}]}},
  {"name": "chose-many", "match": {"afterTool": "ask_user", "lastTool": "chose: cheese, olives"}, "reply": {"text": "Cheese and olives it is."}}
]}`

// A choice without form elicitation is asked in the chat as numbered
// options, never as a permission (whose options clients show by kind).
func TestChoiceAskedInChat(t *testing.T) {
	h := start(t, config{stateDir: t.TempDir(), modelURL: script(t, choiceScript)})
	id := h.newSession(t.TempDir())
	if stop := h.prompt(id, "pick a colour"); stop != acpsdk.StopReasonEndTurn {
		t.Fatalf("stop reason %q", stop)
	}
	asked := h.client.text(id)
	for _, want := range []string{"Which colour?", "\n1. red", "\n2. blue", "number or the name of an option"} {
		if !strings.Contains(asked, want) {
			t.Fatalf("the choice in the chat lacks %q: %q", want, asked)
		}
	}
	if n := len(h.client.asked); n != 0 {
		t.Fatalf("%d permission requests for a choice", n)
	}
	if stop := h.prompt(id, "2"); stop != acpsdk.StopReasonEndTurn {
		t.Fatalf("stop reason %q", stop)
	}
	if !strings.HasSuffix(h.client.text(id), "You chose blue.") {
		t.Fatalf("the number was not taken as the option: %q", h.client.text(id))
	}
}

// An answer that names no option of a closed choice is asked again, with
// what was wrong; the run waits on.
func TestChoiceWrongAnswerAskedAgain(t *testing.T) {
	h := start(t, config{stateDir: t.TempDir(), modelURL: script(t, choiceScript)})
	id := h.newSession(t.TempDir())
	h.prompt(id, "pick a colour")
	if stop := h.prompt(id, "green"); stop != acpsdk.StopReasonEndTurn {
		t.Fatalf("stop reason %q", stop)
	}
	if got := h.client.text(id); !strings.Contains(got, "`green` is not one of the options.") || strings.Count(got, "Which colour?") != 2 {
		t.Fatalf("not asked again: %q", got)
	}
	h.prompt(id, "Blue")
	if !strings.HasSuffix(h.client.text(id), "You chose blue.") {
		t.Fatalf("the label was not taken as the option: %q", h.client.text(id))
	}
}

func TestMultipleChoiceInChat(t *testing.T) {
	h := start(t, config{stateDir: t.TempDir(), modelURL: script(t, choiceScript)})
	id := h.newSession(t.TempDir())
	h.prompt(id, "choose toppings")
	if got := h.client.text(id); !strings.Contains(got, "\n3. olives") || !strings.Contains(got, "separated by commas") {
		t.Fatalf("the choice in the chat: %q", got)
	}
	h.prompt(id, "1, olives")
	if !strings.HasSuffix(h.client.text(id), "Cheese and olives it is.") {
		t.Fatalf("the options were not taken: %q", h.client.text(id))
	}
}

func TestChatReply(t *testing.T) {
	choice := agent.InputRequest{RequestID: "q1", Kind: agent.KindChoice, Options: []tools.Option{
		{OptionID: "a", Label: "Red"}, {OptionID: "b", Label: "Dark, blue"}, {OptionID: "c", Label: "Green"}}}
	many := choice
	many.Multiple = true
	for _, tc := range []struct {
		name    string
		req     agent.InputRequest
		text    string
		option  string
		answers []string
		free    string
	}{
		{"number", choice, " 2 ", "b", nil, ""},
		{"number with a dot", choice, "3.", "c", nil, ""},
		{"label any case", choice, "red", "a", nil, ""},
		{"label with a comma", choice, "dark, blue", "b", nil, ""},
		{"id", choice, "C", "c", nil, ""},
		{"no such option", choice, "purple", "", nil, "purple"},
		{"several for a single choice", choice, "1, 3", "", nil, "1, 3"},
		{"several", many, "1, green", "", []string{"a", "c"}, ""},
		{"numbers with spaces", many, "3 1 3", "", []string{"c", "a"}, ""},
		{"one of several", many, "2", "b", nil, ""},
		{"a question", agent.InputRequest{RequestID: "q2", Kind: agent.KindQuestion}, " 42\n", "", nil, "42"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := chatReply(tc.req, tc.text)
			free := ""
			if p.Text != nil {
				free = *p.Text
			}
			if p.RequestID != tc.req.RequestID || p.OptionID != tc.option || !slices.Equal(p.Answers, tc.answers) || free != tc.free {
				t.Fatalf("chatReply(%q) = %+v (text %q)", tc.text, p, free)
			}
		})
	}
}

const commandScript = `{"turns": [
  {"name": "auto", "match": {"lastUser": "greet"}, "reply": {"toolCalls": [
    {"id": "call_e", "name": "run_cmd", "arguments": {"command": "echo hello: world", "cwd": "sub"}}]}},
  {"name": "touch", "match": {"lastUser": "make a file"}, "reply": {"toolCalls": [
    {"id": "call_t", "name": "run_cmd", "arguments": {"command": "touch made.txt"}}]}},
  {"name": "after-reject", "match": {"afterTool": "run_cmd", "lastTool": "rejected"}, "reply": {"text": "Fine, I did not touch it."}},
  {"name": "after", "repeat": true, "match": {"afterTool": "run_cmd"}, "reply": {"text": "Done."}}
]}`

// A command's tool call is titled with its command line, carries it and
// its absolute cwd as raw input, and has no location: the cwd is not a file.
func TestCommandToolCallTitle(t *testing.T) {
	ws := t.TempDir()
	if err := os.Mkdir(filepath.Join(ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	h := start(t, config{stateDir: t.TempDir(), modelURL: script(t, commandScript), policy: tools.ModeFullAuto})
	id := h.newSession(ws)
	if stop := h.prompt(id, "greet the world"); stop != acpsdk.StopReasonEndTurn {
		t.Fatalf("stop reason %q", stop)
	}
	var start *acpsdk.SessionUpdateToolCall
	for _, u := range h.client.of(id) {
		if u.ToolCall != nil && u.ToolCall.ToolCallId == "call_e" {
			start = u.ToolCall
		}
		if u.ToolCallUpdate != nil && u.ToolCallUpdate.ToolCallId == "call_e" && len(u.ToolCallUpdate.Locations) > 0 {
			t.Fatalf("a command's update has locations: %+v", u.ToolCallUpdate.Locations)
		}
	}
	if start == nil {
		t.Fatal("no tool_call for the command")
	}
	if start.Title != "`echo hello: world` in sub" || start.Kind != acpsdk.ToolKindExecute || len(start.Locations) != 0 {
		t.Fatalf("tool_call title %q, kind %q, locations %+v", start.Title, start.Kind, start.Locations)
	}
	raw, _ := start.RawInput.(map[string]any)
	if raw["command"] != "echo hello: world" || raw["cwd"] != filepath.Join(mustReal(t, ws), "sub") {
		t.Fatalf("raw input %+v", start.RawInput)
	}
}

// A command to approve shows its command line the same way; rejecting it
// lets the run go on.
func TestCommandPermissionRejectedRunGoesOn(t *testing.T) {
	ws := t.TempDir()
	h := start(t, config{stateDir: t.TempDir(), modelURL: script(t, commandScript)})
	id := h.newSession(ws)
	h.client.setPermission(func(acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
		return selected(tools.RejectOnce)
	})
	if stop := h.prompt(id, "make a file"); stop != acpsdk.StopReasonEndTurn {
		t.Fatalf("stop reason %q", stop)
	}
	req := <-h.client.asked
	tc := req.ToolCall
	if tc.Title == nil || *tc.Title != "`touch made.txt`" || tc.Kind == nil || *tc.Kind != acpsdk.ToolKindExecute || len(tc.Locations) != 0 {
		t.Fatalf("permission tool call %+v", tc)
	}
	raw, _ := tc.RawInput.(map[string]any)
	if raw["command"] != "touch made.txt" || raw["cwd"] != mustReal(t, ws) {
		t.Fatalf("raw input %+v", tc.RawInput)
	}
	if !strings.HasSuffix(h.client.text(id), "Fine, I did not touch it.") {
		t.Fatalf("the run did not go on: %q", h.client.text(id))
	}
	if _, err := os.Stat(filepath.Join(ws, "made.txt")); err == nil {
		t.Fatal("the rejected command ran")
	}
}

// What "Always allow" would allow from then on (a command's family) is
// said with the permission; without that option, nothing is said.
func TestPermissionSaysWhatAlwaysCovers(t *testing.T) {
	cover := "`go test` with any arguments, except options that run another program"
	req := agent.InputRequest{Kind: agent.KindConfirmCommand, RequestID: "q_1", ToolCallID: "call_1", Command: "go test ./...",
		Cwd: ".", GrantCovers: []string{cover, "writing coverage.out"}, Options: []tools.Option{
			{OptionID: string(tools.AllowOnce), Label: "Allow"}, {OptionID: string(tools.AllowSession), Label: "Allow for this session"},
			{OptionID: string(tools.AllowAlways), Label: "Always allow"}, {OptionID: string(tools.RejectOnce), Label: "Reject"}}}
	tc := permissionCall(t.TempDir(), req, tools.KindExecute)
	want := "\"Always allow\" also allows from now on: " + cover + "; writing coverage.out"
	var texts []string
	for _, c := range tc.Content {
		if c.Content != nil && c.Content.Content.Text != nil {
			texts = append(texts, c.Content.Content.Text.Text)
		}
	}
	if !slices.Contains(texts, want) {
		t.Fatalf("the permission's text %q does not say %q", texts, want)
	}
	req.Options = slices.DeleteFunc(req.Options, func(o tools.Option) bool { return o.OptionID == string(tools.AllowAlways) })
	if got := grantCovers(req); got != "" {
		t.Fatalf("without Always allow: %q", got)
	}
}

func TestCommandTitle(t *testing.T) {
	long := strings.Repeat("x", titleMax+5)
	for _, tc := range []struct{ line, cwd, want string }{
		{"go test ./...", ".", "`go test ./...`"},
		{"make", "", "`make`"},
		{"make check", "web/app", "`make check` in web/app"},
		{"echo `date`", ".", "`` echo `date` ``"},
		{"`cmd` arg", ".", "`` `cmd` arg ``"},
		{"cat <<EOF\nhello\nEOF", ".", "`cat <<EOF …`"},
		{long, ".", "`" + long[:titleMax] + " …`"},
	} {
		if got := commandTitle(tc.line, tc.cwd); got != tc.want {
			t.Errorf("commandTitle(%q, %q) = %q, want %q", tc.line, tc.cwd, got, tc.want)
		}
	}
	if got := codeBlock("sh", "x ```y```"); got != "````sh\nx ```y```\n````" {
		t.Errorf("codeBlock = %q", got)
	}
}

// A permission the client answers cancelled stops the turn, and the audit
// log records it like any other decision.
func TestCancelledPermissionAudited(t *testing.T) {
	state, ws := t.TempDir(), t.TempDir()
	h := start(t, config{stateDir: state, modelURL: script(t, writeScript)})
	id := h.newSession(ws)
	h.client.setPermission(func(acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
		return acpsdk.RequestPermissionResponse{Outcome: acpsdk.RequestPermissionOutcome{Cancelled: &acpsdk.RequestPermissionOutcomeCancelled{}}}
	})
	if stop := h.prompt(id, "write my notes"); stop != acpsdk.StopReasonCancelled {
		t.Fatalf("stop reason %q", stop)
	}
	var line struct {
		Tool, Decision, By string
		Paths              []string
	}
	waitFor(t, "the audit line", func() bool {
		for _, l := range readLines(t, filepath.Join(state, "audit.jsonl")) {
			if json.Unmarshal([]byte(l), &line) == nil && line.Decision == "cancelled" {
				return true
			}
		}
		return false
	})
	if line.Tool != "write_file" || line.By != "cancel" || !slices.Equal(line.Paths, []string{"notes.txt"}) {
		t.Fatalf("audit line %+v", line)
	}
}

func readLines(t *testing.T, path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

// Locations are files: a directory (list_dir's) is left out, a file that
// does not exist yet (about to be written) stays.
func TestLocationsAreFiles(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "src", "a.go"), []byte("package a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tr := newTranslator(root, 1000, nil)
	got := tr.locations([]tools.Location{{Path: "src"}, {Path: "src/a.go", Line: 3}, {Path: "new.txt"}, {Path: "."}})
	if len(got) != 2 || got[0].Path != filepath.Join(root, "src", "a.go") || got[0].Line == nil || *got[0].Line != 3 ||
		got[1].Path != filepath.Join(root, "new.txt") {
		t.Fatalf("locations %+v", got)
	}
}

// A kind ACP has never heard of is asked and answered by its generic form:
// its options, the words that go with one of them, the method that takes
// the answer.
func TestAnUnknownKindByItsForm(t *testing.T) {
	req := agent.InputRequest{RequestID: "q_1", Kind: "made_up", Title: "Vote", Message: "Ship it?",
		AnswerWith: agent.AnswerReply, Options: []tools.Option{{OptionID: "for", Label: "For"}, {OptionID: "against", Label: "Against"}},
		Input: &agent.TextInput{Label: "Why", With: []string{"against"}}}

	text := chatQuestion(req)
	for _, want := range []string{"**Vote**", "Ship it?", "\n1. For", "\n2. Against", "After 2, add why on the same line (`2: your words`)"} {
		if !strings.Contains(text, want) {
			t.Fatalf("the request in the chat lacks %q: %q", want, text)
		}
	}
	for typed, want := range map[string]agent.ReplyParams{
		"1":                     {RequestID: "q_1", OptionID: "for"},
		"against":               {RequestID: "q_1", OptionID: "against"},
		"2: not tested":         {RequestID: "q_1", OptionID: "against", Text: ptr("not tested")},
		"Against - not tested!": {RequestID: "q_1", OptionID: "against", Text: ptr("not tested!")},
		"1 because":             {RequestID: "q_1", Text: ptr("1 because")}, // no words go with For: the daemon refuses it
	} {
		if got := chatReply(req, typed); !equalReply(got, want) {
			t.Errorf("%q read as %+v, want %+v", typed, got, want)
		}
	}

	schema := formSchema(req)
	if _, ok := schema.Properties["text"]; !ok || len(schema.Required) != 1 {
		t.Fatalf("the form: %+v", schema)
	}
	got := formReply(req, map[string]any{"answer": "against", "text": "not tested"})
	if !equalReply(got, agent.ReplyParams{RequestID: "q_1", OptionID: "against", Text: ptr("not tested")}) {
		t.Fatalf("the form's answer read as %+v", got)
	}
}

func equalReply(a, b agent.ReplyParams) bool {
	return a.RequestID == b.RequestID && a.OptionID == b.OptionID && slices.Equal(a.Answers, b.Answers) &&
		(a.Text == nil) == (b.Text == nil) && (a.Text == nil || *a.Text == *b.Text)
}

func ptr(s string) *string { return &s }
