package acp

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/agent"
)

// Undo in ACP, which has no method for it: slash commands answered without
// the model (docs/acp.md). /undo undoes the last turn that changed files
// (or, with an id, from that checkpoint on), /rewind N goes back N turns
// (files and conversation), /checkpoints lists what can be undone. A
// conflict (a file changed since) is asked with session/request_permission,
// with the diffs: overwrite, skip those files, or cancel.
var undoCommands = []acpsdk.AvailableCommand{
	{Name: "checkpoints", Description: "List this session's changes to the workspace (edits and commands) that can be undone"},
	{Name: "undo", Description: "Undo the last turn's changes to the workspace, commands' included (/undo c3: from checkpoint c3 on)",
		Input: &acpsdk.AvailableCommandInput{Unstructured: &acpsdk.UnstructuredCommandInput{Hint: "nothing for the last turn, or a checkpoint such as c3"}}},
	{Name: "rewind", Description: "Go back N turns (default 1): restore their files and continue the conversation from before them",
		Input: &acpsdk.AvailableCommandInput{Unstructured: &acpsdk.UnstructuredCommandInput{Hint: "how many turns (default 1)"}}},
}

// undoCommand runs /checkpoints, /undo or /rewind as a turn of its own.
func (s *session) undoCommand(ctx context.Context, name, arg string) acpsdk.PromptResponse {
	end := acpsdk.PromptResponse{StopReason: acpsdk.StopReasonEndTurn}
	s.mu.Lock()
	sid := s.agentID
	s.mu.Unlock()
	if sid == "" {
		s.say("Nothing to undo yet: this session has made no changes.")
		return end
	}
	var err error
	switch name {
	case "checkpoints":
		err = s.listCheckpoints(sid)
	case "undo":
		err = s.undo(ctx, sid, arg)
	case "rewind":
		err = s.rewind(ctx, sid, arg)
	}
	if err != nil {
		s.say("Undo failed: " + err.Error())
	}
	return end
}

func (s *session) listCheckpoints(sid string) error {
	cps, err := s.ws.agent.Checkpoints(sid)
	if err != nil {
		return err
	}
	if len(cps) == 0 {
		s.say("No checkpoints: this session has not changed the workspace.")
		return nil
	}
	var b strings.Builder
	b.WriteString("Checkpoints of this session (`/undo cN` goes back to before cN):\n")
	for _, cp := range cps {
		fmt.Fprintf(&b, "\n- **%s** %s `%s`", cp.ID, cp.Tool, clip(cp.Title, 80))
		var files []string
		for _, f := range cp.Files {
			files = append(files, f.Status+" "+f.Path)
		}
		if len(files) > 0 {
			b.WriteString(": " + clip(strings.Join(files, ", "), 300))
		}
		if cp.UndoneBy != "" {
			b.WriteString(" _(undone by " + cp.UndoneBy + ")_")
		}
	}
	s.say(b.String())
	return nil
}

// undo undoes the last turn that changed the workspace, or from a
// checkpoint on.
func (s *session) undo(ctx context.Context, sid, arg string) error {
	p := agent.UndoParams{SessionID: sid}
	if arg != "" {
		if _, err := strconv.Atoi(strings.TrimPrefix(arg, "c")); err != nil || !strings.HasPrefix(arg, "c") {
			s.say("Usage: `/undo` (the last turn) or `/undo c3` (from checkpoint c3 on).")
			return nil
		}
		p.Checkpoint = arg
	} else {
		cps, err := s.ws.agent.Checkpoints(sid)
		if err != nil {
			return err
		}
		for i := len(cps) - 1; i >= 0; i-- {
			if cp := cps[i]; cp.UndoneBy == "" && cp.RunID != "" && len(cp.Undoes) == 0 {
				p.RunID = cp.RunID
				break
			}
		}
		if p.RunID == "" {
			s.say("Nothing to undo.")
			return nil
		}
	}
	res, err := s.resolveConflicts(ctx, "Undo", func(on string) (agent.UndoResult, error) {
		p.OnConflict = on
		return s.ws.agent.Undo(ctx, p)
	})
	if err != nil || res == nil {
		return err
	}
	s.sayRestored("Undid "+strings.Join(res.Undone, ", "), *res)
	return nil
}

// rewind goes back n turns.
func (s *session) rewind(ctx context.Context, sid, arg string) error {
	n := 1
	if arg != "" {
		v, err := strconv.Atoi(arg)
		if err != nil || v < 1 {
			s.say("Usage: `/rewind` (one turn) or `/rewind 2` (two turns).")
			return nil
		}
		n = v
	}
	var live []agent.SessionRun
	if err := s.ws.agent.SessionHistory(sid, func(r agent.SessionRun) error {
		if !r.Rewound {
			live = append(live, r)
		}
		return nil
	}); err != nil {
		return err
	}
	if n > len(live) {
		s.say(fmt.Sprintf("This session has %d turns to rewind.", len(live)))
		return nil
	}
	target := live[len(live)-n]
	res, err := s.resolveConflicts(ctx, "Rewind", func(on string) (agent.UndoResult, error) {
		return s.ws.agent.Rewind(ctx, agent.RewindParams{SessionID: sid, RunID: target.RunID, OnConflict: on})
	})
	if err != nil || res == nil {
		return err
	}
	head := fmt.Sprintf("Rewound %d turn(s): the conversation continues from before “%s”. The messages above it stay in this chat, but the agent no longer sees them",
		len(res.Rewound), clip(target.Prompt, 80))
	s.sayRestored(head, *res)
	return nil
}

