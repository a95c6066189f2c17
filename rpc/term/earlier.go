package term

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/agentd/agentd/agent"
)

// The short form of a session's earlier runs that `agentd run --session`
// prints first. Plain text on purpose: the caller dims it.

// earlierRunsShown is how many of a session's runs `agentd run --session`
// shows before the new one.
const earlierRunsShown = 10

// printEarlierRuns shows the session's latest runs in short form: each
// prompt's first line and the beginning of its answer, or how it ended.
func printEarlierRuns(ctx context.Context, w io.Writer, a *agent.Agent, sessionID string) error {
	h, err := a.History(ctx, agent.HistoryParams{SessionID: sessionID, Limit: earlierRunsShown})
	if err != nil {
		return err
	}
	s := h.Session
	fmt.Fprintf(w, "Session %s: %s (%s, %s)\n", s.SessionID, s.Title, plural(s.RunCount, "run"), s.Settings.Model)
	if h.EarlierRuns > 0 {
		fmt.Fprintf(w, "  … %s before these\n", plural(h.EarlierRuns, "earlier run"))
	}
	for _, r := range h.Runs {
		fmt.Fprintf(w, "\n> %s\n", Clip(firstLine(r.Prompt), 100))
		switch {
		case r.State == agent.StateCompleted && r.Answer != "":
			for _, line := range answerLines(r.Answer, 3) {
				fmt.Fprintf(w, "  %s\n", Clip(line, 100))
			}
		case r.Error != "":
			fmt.Fprintf(w, "  [%s: %s]\n", r.State, Clip(r.Error, 100))
		default:
			fmt.Fprintf(w, "  [%s]\n", r.State)
		}
	}
	fmt.Fprintln(w)
	return nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// answerLines returns up to n non-blank lines, the last marked when more follow.
func answerLines(s string, n int) []string {
	var out []string
	for l := range strings.Lines(strings.TrimSpace(s)) {
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		if len(out) == n {
			out[n-1] += " …"
			break
		}
		out = append(out, l)
	}
	return out
}

// Clip cuts s to n runes, the last an ellipsis when it was longer.
func Clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
