package acp

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/tools"
)

// translator turns one run's agent/update events into session/update. It
// keeps what ACP needs that a single event does not say: the usage of the
// last step, and whether the final answer was already streamed.
type translator struct {
	root     string
	instr    int // instruction updates shown, for their ids
	window   int
	total    agent.Usage            // the run's cumulative usage so far
	streamed bool                   // text came since the last tool call
	live     map[string]*liveOutput // running commands' output, by tool call id
	commands map[string]bool        // the tool calls that run a command
	titles   map[string]string      // each tool call's title, repeated when it ends
	kinds    map[string]tools.Kind  // each tool call's kind, for how its output reads
	later    laterFunc              // nil while replaying
}

func newTranslator(root string, window int, later laterFunc) *translator {
	return &translator{root: root, window: window, later: later}
}

func (t *translator) translate(u agent.Update) []acpsdk.SessionUpdate {
	switch u.Kind {
	case agent.UpdateMessageChunk:
		t.streamed = true
		return one(acpsdk.UpdateAgentMessageText(u.Text))
	case agent.UpdateThoughtChunk:
		return one(acpsdk.UpdateAgentThoughtText(u.Text))
	case agent.UpdatePlan:
		return one(planUpdate(u))
	case agent.UpdateToolCall:
		t.streamed = false
		return one(t.toolCall(u))
	case agent.UpdateToolCallUpdate:
		if u.Diagnostics != nil {
			return one(diagnosticsCall(u))
		}
		if u.OutputDelta != "" {
			return t.outputDelta(u)
		}
		if u.Status != agent.StatusInProgress {
			t.endLive(u.ToolCallID) // the final update carries the whole output
		}
		return one(t.toolCallUpdate(u))
	case agent.UpdateUsage:
		return t.usage(u)
	case agent.UpdateInstructions:
		return one(t.instructions(u))
	case agent.UpdateNotice:
		// Not the model's answer (a small context window, the sandbox not
		// available): ACP has no such update, so it goes into the chat, apart
		// from the answer, and does not count as streamed text.
		return one(acpsdk.UpdateAgentMessageText("> agentd: " + u.Text + "\n\n"))
	case agent.UpdateSteer:
		// The user's words added to the turn (a steer from another editor):
		// shown as the user's, where they were given.
		return one(acpsdk.UpdateUserMessageText(u.Text))
	case agent.UpdateSettings:
		// A plan approved into a mode: the mode picker follows.
		if u.Settings != nil && u.Settings.ApprovalPolicy != "" {
			return one(acpsdk.SessionUpdate{CurrentModeUpdate: &acpsdk.SessionCurrentModeUpdate{CurrentModeId: acpsdk.SessionModeId(u.Settings.ApprovalPolicy)}})
		}
	case agent.UpdateSubagent:
		return t.subagent(u) // subagent.go
	case agent.UpdateResult:
		// In text tool mode the answer is not streamed: send it whole.
		if !t.streamed && u.Text != "" {
			t.streamed = true
			return one(acpsdk.UpdateAgentMessageText(u.Text))
		}
	}
	return nil // files_changed: each edit's diff was already on its tool call
}

func one(u acpsdk.SessionUpdate) []acpsdk.SessionUpdate { return []acpsdk.SessionUpdate{u} }

func planUpdate(u agent.Update) acpsdk.SessionUpdate {
	entries := make([]acpsdk.PlanEntry, 0, len(u.Entries))
	for _, e := range u.Entries {
		status := acpsdk.PlanEntryStatus(e.Status)
		if e.Status == agent.StatusFailed {
			status = acpsdk.PlanEntryStatusCompleted // ACP has no failed step; it is over
		}
		entries = append(entries, acpsdk.PlanEntry{Content: e.Content, Priority: acpsdk.PlanEntryPriorityMedium, Status: status})
	}
	return acpsdk.UpdatePlan(entries...)
}

func (t *translator) toolCall(u agent.Update) acpsdk.SessionUpdate {
	title, input, locs := u.Title, json.RawMessage(u.Input), t.locations(u.Locations)
	if u.ToolKind == tools.KindExecute {
		title, input = t.commandCall(u)
		locs = nil // the command's cwd: a directory, not a file to follow
		if t.commands == nil {
			t.commands = map[string]bool{}
		}
		t.commands[u.ToolCallID] = true
	}
	if t.titles == nil {
		t.titles, t.kinds = map[string]string{}, map[string]tools.Kind{}
	}
	t.titles[u.ToolCallID] = title
	t.kinds[u.ToolCallID] = u.ToolKind
	opts := []acpsdk.ToolCallStartOpt{acpsdk.WithStartKind(acpsdk.ToolKind(u.ToolKind)),
		acpsdk.WithStartStatus(acpsdk.ToolCallStatusPending)}
	if len(input) > 0 {
		opts = append(opts, acpsdk.WithStartRawInput(input))
	}
	if len(locs) > 0 {
		opts = append(opts, acpsdk.WithStartLocations(locs))
	}
	su := acpsdk.StartToolCall(acpsdk.ToolCallId(u.ToolCallID), title, opts...)
	if u.Subagent != nil { // a task call: the subagent it starts (subagent.go)
		su.ToolCall.Meta = map[string]any{"agentd": map[string]any{"subagent": map[string]any{"runId": u.Subagent.RunID, "description": u.Subagent.Description}}}
	}
	return su
}

