package agent

import (
	"fmt"
	"slices"
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
	t := n/4 + 4
	for _, im := range m.Images {
		t += imageTokens(im)
	}
	return t
}

func sumTokens(msgs []Message) int {
	t := 0
	for _, m := range msgs {
		t += estimateTokens(m)
	}
	return t
}

// cut is how a conversation was compacted: the messages from from on are
// kept, after the user message at user when it comes before from (the
// current run's prompt, whose oldest steps were dropped). summary lists
// what was dropped.
type cut struct {
	user, from int
	summary    string
}

func (c cut) kept(msgs []Message) []Message {
	switch {
	case c.user < 0:
		return msgs[c.from:]
	case c.user < c.from-1:
		return append([]Message{msgs[c.user]}, msgs[c.from:]...)
	}
	return msgs[c.user:]
}

// budgetFor is the tokens the conversation may take: three quarters of the
// window, less what the system message and the tool schemas take (fixed,
// in bytes) and room for a summary.
func budgetFor(window, fixed int) int {
	if window <= 0 {
		window = defaultWindow
	}
	return window*3/4 - fixed/4 - summaryCap/4
}

// compactedLocked is the conversation the next request sends. Once it no
// longer fits, older turns are dropped down to two thirds of the budget,
// and that cut is kept while it fits: the requests after it extend each
// other again, so a prompt cache keeps serving them. The summary of what
// was dropped heads the first kept user message. r.mu is held.
func (r *run) compactedLocked(window, fixed int) []Message {
	msgs := r.rec.Messages
	budget := budgetFor(window, fixed)
	c := r.cut
	if c == nil || c.from > len(msgs) || sumTokens(c.kept(msgs)) > budget {
		if sumTokens(msgs) <= budget {
			r.cut = nil
			return msgs
		}
		next := planCut(msgs, budget*2/3)
		c = &next
		r.cut = c
	}
	kept := slices.Clone(c.kept(msgs))
	if c.summary != "" && len(kept) > 0 {
		kept[0] = withSummary(kept[0], summaryHead, c.summary)
	}
	return kept
}

// compact keeps the conversation inside the model's window (see planCut);
// fixed is what the system message and tools take, in bytes.
func compact(msgs []Message, window, fixed int) ([]Message, string) {
	budget := budgetFor(window, fixed)
	if sumTokens(msgs) <= budget {
		return msgs, ""
	}
	c := planCut(msgs, budget)
	return c.kept(msgs), c.summary
}

// planCut drops older turns first (cut at a user message), then the oldest
// steps of the current run (cut before an assistant message), so tool
// call/result pairs and the user/assistant alternation stay intact.
func planCut(msgs []Message, budget int) cut {
	p := lastUser(msgs)
	for i := 1; i <= p; i++ {
		if msgs[i].Role == RoleUser && sumTokens(msgs[i:]) <= budget {
			return cut{user: -1, from: i, summary: summarize(msgs[:i])}
		}
	}
	if p < 0 {
		return cut{user: -1}
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
	dropped := append(append([]Message{}, msgs[:p]...), msgs[p+1:k]...)
	return cut{user: p, from: k, summary: summarize(dropped)}
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
		case m.Role == RoleUser && len(m.Images) > 0:
			lines = append(lines, fmt.Sprintf("- %s (%d image(s), no longer shown)", oneLine(m.Content, 160), len(m.Images)))
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
