package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseTextToolCall(t *testing.T) {
	for name, tc := range map[string]struct {
		text, tool, args, rest string
	}{
		"bare":         {`{"tool": "read_file", "arguments": {"path": "a.go"}}`, "read_file", `{"path": "a.go"}`, ""},
		"fenced":       {"I will read it.\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.go\"}}\n```", "read_file", `{"path": "a.go"}`, "I will read it."},
		"among prose":  {`Let me check {"tool":"grep","args":{"pattern":"x{2}"}} then answer.`, "grep", `{"pattern":"x{2}"}`, "Let me check  then answer."},
		"openai shape": {`{"function": {"name": "list_dir", "arguments": "{\"path\": \".\"}"}}`, "list_dir", `{"path": "."}`, ""},
		"no args":      {`{"tool": "list_dir"}`, "list_dir", `{}`, ""},
		"braces in strings": {`{"tool": "write_file", "arguments": {"path": "a", "content": "func() { \"}\" }"}}`, "write_file",
			`{"path": "a", "content": "func() { \"}\" }"}`, ""},
	} {
		t.Run(name, func(t *testing.T) {
			rest, call := parseTextToolCall(tc.text, 1)
			require.NotNil(t, call)
			assert.Equal(t, tc.tool, call.Name)
			assert.JSONEq(t, tc.args, string(call.Args))
			assert.Equal(t, tc.rest, rest)
			assert.NotEmpty(t, call.ID)
		})
	}
	for _, text := range []string{"Just an answer.", `A set {1, 2} is not JSON.`, `{"not": "a call"}`} {
		_, call := parseTextToolCall(text, 1)
		assert.Nil(t, call, text)
	}
}

func TestCompactKeepsPairsAndAlternation(t *testing.T) {
	var msgs []Message
	for turn := 0; turn < 6; turn++ {
		msgs = append(msgs, Message{Role: RoleUser, Content: fmt.Sprintf("question %d", turn)})
		for step := 0; step < 3; step++ {
			id := fmt.Sprintf("c%d_%d", turn, step)
			msgs = append(msgs,
				Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: id, Name: "read_file", Args: json.RawMessage(`{"path":"a.go"}`)}}},
				Message{Role: RoleTool, ToolCallID: id, Content: strings.Repeat("x", 2000)})
		}
		msgs = append(msgs, Message{Role: RoleAssistant, Content: fmt.Sprintf("answer %d", turn)})
	}
	kept, summary := compact(msgs, 4000, 400)
	require.NotEmpty(t, summary)
	assert.Less(t, sumTokens(kept), sumTokens(msgs))
	assert.Equal(t, RoleUser, kept[0].Role, "the kept history starts with a user message")
	assert.Contains(t, kept[0].Content, "question 5", "the current prompt is kept")
	seen := map[string]bool{}
	for i, m := range kept {
		for _, c := range m.ToolCalls {
			seen[c.ID] = true
		}
		if m.Role == RoleTool {
			assert.True(t, seen[m.ToolCallID], "tool result %d has its call", i)
		}
		if i > 0 && m.Role == RoleUser {
			assert.NotEqual(t, RoleUser, kept[i-1].Role, "no two user messages in a row")
		}
	}
	assert.Contains(t, summary, "The user asked: question 0")

	small, none := compact(msgs[:3], 128_000, 100)
	assert.Equal(t, msgs[:3], small)
	assert.Empty(t, none)
}

func TestRunawayGuard(t *testing.T) {
	var g runaway
	kept, cut := g.feed("A normal sentence, with some variety in it. ")
	assert.False(t, cut)
	assert.Equal(t, "A normal sentence, with some variety in it. ", kept)
	var g2 runaway
	kept, cut = g2.feed("start " + strings.Repeat("ab", 300))
	assert.True(t, cut)
	assert.Contains(t, kept, "[output cut")
	assert.Less(t, len(kept), 500)
	var g3 runaway
	_, cut = g3.feed(strings.Repeat("=", 80) + "\n" + strings.Repeat("-", 80))
	assert.False(t, cut, "a ruler is not a runaway")
}

func TestCallSignatureIgnoresKeyOrder(t *testing.T) {
	a := ToolCall{Name: "grep", Args: json.RawMessage(`{"pattern":"x","path":"."}`)}
	b := ToolCall{Name: "grep", Args: json.RawMessage(`{"path": ".", "pattern": "x"}`)}
	c := ToolCall{Name: "grep", Args: json.RawMessage(`{"path": ".", "pattern": "y"}`)}
	assert.Equal(t, callSignature(a), callSignature(b))
	assert.NotEqual(t, callSignature(a), callSignature(c))
}

