package acp

import (
	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/agent"
)

// A subagent's work comes in its parent's run, as subagent updates under
// the task call that started it (docs/protocol.md, Subagents). ACP has one
// flat list of tool calls per session, so a subagent's calls become tool
// calls of the session, their ids scoped by the task's
// (<task call id>/<its own id>), their titles labelled with the subagent,
// and _meta.agentd naming the task call for a client that nests them. Its
// text, plan and token counts are left out: the task call's result is its
// answer, and the parent's usage counts its tokens.

// subagent translates one subagent update.
func (t *translator) subagent(u agent.Update) []acpsdk.SessionUpdate {
	s := u.Subagent
	if s == nil || s.Update == nil {
		return nil
	}
	in := *s.Update
	if in.Kind != agent.UpdateToolCall && in.Kind != agent.UpdateToolCallUpdate {
		return nil
	}
	in.ToolCallID = u.ToolCallID + "/" + in.ToolCallID
	out := t.translate(in)
	meta := subagentMeta(u.ToolCallID, s)
	for _, su := range out {
		switch {
		case su.ToolCall != nil:
			su.ToolCall.Title = subagentLabel(s) + su.ToolCall.Title
			su.ToolCall.Meta = meta
			if _, ok := t.titles[string(su.ToolCall.ToolCallId)]; ok {
				t.titles[string(su.ToolCall.ToolCallId)] = su.ToolCall.Title
			}
		case su.ToolCallUpdate != nil:
			su.ToolCallUpdate.Meta = meta
		}
	}
	return out
}

// subagentMeta is what a subagent's tool call carries in _meta.
func subagentMeta(taskCallID string, s *agent.Subagent) map[string]any {
	return map[string]any{"agentd": map[string]any{"parentToolCallId": taskCallID,
		"subagent": map[string]any{"runId": s.RunID, "description": s.Description}}}
}

// subagentLabel prefixes what a subagent does or asks with its task.
func subagentLabel(s *agent.Subagent) string {
	return "[" + clipLine(s.Description, 60) + "] "
}

// subagentCallID is the ACP tool call a subagent's request is about: its
// own call, as its tool calls are named here.
func subagentCallID(req agent.InputRequest) string {
	if req.Subagent == nil || req.Subagent.ToolCallID == "" {
		return req.ToolCallID
	}
	return req.ToolCallID + "/" + req.Subagent.ToolCallID
}
