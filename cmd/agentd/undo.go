package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/rpc/term"
	"github.com/agentd/agentd/tools"
)

// undoAbout is agentd undo's help text above its flags.
const undoAbout = `Undo the agent's changes to the workspace (docs/undo.md).

  agentd undo                  undo the last turn that changed files (its edits and everything its commands changed)
  agentd undo c3               go back to before checkpoint c3 (it and every later change)
  agentd undo --run RUN        undo that run (turn) and every later change
  agentd undo --rewind [N]     go back N turns (default 1): restore their files and cut them from the conversation,
                               so the next "agentd run --session" continues from before them
  agentd undo --list           the session's checkpoints

A file changed after the checkpoint is never overwritten silently: without --overwrite or --skip the
conflicts are shown with their diffs and, on a terminal, you are asked. Run it while no turn of the
session is in progress (undo refuses while one runs).`

func runUndo(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newCommand("undo", "agentd undo [flags] [cN | N]", undoAbout)
	session := fs.String("session", "", "the session (default: the most recent)")
	dir := fs.String("dir", ".", "the workspace")
	stateDir := fs.String("state-dir", "", "base directory for state (as for agentd run)")
	runID := fs.String("run", "", "undo this run (turn) and every later change")
	rewind := fs.Bool("rewind", false, "go back N turns (the argument; default 1): restore their files and cut them from the conversation")
	list := fs.Bool("list", false, "list the session's checkpoints")
	dry := fs.Bool("dry-run", false, "say what would change, change nothing")
	showDiff := fs.Bool("diff", false, "show the diff of every restored file")
	overwrite := fs.Bool("overwrite", false, "restore files changed since the checkpoint too (the undo is itself a checkpoint)")
	skip := fs.Bool("skip", false, "leave files changed since the checkpoint, restore the rest")
	keepFiles := fs.Bool("keep-files", false, "with --rewind: cut the conversation only")
	rest, code := fs.parse(args, stdout, stderr)
	if code >= 0 {
		return code
	}
	arg := strings.TrimSpace(strings.Join(rest, " "))
	if *overwrite && *skip || *runID != "" && arg != "" || *rewind && *runID != "" {
		return fs.fail(stderr, errors.New("--overwrite and --skip, or --run with a checkpoint or --rewind, do not go together"))
	}
	if *stateDir != "" {
		os.Setenv("AGENTD_STATE_DIR", *stateDir)
	}
	a, err := openUndoAgent(*dir)
	if err != nil {
		fmt.Fprintln(stderr, "agentd:", err)
		return exitFailed
	}
	defer a.Shutdown()
	sid := *session
	if sid == "" {
		if ss := a.Sessions(); len(ss) > 0 {
			sid = ss[0].SessionID
		} else {
			fmt.Fprintln(stderr, "agentd undo: no session in this workspace")
			return exitFailed
		}
	}
	// Command lines, file names and diffs are what the model and its
	// commands wrote: shown, never obeyed by the terminal.
	u := &undoCLI{a: a, sid: sid, in: stdin, out: term.NewVisibleWriter(stdout), err: term.NewVisibleWriter(stderr), tty: stdout, diff: *showDiff, dry: *dry}
	switch {
	case *list:
		return u.list()
	case *rewind:
		return u.rewind(ctx, arg, *keepFiles, conflictFlag(*overwrite, *skip))
	}
	return u.undo(ctx, arg, *runID, conflictFlag(*overwrite, *skip))
}

func conflictFlag(overwrite, skip bool) string {
	switch {
	case overwrite:
		return agent.OnConflictOverwrite
	case skip:
		return agent.OnConflictSkip
	}
	return ""
}

// openUndoAgent opens the workspace's agent state, as agentd run does; no
// model is needed.
func openUndoAgent(dir string) (*agent.Agent, error) {
	cfg, _, err := loadConfig()
	if err != nil {
		return nil, err
	}
	root, err := filepath.Abs(dir)
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	state, _, err := stateDirs(root)
	if err != nil {
		return nil, err
	}
	cfg.Root, cfg.StateDir = root, state
	cfg.RequestKinds = []agent.RequestKind{}
	return agent.New(cfg)
}

