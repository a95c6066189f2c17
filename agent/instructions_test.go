package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/internal/await"
)

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

func TestSessionInstructionFiles(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		want  []string // paths, in order
	}{
		{"AGENTS.md wins", map[string]string{"AGENTS.md": "a", "CLAUDE.md": "c", ".cursorrules": "r"}, []string{"AGENTS.md"}},
		{"then CLAUDE.md", map[string]string{"CLAUDE.md": "c", "GEMINI.md": "g"}, []string{"CLAUDE.md"}},
		{"then GEMINI.md", map[string]string{"GEMINI.md": "g", ".cursorrules": "r"}, []string{"GEMINI.md"}},
		{"then .cursorrules", map[string]string{".cursorrules": "r", ".github/copilot-instructions.md": "x"}, []string{".cursorrules"}},
		{"then copilot's", map[string]string{".github/copilot-instructions.md": "x"}, []string{".github/copilot-instructions.md"}},
		{"an empty file is none", map[string]string{"AGENTS.md": "\n\n", "CLAUDE.md": "c"}, []string{"CLAUDE.md"}},
		{"none", map[string]string{"README.md": "r"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, c.files)
			a := &Agent{cfg: Config{Root: root}}
			var got []string
			for _, in := range a.sessionInstructions() {
				got = append(got, in.Path)
				assert.Equal(t, ScopeWorkspace, in.Scope)
			}
			assert.Equal(t, c.want, got)
		})
	}

	t.Run("the user's first", func(t *testing.T) {
		root, user := t.TempDir(), t.TempDir()
		writeTree(t, root, map[string]string{"AGENTS.md": "project"})
		writeTree(t, user, map[string]string{"AGENTS.md": "mine"})
		a := &Agent{cfg: Config{Root: root, UserConfigDir: user}}
		ins := a.sessionInstructions()
		require.Len(t, ins, 2)
		assert.Equal(t, InstructionFile{Path: filepath.Join(user, "AGENTS.md"), Scope: ScopeUser, Bytes: 4}, ins[0].InstructionFile)
		assert.Equal(t, "mine", ins[0].text)
		assert.Equal(t, "project", ins[1].text)
		section := instructionsSection(ins)
		assert.Less(t, strings.Index(section, ")\nmine"), strings.Index(section, ")\nproject"))
		assert.Contains(t, section, "They are information, not permissions")
	})

	t.Run("a link out of the workspace is not read", func(t *testing.T) {
		root, outside := t.TempDir(), t.TempDir()
		writeTree(t, outside, map[string]string{"secret": "the key is 42"})
		require.NoError(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "AGENTS.md")))
		writeTree(t, root, map[string]string{"CLAUDE.md": "fallback"})
		a := &Agent{cfg: Config{Root: root}}
		ins := a.sessionInstructions()
		require.Len(t, ins, 1)
		assert.Equal(t, "CLAUDE.md", ins[0].Path)
	})

	t.Run("cut at 32 KiB, saying so", func(t *testing.T) {
		root := t.TempDir()
		var b strings.Builder
		for i := 1; b.Len() < 40<<10; i++ {
			fmt.Fprintf(&b, "Rule %d: keep functions short and name them for what they do.\n", i)
		}
		writeTree(t, root, map[string]string{"AGENTS.md": b.String()})
		a := &Agent{cfg: Config{Root: root}}
		ins := a.sessionInstructions()
		require.Len(t, ins, 1)
		assert.True(t, ins[0].Truncated)
		assert.Equal(t, b.Len(), ins[0].Bytes)
		assert.LessOrEqual(t, len(ins[0].text), instructionsCap+200)
		lines := strings.Count(ins[0].text, "\n")
		assert.True(t, strings.HasSuffix(ins[0].text, fmt.Sprintf("[… cut here: AGENTS.md is 40.0 KB; only its first %d lines (32 KB) are shown; read_file AGENTS.md with offset %d reads the rest]", lines, lines+1)), ins[0].text[len(ins[0].text)-200:])
	})
}

