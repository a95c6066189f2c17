package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/rpc/term"
)

// `agentd sessions`: the workspace's sessions, in plain text (the short
// form of a session's earlier runs that `agentd run --session` prints first
// is the terminal's: rpc/term/earlier.go).

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
			term.Clip(term.Visible(s.Title), 60), s.SessionID)
	}
	tw.Flush()
}