type undoCLI struct {
	a        *agent.Agent
	sid      string
	in       io.Reader
	out, err io.Writer
	tty      io.Writer // stdout itself, to tell a terminal
	diff     bool
	dry      bool
}

func (u *undoCLI) list() int {
	cps, err := u.a.Checkpoints(u.sid)
	if err != nil {
		fmt.Fprintln(u.err, "agentd:", err)
		return exitFailed
	}
	fmt.Fprintf(u.out, "session %s\n", u.sid)
	if len(cps) == 0 {
		fmt.Fprintln(u.out, "  no checkpoints")
	}
	for _, cp := range cps {
		state := ""
		if cp.UndoneBy != "" {
			state = " (undone by " + cp.UndoneBy + ")"
		}
		fmt.Fprintf(u.out, "%-5s %s  %-10s %s%s\n", cp.ID, cp.Time.Local().Format("2006-01-02 15:04"), cp.Tool, cp.Title, state)
		fmt.Fprintf(u.out, "      run %s\n", cp.RunID)
		for _, f := range cp.Files {
			from := ""
			if f.OldPath != "" {
				from = " (from " + f.OldPath + ")"
			}
			fmt.Fprintf(u.out, "      %-9s %s%s\n", f.Status, f.Path, from)
		}
		for _, n := range cp.Notes {
			fmt.Fprintf(u.out, "      note: %s\n", n)
		}
	}
	return exitCompleted
}

func (u *undoCLI) undo(ctx context.Context, arg, runID, on string) int {
	p := agent.UndoParams{SessionID: u.sid, Checkpoint: arg, RunID: runID, DryRun: u.dry}
	if arg == "" && runID == "" {
		cps, err := u.a.Checkpoints(u.sid)
		if err != nil {
			fmt.Fprintln(u.err, "agentd:", err)
			return exitFailed
		}
		for i := len(cps) - 1; i >= 0 && p.RunID == ""; i-- {
			if cp := cps[i]; cp.UndoneBy == "" && cp.RunID != "" && len(cp.Undoes) == 0 {
				p.RunID = cp.RunID
			}
		}
		if p.RunID == "" {
			fmt.Fprintln(u.out, "nothing to undo")
			return exitCompleted
		}
	}
	return u.resolve(on, func(on string) (agent.UndoResult, error) {
		p.OnConflict = on
		return u.a.Undo(ctx, p)
	})
}

func (u *undoCLI) rewind(ctx context.Context, arg string, keepFiles bool, on string) int {
	n := 1
	if arg != "" {
		v, err := strconv.Atoi(arg)
		if err != nil || v < 1 {
			fmt.Fprintf(u.err, "agentd undo: --rewind takes a number of turns, not %q\nusage: agentd undo --rewind [N] (agentd undo --help for more)\n", arg)
			return exitUsage
		}
		n = v
	}
	var live []agent.SessionRun
	if err := u.a.SessionHistory(u.sid, func(r agent.SessionRun) error {
		if !r.Rewound {
			live = append(live, r)
		}
		return nil
	}); err != nil {
		fmt.Fprintln(u.err, "agentd:", err)
		return exitFailed
	}
	if n > len(live) {
		fmt.Fprintf(u.err, "agentd undo: session %s has %d turns to rewind\n", u.sid, len(live))
		return exitFailed
	}
	target := live[len(live)-n]
	return u.resolve(on, func(on string) (agent.UndoResult, error) {
		return u.a.Rewind(ctx, agent.RewindParams{SessionID: u.sid, RunID: target.RunID, KeepFiles: keepFiles, OnConflict: on, DryRun: u.dry})
	})
}