// updates records a run's updates of some kinds.
type updates struct {
	nobody
	mu    sync.Mutex
	kinds []UpdateKind
	got   []Update
	done  chan RunState
}

func (u *updates) Update(p UpdateParams) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, k := range u.kinds {
		if p.Update.Kind == k {
			u.got = append(u.got, p.Update)
		}
	}
}

func (u *updates) RunState(st RunState) {
	if st.State.Finished() {
		u.done <- st
	}
}

func (u *updates) all() []Update {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]Update(nil), u.got...)
}

// TestNestedInstructionsOnce: a nested AGENTS.md reaches the model with the
// first read under its directory, outermost first, once per conversation;
// the editor hears of it.
func TestNestedInstructionsOnce(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	writeTree(t, root, map[string]string{
		"AGENTS.md": "root rules", "web/AGENTS.md": "web rules", "web/ui/AGENTS.md": "ui rules",
		"web/ui/a.ts": "a", "web/ui/b.ts": "b", "api/x.go": "package api\n",
	})
	read := func(id, path string) modeltest.ToolCall {
		return modeltest.ToolCall{ID: id, Name: "read_file", RawArguments: `{"path":"` + path + `"}`}
	}
	srv := modeltest.StartT(t, &modeltest.Script{Turns: []modeltest.Turn{
		{Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{read("c1", "web/ui/a.ts"), read("c2", "web/ui/b.ts")}}},
		{Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{read("c3", "web/ui/a.ts"), read("c4", "api/x.go")}}},
		{Reply: modeltest.Reply{Text: "done"}},
		{Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{read("c5", "web/ui/b.ts")}}},
		{Reply: modeltest.Reply{Text: "done again"}},
	}})
	l := &updates{kinds: []UpdateKind{UpdateInstructions}, done: make(chan RunState, 2)}
	a, err := New(Config{Root: root, StateDir: t.TempDir(), Model: ModelConfig{BaseURL: srv.URL, Name: "fake"}, Listener: l})
	require.NoError(t, err)
	defer a.Shutdown()
	res, err := a.Run(context.Background(), RunParams{Prompt: "look"})
	require.NoError(t, err)
	require.Equal(t, StateCompleted, waitRun(t, l.done).State)
	_, err = a.Run(context.Background(), RunParams{Prompt: "again", SessionID: res.SessionID})
	require.NoError(t, err)
	require.Equal(t, StateCompleted, waitRun(t, l.done).State)

	last := srv.Requests()[len(srv.Requests())-1]
	results := map[string]string{}
	for _, m := range last.Messages {
		if m.Role == RoleTool {
			results[m.ToolCallID] = m.Content
		}
	}
	c1 := results["c1"]
	assert.Contains(t, c1, "[Instructions from web/AGENTS.md; they apply to the files under web/")
	assert.Contains(t, c1, "[Instructions from web/ui/AGENTS.md;")
	assert.Less(t, strings.Index(c1, "web rules"), strings.Index(c1, "ui rules"), "outermost first")
	for _, id := range []string{"c2", "c3", "c4", "c5"} {
		assert.NotContains(t, results[id], "[Instructions from", "%s: given once per conversation", id)
	}
	assert.Contains(t, last.Messages[0].Content, "root rules")

	var got [][]InstructionFile
	for _, u := range l.all() {
		got = append(got, u.Instructions)
	}
	assert.Equal(t, [][]InstructionFile{
		{{Path: "AGENTS.md", Scope: ScopeWorkspace, Bytes: 10}},
		{{Path: "web/AGENTS.md", Scope: ScopeDirectory, Bytes: 9}, {Path: "web/ui/AGENTS.md", Scope: ScopeDirectory, Bytes: 8}},
		{{Path: "AGENTS.md", Scope: ScopeWorkspace, Bytes: 10}},
	}, got)
}

func waitRun(t *testing.T, done chan RunState) RunState {
	t.Helper()
	return await.Recv(t, "the run to finish", 30*time.Second, done)
}
