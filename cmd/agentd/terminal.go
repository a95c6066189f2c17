package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"golang.org/x/term"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/tools"
)

// Exit codes of `agentd run`.
const (
	exitCompleted = 0
	exitFailed    = 1
	exitUsage     = 2
	exitCancelled = 130
)

func runTerminal(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	policy := fs.String("policy", "", "approval mode: read-only, ask, auto-edit, full-auto")
	session := fs.String("session", "", "continue this session")
	dir := fs.String("dir", ".", "the workspace")
	stateDir := fs.String("state-dir", "", "base directory for state (default: $AGENTD_STATE_DIR, else ~/.local/state)")
	logFile := fs.String("log-file", "", "log to this file")
	logLevel := fs.String("log-level", "error", "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	prompt := strings.TrimSpace(strings.Join(fs.Args(), " "))
	if prompt == "" {
		fmt.Fprintln(stderr, `agentd run: give a prompt, e.g. agentd run "explain what this repository does"`)
		return exitUsage
	}
	if *stateDir != "" {
		os.Setenv("AGENTD_STATE_DIR", *stateDir)
	}
	log, closeLog, err := newLogger(*logFile, *logLevel, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "agentd:", err)
		return exitUsage
	}
	defer closeLog()
	cfg, warnings, err := loadConfig()
	if err != nil {
		fmt.Fprintln(stderr, "agentd:", err)
		return exitUsage
	}
	for _, w := range warnings {
		fmt.Fprintln(stderr, "agentd: warning:", w)
	}
	if err := cfg.CheckModel(); err != nil {
		fmt.Fprintln(stderr, "agentd:", err)
		return exitUsage
	}
	root, err := filepath.Abs(*dir)
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		fmt.Fprintln(stderr, "agentd: workspace:", err)
		return exitUsage
	}
	state, _, err := stateDirs(root)
	if err != nil {
		fmt.Fprintln(stderr, "agentd:", err)
		return exitUsage
	}

	ui := newTermUI(stdin, stdout, stderr)
	cfg.Root, cfg.StateDir, cfg.Listener, cfg.Logger = root, state, ui.queue, log
	if !ui.tty {
		cfg.RequestKinds = []agent.RequestKind{} // nobody can answer: fail closed
	}
	a, err := agent.New(cfg)
	if err != nil {
		fmt.Fprintln(stderr, "agentd:", err)
		return exitFailed
	}
	defer a.Shutdown()
	ui.agent = a
	if !ui.tty {
		fmt.Fprintln(stderr, "agentd: no terminal: questions are not asked, and writes or commands the policy does not allow are rejected.")
	}
	if *session != "" {
		if err := printEarlierRuns(ctx, stdout, a, *session); err != nil {
			fmt.Fprintln(stderr, "agentd:", err)
			return exitUsage
		}
	}
	res, err := a.Run(ctx, agent.RunParams{Prompt: prompt, SessionID: *session, ApprovalPolicy: tools.Mode(*policy)})
	if err != nil {
		fmt.Fprintln(stderr, "agentd:", err)
		return exitUsage
	}
	return ui.wait(ctx, res)
}

// wait shows the run until it ends; Ctrl-C cancels it cleanly.
func (u *termUI) wait(ctx context.Context, res agent.RunResult) int {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)
	quit := make(chan struct{})
	defer close(quit)
	go u.queue.Run(quit)
	for {
		select {
		case <-sigs:
			fmt.Fprintln(u.err, "\nagentd: cancelling…")
			_ = u.agent.Cancel(context.Background(), res.RunID)
		case <-ctx.Done():
			_ = u.agent.Cancel(context.Background(), res.RunID)
		case st := <-u.final:
			if st.RunID != res.RunID {
				continue // another run of the workspace, found paused on start
			}
			fmt.Fprintf(u.err, "\nsession %s, run %s: %s\n", res.SessionID, res.RunID, st.State)
			switch st.State {
			case agent.StateCompleted:
				return exitCompleted
			case agent.StateCancelled:
				return exitCancelled
			}
			return exitFailed
		}
	}
}

func isTerminal(r io.Reader, w io.Writer) bool {
	in, ok1 := r.(*os.File)
	out, ok2 := w.(*os.File)
	return ok1 && ok2 && term.IsTerminal(int(in.Fd())) && term.IsTerminal(int(out.Fd()))
}