// diagnosticsCall shows the language servers' diagnostics after a reply's
// last edit as a finished tool call of their own, right under the edit:
// ACP's tool_call_update would replace the edit's diff.
func diagnosticsCall(u agent.Update) acpsdk.SessionUpdate {
	d := u.Diagnostics
	title := "Diagnostics: no errors or warnings"
	if n := len(d.Items) + d.Omitted; n > 0 {
		title = fmt.Sprintf("Diagnostics: %d problem(s), %d new", n, d.New)
	}
	return acpsdk.StartToolCall(acpsdk.ToolCallId(u.ToolCallID+"/diagnostics"), title,
		acpsdk.WithStartKind(acpsdk.ToolKindRead), acpsdk.WithStartStatus(acpsdk.ToolCallStatusCompleted),
		acpsdk.WithStartContent([]acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(d.Text))}),
		acpsdk.WithStartRawOutput(d))
}

// commandCall is the title and raw input of a command's tool call: the
// command line, in a code span (clients that shorten titles at a colon keep
// a code span whole), and the arguments with the cwd made absolute.
func (t *translator) commandCall(u agent.Update) (string, json.RawMessage) {
	var in map[string]any
	if json.Unmarshal(u.Input, &in) != nil {
		return u.Title, json.RawMessage(u.Input)
	}
	line, _ := in["command"].(string)
	if strings.TrimSpace(line) == "" {
		return u.Title, json.RawMessage(u.Input)
	}
	cwd, _ := in["cwd"].(string)
	in["cwd"] = absPath(t.root, cmp.Or(cwd, "."))
	raw, err := json.Marshal(in)
	if err != nil {
		raw = u.Input
	}
	return commandTitle(line, cwd), raw
}

func (t *translator) toolCallUpdate(u agent.Update) acpsdk.SessionUpdate {
	opts := []acpsdk.ToolCallUpdateOpt{acpsdk.WithUpdateStatus(acpsdk.ToolCallStatus(u.Status))}
	if title, ok := t.titles[u.ToolCallID]; ok && u.Status != agent.StatusInProgress && u.Status != agent.StatusPending {
		// The final update repeats the title: clients that print each update
		// on its own (acpx) show the call's id otherwise. A fetch's says
		// what it got, where the page ended and how much of it.
		if u.Fetched != nil {
			title = fetchedTitle(u.Fetched)
		}
		opts = append(opts, acpsdk.WithUpdateTitle(title))
		delete(t.titles, u.ToolCallID)
	}
	var content []acpsdk.ToolCallContent
	for _, d := range u.Files {
		content = append(content, diffContent(t.root, d))
	}
	kind := t.kinds[u.ToolCallID]
	if u.Status != agent.StatusInProgress && u.Status != agent.StatusPending {
		delete(t.kinds, u.ToolCallID)
	}
	// The output is said once: as the content, or, where the content is
	// the diffs, as the raw output. Clients show both (acpx prints each),
	// so the same text in both reads twice.
	if u.Output != "" && len(u.Files) == 0 {
		content = append(content, acpsdk.ToolContent(acpsdk.TextBlock(outputText(kind, u.Output))))
	} else if u.Output != "" || u.ExitCode != nil {
		raw := map[string]any{"output": u.Output, "isError": u.IsError}
		if u.ExitCode != nil {
			raw["exitCode"] = *u.ExitCode
		}
		opts = append(opts, acpsdk.WithUpdateRawOutput(raw))
	}
	if len(content) > 0 {
		opts = append(opts, acpsdk.WithUpdateContent(content))
	}
	if locs := t.locations(u.Locations); len(locs) > 0 && !t.commands[u.ToolCallID] {
		opts = append(opts, acpsdk.WithUpdateLocations(locs))
	}
	return acpsdk.UpdateToolCall(acpsdk.ToolCallId(u.ToolCallID), opts...)
}

// fetchedTitle names a finished web fetch by the URL it ended at (a
// redirect's target), with its status when it failed, its size and its
// type: "fetch https://go.dev/doc/ · 12 KB · text/html". ACP has no field
// of its own for them, and a page's URL is no file location.
func fetchedTitle(f *tools.Fetched) string {
	parts := []string{"fetch " + f.URL}
	if f.Status >= 400 {
		parts = append(parts, fmt.Sprintf("HTTP %d", f.Status))
	}
	size := byteSize(f.Bytes)
	if f.Cut {
		size += " read, the rest cut"
	}
	parts = append(parts, size)
	if mt, _, _ := strings.Cut(f.ContentType, ";"); strings.TrimSpace(mt) != "" {
		parts = append(parts, strings.TrimSpace(mt))
	}
	return strings.Join(parts, " · ")
}

