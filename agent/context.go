package agent

import (
	"fmt"
	"strings"
)

// defaultWindow is assumed when the model's context window is not configured.
const defaultWindow = 128_000

// summaryCap bounds the summary of compacted turns.
const summaryCap = 4000

// estimateTokens is a cheap estimate (four characters a token) that errs on
// the large side for code.
func estimateTokens(m Message) int {
	n := len(m.Content)
	for _, c := range m.ToolCalls {
		n += len(c.Name) + len(c.Args)
	}
	return n/4 + 4
}

func sumTokens(msgs []Message) int {
	t := 0
	for _, m := range msgs {
		t += estimateTokens(m)
	}
	return t
}

// compact keeps the conversation inside the model's window: older turns go
// first (cut at a user message), then the oldest steps of the current run
// (cut before an assistant message), so tool call/result pairs and the
// user/assistant alternation stay intact. What was dropped comes back as a
// summary for the system prompt.
func compact(msgs []Message, window, systemChars int) ([]Message, string) {
	if window <= 0 {
		window = defaultWindow
	}
	budget := window*3/4 - systemChars/4 - summaryCap/4
	if sumTokens(msgs) <= budget {
		return msgs, ""
	}
	p := lastUser(msgs)
	for i := 1; i <= p; i++ {
		if msgs[i].Role == RoleUser && sumTokens(msgs[i:]) <= budget {
			return msgs[i:], summarize(msgs[:i])
		}
	}
	if p < 0 {
		return msgs, ""
	}
	head := estimateTokens(msgs[p])
	k := len(msgs)
	for i := p + 1; i < len(msgs); i++ {
		if msgs[i].Role == RoleAssistant && head+sumTokens(msgs[i:]) <= budget {
			k = i
			break
		}
	}
	if k == len(msgs) {
		k = lastAssistant(msgs, p) // even the last step alone is too big: keep it anyway
	}
	kept := append([]Message{msgs[p]}, msgs[k:]...)
	dropped := append(append([]Message{}, msgs[:p]...), msgs[p+1:k]...)
	return kept, summarize(dropped)
}

func lastUser(msgs []Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == RoleUser {
			return i
		}
	}
	return -1
}

func lastAssistant(msgs []Message, after int) int {
	for i := len(msgs) - 1; i > after; i-- {
		if msgs[i].Role == RoleAssistant {
			return i
		}
	}
	return len(msgs)
}

// summarize lists what the dropped turns did, newest kept when long.
func summarize(msgs []Message) string {
	results := map[string]Message{}
	for _, m := range msgs {
		if m.Role == RoleTool {
			results[m.ToolCallID] = m
		}
	}
	var lines []string
	for _, m := range msgs {
		switch {
		case m.Role == RoleUser:
			lines = append(lines, "- The user asked: "+oneLine(m.Content, 160))
		case m.Role == RoleAssistant && len(m.ToolCalls) == 0:
			lines = append(lines, "- You answered: "+oneLine(m.Content, 240))
		case m.Role == RoleAssistant:
			for _, c := range m.ToolCalls {
				res := results[c.ID]
				lines = append(lines, fmt.Sprintf("- You called %s(%s) → %s", c.Name, oneLine(string(c.Args), 100), oneLine(res.Content, 100)))
			}
		}
	}
	out := strings.Join(lines, "\n")
	for len(out) > summaryCap && len(lines) > 1 {
		lines = lines[1:]
		out = "- (older turns omitted)\n" + strings.Join(lines, "\n")
	}
	return out
}

func oneLine(s string, n int) string {
	return truncate(strings.Join(strings.Fields(s), " "), n)
}