// resolveConflicts makes the undo; on conflicts it shows them and asks
// whether to overwrite, skip them, or cancel. nil: cancelled or nothing.
func (s *session) resolveConflicts(ctx context.Context, what string, do func(onConflict string) (agent.UndoResult, error)) (*agent.UndoResult, error) {
	res, err := do("")
	if errors.Is(err, agent.ErrSessionBusy) {
		s.say(what + " waits for the running turn: cancel it or let it finish first.")
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if res.Status == agent.UndoNothing {
		s.say("Nothing to undo.")
		return nil, nil
	}
	if res.Status != agent.UndoConflicts {
		return &res, nil
	}
	on, err := s.askConflicts(ctx, what, res)
	if err != nil || on == "" {
		if err == nil {
			s.say(what + " cancelled: nothing was changed.")
		}
		return nil, err
	}
	res, err = do(on)
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// askConflicts shows the conflicts as a permission request.
func (s *session) askConflicts(ctx context.Context, what string, res agent.UndoResult) (string, error) {
	kind, status := acpsdk.ToolKindEdit, acpsdk.ToolCallStatusPending
	title := fmt.Sprintf("%s: %d file(s) changed since the checkpoint or cannot be restored", what, len(res.Conflicts))
	tc := acpsdk.ToolCallUpdate{ToolCallId: acpsdk.ToolCallId("undo-" + strings.Join(res.Undone, "-")), Title: &title, Kind: &kind, Status: &status}
	changed := false
	for _, c := range res.Conflicts {
		tc.Content = append(tc.Content, acpsdk.ToolContent(acpsdk.TextBlock(fmt.Sprintf("%s: %s", c.Path, c.Reason))))
		if c.Diff != nil {
			changed = true
			tc.Content = append(tc.Content, diffContent(s.ws.root, *c.Diff))
		}
		tc.Locations = append(tc.Locations, acpsdk.ToolCallLocation{Path: absPath(s.ws.root, c.Path)})
	}
	opts := []acpsdk.PermissionOption{}
	if changed {
		opts = append(opts, acpsdk.PermissionOption{OptionId: acpsdk.PermissionOptionId(agent.OnConflictOverwrite), Name: "Overwrite them too (undoable)", Kind: acpsdk.PermissionOptionKindAllowOnce})
	}
	opts = append(opts,
		acpsdk.PermissionOption{OptionId: acpsdk.PermissionOptionId(agent.OnConflictSkip), Name: "Leave them, undo the rest", Kind: acpsdk.PermissionOptionKindAllowOnce},
		acpsdk.PermissionOption{OptionId: "cancel", Name: "Cancel", Kind: acpsdk.PermissionOptionKindRejectOnce})
	resp, err := s.srv.client().RequestPermission(ctx, acpsdk.RequestPermissionRequest{SessionId: acpsdk.SessionId(s.id), ToolCall: tc, Options: opts})
	if err != nil {
		return "", err
	}
	if resp.Outcome.Selected == nil || resp.Outcome.Selected.OptionId == "cancel" {
		return "", nil
	}
	return string(resp.Outcome.Selected.OptionId), nil
}

// sayRestored reports a restore: what changed, how to bring it back.
func (s *session) sayRestored(head string, res agent.UndoResult) {
	var b strings.Builder
	b.WriteString(head)
	if len(res.Files) == 0 {
		b.WriteString(". The files were already as they were before.")
	} else {
		b.WriteString(":\n")
		lines := 0
		for _, f := range res.Files {
			fmt.Fprintf(&b, "\n- %s `%s`", restoreVerb(f.Status), f.Path)
			if lines < 200 && f.Diff != "" {
				d := clip(f.Diff, 4000)
				lines += strings.Count(d, "\n")
				b.WriteString("\n```diff\n" + strings.TrimRight(d, "\n") + "\n```")
			}
		}
	}
	for _, n := range res.Notes {
		b.WriteString("\n\n_" + n + "_")
	}
	if res.Checkpoint != "" {
		fmt.Fprintf(&b, "\n\nThis is checkpoint %s: `/undo %s` brings the files back.", res.Checkpoint, res.Checkpoint)
	}
	s.say(b.String())
}

// restoreVerb names what a restore did to a file, from the diff's status
// (current content → restored content).
func restoreVerb(status string) string {
	switch status {
	case "added":
		return "recreated"
	case "deleted":
		return "removed"
	}
	return "restored"
}
