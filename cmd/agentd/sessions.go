package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentd/agentd/agent"
)

// `agentd sessions` and the short form of a session's earlier runs that
// `agentd run --session` prints first. Plain text on purpose: the terminal
// UI's look lives in termui.go.

func runSessions(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newCommand("sessions", "agentd sessions [flags]",
		"List the workspace's sessions, newest first: when each was last active, its state, its number of runs,\n"+
			"its title (the first prompt) and its id, for agentd run --session ID.")
	dir := fs.String("dir", ".", "the workspace")
	stateDir := fs.String("state-dir", "", "base directory for state (default: $AGENTD_STATE_DIR, else ~/.local/state)")
	asJSON := fs.Bool("json", false, "print the sessions as agent/sessions does, one JSON object per line")
	pos, code := fs.parse(args, stdout, stderr)
	if code < 0 && len(pos) > 0 {
		code = fs.fail(stderr, fmt.Errorf("unexpected argument %q", pos[0]))
	}
	if code >= 0 {
		return code
	}
	if *stateDir != "" {
		os.Setenv("AGENTD_STATE_DIR", *stateDir)
	}
	cfg, _, err := loadConfig()
	if err != nil {
		fmt.Fprintln(stderr, "agentd:", err)
		return exitUsage
	}
	root, err := filepath.Abs(*dir)
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err == nil {
		cfg.Root = root
		cfg.StateDir, _, err = stateDirs(root)
	}
	if err != nil {
		fmt.Fprintln(stderr, "agentd sessions:", err)
		return exitUsage
	}
	list, err := agent.ReadSessions(cfg)
	if err != nil {
		fmt.Fprintln(stderr, "agentd sessions:", err)
		return exitFailed
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		for _, s := range list {
			_ = enc.Encode(s)
		}
		return exitCompleted
	}
	if len(list) == 0 {
		fmt.Fprintf(stderr, "no sessions in %s\n", root)
		return exitCompleted
	}
	printSessions(stdout, list, time.Local)
	return exitCompleted
}

// printSessions shows one line per session, newest first.
func printSessions(w io.Writer, list []agent.SessionInfo, loc *time.Location) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "UPDATED\tSTATE\tRUNS\tTITLE\tSESSION")
	for _, s := range list {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", s.UpdatedAt.In(loc).Format("2006-01-02 15:04"), s.State, s.RunCount,
			clip(visible(s.Title), 60), s.SessionID)
	}
	tw.Flush()
}

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
		fmt.Fprintf(w, "\n> %s\n", clip(firstLine(r.Prompt), 100))
		switch {
		case r.State == agent.StateCompleted && r.Answer != "":
			for _, line := range answerLines(r.Answer, 3) {
				fmt.Fprintf(w, "  %s\n", clip(line, 100))
			}
		case r.Error != "":
			fmt.Fprintf(w, "  [%s: %s]\n", r.State, clip(r.Error, 100))
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

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