// byteSize says n bytes in a few characters: "12 KB".
func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// outputText is a tool's output as the chat shows it: what a command, a
// read or a search printed in a code block; a line of prose (the user's
// answer to a question, "Plan updated.") as it is.
func outputText(kind tools.Kind, out string) string {
	switch kind {
	case tools.KindExecute, tools.KindRead, tools.KindSearch:
		return fenced(out)
	}
	if strings.Contains(strings.TrimRight(out, "\n"), "\n") {
		return fenced(out)
	}
	return out
}

// usage reports the tokens of the last model call (the step's growth of
// the cumulative count) against the context window: what is in context.
func (t *translator) usage(u agent.Update) []acpsdk.SessionUpdate {
	if u.Usage == nil {
		return nil
	}
	used := u.Usage.PromptTokens - t.total.PromptTokens + u.Usage.CompletionTokens - t.total.CompletionTokens
	t.total = *u.Usage
	if used <= 0 {
		return nil
	}
	return one(acpsdk.SessionUpdate{UsageUpdate: &acpsdk.SessionUsageUpdate{SessionUpdate: "usage_update", Used: used, Size: t.window}})
}

// instructions shows the instruction files the model was given as a read
// that is already done: ACP has no update of its own for them.
func (t *translator) instructions(u agent.Update) acpsdk.SessionUpdate {
	t.instr++
	names := make([]string, len(u.Instructions))
	locs := make([]tools.Location, len(u.Instructions))
	for i, f := range u.Instructions {
		names[i] = f.Path
		if f.Truncated {
			names[i] += " (first 32 KB)"
		}
		locs[i] = tools.Location{Path: f.Path}
	}
	opts := []acpsdk.ToolCallStartOpt{acpsdk.WithStartKind(acpsdk.ToolKindRead), acpsdk.WithStartStatus(acpsdk.ToolCallStatusCompleted)}
	if l := t.locations(locs); len(l) > 0 {
		opts = append(opts, acpsdk.WithStartLocations(l))
	}
	id := fmt.Sprintf("agentd_instructions_%p_%d", t, t.instr)
	return acpsdk.StartToolCall(acpsdk.ToolCallId(id), "Instructions: "+strings.Join(names, ", "), opts...)
}

// locations are the files a tool call is about, absolute as ACP requires.
// A directory (list_dir's) is left out: clients open locations as files.
func (t *translator) locations(locs []tools.Location) []acpsdk.ToolCallLocation {
	out := make([]acpsdk.ToolCallLocation, 0, len(locs))
	for _, l := range locs {
		loc := acpsdk.ToolCallLocation{Path: absPath(t.root, l.Path)}
		if fi, err := os.Stat(loc.Path); err == nil && fi.IsDir() {
			continue
		}
		if l.Line > 0 {
			line := l.Line
			loc.Line = &line
		}
		out = append(out, loc)
	}
	return out
}

// diffContent shows a file change as ACP's diff (absolute path, old and new
// text), or as the unified diff when the texts were not kept.
func diffContent(root string, d tools.FileDiff) acpsdk.ToolCallContent {
	if d.NewText == nil && d.OldText == nil {
		return acpsdk.ToolContent(acpsdk.TextBlock("```diff\n" + d.Diff + "\n```"))
	}
	newText := ""
	if d.NewText != nil {
		newText = *d.NewText
	}
	c := acpsdk.ToolCallContent{Diff: &acpsdk.ToolCallContentDiff{Type: "diff", Path: absPath(root, d.Path), NewText: newText, OldText: d.OldText}}
	return c
}

func fenced(s string) string { return codeBlock("", s) }

// titleMax bounds a command's title, in characters; the raw input and the
// content carry the whole command.
const titleMax = 160

// commandTitle is a command's title: its first line in a code span, and the
// workspace-relative cwd unless it is the root.
func commandTitle(line, cwd string) string {
	t := codeSpan(clipLine(line, titleMax))
	if cwd != "" && cwd != "." {
		t += " in " + cwd
	}
	return t
}

// clipLine is the first line of s, at most n characters, marked when cut.
func clipLine(s string, n int) string {
	first, rest, _ := strings.Cut(strings.TrimSpace(s), "\n")
	first = strings.TrimSpace(first)
	cut := strings.TrimSpace(rest) != ""
	if r := []rune(first); len(r) > n {
		first, cut = string(r[:n]), true
	}
	if cut {
		first += " …"
	}
	return first
}

// codeSpan is s as Markdown inline code, its fence longer than any run of
// backticks inside.
func codeSpan(s string) string {
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// codeBlock is s as a fenced Markdown code block.
func codeBlock(lang, s string) string {
	fence := strings.Repeat("`", max(3, longestRun(s, '`')+1))
	return fence + lang + "\n" + s + "\n" + fence
}

func longestRun(s string, c byte) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}

// absPath makes a workspace-relative path absolute, as ACP requires.
func absPath(root, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(root, filepath.FromSlash(p))
}