// resolve makes the undo and, on conflicts, shows them and asks (on a
// terminal) or says which flag decides.
func (u *undoCLI) resolve(on string, do func(on string) (agent.UndoResult, error)) int {
	res, err := do(on)
	if err != nil {
		if errors.Is(err, agent.ErrSessionBusy) {
			fmt.Fprintln(u.err, "agentd undo:", err)
		} else {
			fmt.Fprintln(u.err, "agentd:", err)
		}
		return exitFailed
	}
	if res.Status == agent.UndoConflicts || res.Status == agent.UndoPreview && len(res.Conflicts) > 0 {
		u.showConflicts(res)
		if res.Status == agent.UndoPreview {
			u.show(res)
			return exitCompleted
		}
		choice := u.ask(res)
		if choice == "" {
			fmt.Fprintln(u.out, "nothing was changed")
			return exitFailed
		}
		if res, err = do(choice); err != nil {
			fmt.Fprintln(u.err, "agentd:", err)
			return exitFailed
		}
	}
	u.show(res)
	return exitCompleted
}

func (u *undoCLI) showConflicts(res agent.UndoResult) {
	fmt.Fprintf(u.out, "%d file(s) changed after the checkpoint or cannot be restored:\n", len(res.Conflicts))
	for _, c := range res.Conflicts {
		fmt.Fprintf(u.out, "\n  %s: %s\n", c.Path, c.Reason)
		if c.Diff != nil {
			fmt.Fprintln(u.out, diffIndent(c.Diff.Diff))
		}
	}
}

// ask offers overwrite, skip or cancel on a terminal; elsewhere it says
// which flag to pass.
func (u *undoCLI) ask(res agent.UndoResult) string {
	changed := false
	for _, c := range res.Conflicts {
		changed = changed || c.Kind == "changed"
	}
	if !term.IsTerminal(u.in) || !term.IsTerminal(u.tty) {
		fmt.Fprintln(u.err, "\nagentd undo: nothing was changed; rerun with --skip to leave these files, or --overwrite to restore them too")
		return ""
	}
	prompt := "\n[s]kip them and undo the rest, or [c]ancel? "
	if changed {
		prompt = "\n[o]verwrite them too (undoable), [s]kip them and undo the rest, or [c]ancel? "
	}
	fmt.Fprint(u.out, prompt)
	line, _ := bufio.NewReader(u.in).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "o", "overwrite":
		if changed {
			return agent.OnConflictOverwrite
		}
	case "s", "skip":
		return agent.OnConflictSkip
	}
	return ""
}

func (u *undoCLI) show(res agent.UndoResult) {
	switch res.Status {
	case agent.UndoNothing:
		fmt.Fprintln(u.out, "nothing to undo")
		return
	case agent.UndoPreview:
		fmt.Fprintf(u.out, "would undo %s:\n", strings.Join(res.Undone, ", "))
	default:
		fmt.Fprintf(u.out, "undid %s", strings.Join(res.Undone, ", "))
		if res.Checkpoint != "" {
			fmt.Fprintf(u.out, " (this is checkpoint %s: agentd undo %s brings the files back)", res.Checkpoint, res.Checkpoint)
		}
		fmt.Fprintln(u.out, ":")
	}
	if len(res.Files) == 0 {
		fmt.Fprintln(u.out, "  the files are already as they were")
	}
	for _, f := range res.Files {
		fmt.Fprintf(u.out, "  %-9s %s\n", undoVerb(f), f.Path)
		if u.diff {
			fmt.Fprintln(u.out, diffIndent(f.Diff))
		}
	}
	for _, n := range res.Notes {
		fmt.Fprintf(u.out, "  note: %s\n", n)
	}
	if len(res.Rewound) > 0 {
		fmt.Fprintf(u.out, "rewound %d run(s): %s; the conversation keeps %d message(s)\n", len(res.Rewound), strings.Join(res.Rewound, ", "), *res.Messages)
	}
}

func undoVerb(f tools.FileDiff) string {
	switch f.Status {
	case "added":
		return "recreate"
	case "deleted":
		return "remove"
	}
	return "restore"
}

func diffIndent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > 60 {
		lines = append(lines[:60], fmt.Sprintf("… %d more lines", len(lines)-60))
	}
	return "    " + strings.Join(lines, "\n    ")
}
