package term

import (
	"fmt"
	"strings"

	"github.com/agentd/agentd/agent"
)

// A subagent's work comes in its parent's run, as subagent updates under
// the task call that started it. The terminal prints its tool calls
// indented under the task, each labelled with the subagent (several run at
// once, and their lines interleave), and leaves out its text: the task's
// result shows its answer.

// subagent prints one subagent update.
func (p *printer) subagent(up agent.Update) {
	s := up.Subagent
	if s == nil {
		return
	}
	if s.Update == nil {
		if s.State == agent.StatePaused && !p.opt.past {
			p.flush()
			p.sc.println(p.style("33", "  ↳ "+label(s)+" · paused"))
		}
		return
	}
	in := *s.Update
	switch in.Kind {
	case agent.UpdateToolCall, agent.UpdateToolCallUpdate:
		in.ToolCallID = up.ToolCallID + "/" + in.ToolCallID // its own ids, scoped by its task
		p.nested[in.ToolCallID] = label(s)
		p.flush()
		if in.Kind == agent.UpdateToolCall {
			p.toolCall(in)
		} else {
			p.toolCallUpdate(in)
		}
	case agent.UpdateNotice:
		p.flush()
		p.sc.warn(p.style("33", "agentd: warning ("+label(s)+"): "+in.Text))
	}
}

// label names a subagent on a line: its task's description, cut short.
func label(s *agent.Subagent) string {
	return oneLine(s.Description, 40)
}

// subagentFacts say how a subagent ended, on its task's line.
func subagentFacts(s *agent.Subagent) []string {
	var facts []string
	switch s.State {
	case agent.StateCompleted, "":
	default:
		facts = append(facts, "subagent "+string(s.State))
	}
	if n := len(s.Read); n > 0 {
		facts = append(facts, "read "+plural(n, "file"))
	}
	if s.Usage != nil && s.Usage.TotalTokens > 0 {
		facts = append(facts, fmt.Sprintf("%s tokens", compactCount(s.Usage.TotalTokens)))
	}
	return facts
}

// subagentAsks is the line that says which subagent a request comes from.
func subagentAsks(req agent.InputRequest) string {
	if req.Subagent == nil {
		return ""
	}
	return "↳ subagent “" + label(req.Subagent) + "” asks:"
}

// indentAll prefixes every line.
func indentAll(lines []string, prefix string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = prefix + l
	}
	return out
}

// taskAnswer is a task's result lines without the list of files its
// subagent read, which the task's line counts.
func taskAnswer(lines []string) []string {
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "Files the subagent read (") {
			lines = lines[:i]
			break
		}
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}