func TestClassify(t *testing.T) {
	assert.Equal(t, classChat, classify("hello!"))
	assert.Equal(t, classChat, classify("Thanks"))
	assert.Equal(t, classTask, classify("Fix the failing test in cart.go"))
	assert.Equal(t, classTask, classify("please rename Total to Sum"))
	assert.Equal(t, classQuestion, classify("Where is the cart total computed?"))
}

func TestStoreSkipsCorruptRecords(t *testing.T) {
	dir := t.TempDir()
	st, err := openStore(dir)
	require.NoError(t, err)
	good := &runRecord{ID: "r_good", State: StateRequiresAction}
	require.NoError(t, st.saveRun(good, true))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "runs", "r_bad.json"), []byte("{torn"), 0o600))
	recs, err := st.loadRuns()
	assert.Error(t, err, "the corrupt record is reported")
	require.Len(t, recs, 1, "and the good one still loads")
	assert.Equal(t, "r_good", recs[0].ID)
}

func TestEventLogToleratesTornLine(t *testing.T) {
	st, err := openStore(t.TempDir())
	require.NoError(t, err)
	f, err := st.openEventLog("r_1")
	require.NoError(t, err)
	for i := int64(1); i <= 3; i++ {
		require.NoError(t, appendLine(f, Event{Seq: i, Kind: EventUpdate, Params: json.RawMessage(`{}`)}))
	}
	_, err = f.WriteString(`{"seq":4,"kind":"upd`)
	require.NoError(t, err)
	f.Close()
	evs, err := st.readEvents("r_1", 1)
	require.NoError(t, err)
	require.Len(t, evs, 2)
	assert.Equal(t, int64(2), evs[0].Seq)
	last, _ := st.sentSeqs("r_1")
	assert.Equal(t, int64(3), last)

	// Opened again after the crash, the log ends the torn line, so the
	// next event is a line of its own.
	f, err = st.openEventLog("r_1")
	require.NoError(t, err)
	require.NoError(t, appendLine(f, Event{Seq: 4, Kind: EventUpdate, Params: json.RawMessage(`{}`)}))
	f.Close()
	last, _ = st.sentSeqs("r_1")
	assert.Equal(t, int64(4), last)
}

// TestEventLogReadsTheOldFormat: logs written before events had kinds
// name the protocol's method; they read back as the same kinds.
func TestEventLogReadsTheOldFormat(t *testing.T) {
	st, err := openStore(t.TempDir())
	require.NoError(t, err)
	old := `{"seq":1,"method":"agent/runState","params":{"runId":"r_1","seq":1,"state":"running"}}
{"seq":2,"method":"agent/update","params":{"runId":"r_1","seq":2,"update":{"kind":"message_chunk","text":"hi"}}}
{"seq":3,"method":"agent/inputRequest","params":{"runId":"r_1","seq":3,"requestId":"q_1","kind":"question"}}
{"seq":4,"method":"agent/inputResolved","params":{"runId":"r_1","seq":4,"requestId":"q_1","outcome":"answered","by":"user"}}
`
	require.NoError(t, os.WriteFile(st.eventsPath("r_1"), []byte(old), 0o600))
	evs, err := st.readEvents("r_1", 0)
	require.NoError(t, err)
	var kinds []EventKind
	for _, ev := range evs {
		kinds = append(kinds, ev.Kind)
		require.NoError(t, ev.Deliver(nobody{}))
	}
	assert.Equal(t, []EventKind{EventRunState, EventUpdate, EventInputRequest, EventInputResolved}, kinds)
}

// newRunForTest is a run with its logs open, outside any agent loop.
func (a *Agent) newRunForTest(rec *runRecord) *run {
	r := &run{a: a, rec: rec}
	if err := r.openLog(); err != nil {
		panic(err)
	}
	return r
}

// TestLegacyMessageJournalTrimsAfterACrash: a run checkpointed before the
// run journal kept its messages in a journal of their own, counted by its
// record; lines the record does not count are cut off.
func TestLegacyMessageJournalTrimsAfterACrash(t *testing.T) {
	st, err := openStore(t.TempDir())
	require.NoError(t, err)
	lines := `{"role":"user","content":"one"}
{"role":"assistant","content":"two"}
{"role":"user","content":"lost"}
`
	require.NoError(t, os.WriteFile(st.messagesPath("r_1"), []byte(lines), 0o600))
	msgs, err := st.loadMessages("r_1", 2)
	require.NoError(t, err)
	assert.Equal(t, []Message{{Role: RoleUser, Content: "one"}, {Role: RoleAssistant, Content: "two"}}, msgs)
	again, err := st.loadMessages("r_1", 2)
	require.NoError(t, err)
	assert.Len(t, again, 2, "the uncounted line was cut off")
	_, err = st.loadMessages("r_1", 3)
	assert.Error(t, err, "a record counting more than the journal holds is an error")
}
