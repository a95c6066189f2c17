package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

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

const runAbout = `The agent in a terminal, on the workspace (--dir, default the current directory): it streams the
answer, shows each tool call with its result, and asks before the writes and commands the policy does not
allow, showing the diff or the command line. A prompt "/name args" runs a custom command (docs/extensions.md);
agentd run /help lists them.

On a terminal, a status line says what the agent is doing (thinking, running a command, waiting for you)
and for how long; a running command's last lines show under it, and its whole output if it fails; the
answer is laid out for the terminal's width (headings, lists, tables, code in colour). NO_COLOR turns the
colours off.

Prompts take only keys typed after they appear: anything typed before is discarded. A permission prompt
takes y (yes, once), s (for this session), a (always: saves a rule), n (no), t (no, and tell the agent
what to do instead) or x (never: saves a rule, after a second y), in either case, or the arrows and
Enter; a key that is none of these asks again. Ctrl-D answers no (at a question: skips it). Ctrl-C
cancels the run and exits at once, at a prompt or not.

Without a terminal (stdin or stdout not one) the output is plain text and nothing is asked: questions go
unanswered and the writes or commands the policy does not allow are rejected. --json prints the run's
notifications instead, one JSON object a line ({"seq","kind","params"}, the params as the native
protocol's agent/update, agent/inputRequest, agent/inputResolved and agent/runState, docs/protocol.md),
and asks nothing either.

The model can use search_semantic: its first search starts the workspace index the editors use (brought
up to date, then watched) and waits for it, at most 10 s; the index stops when the run ends.

--session ID continues a session (agentd sessions lists them), showing its latest runs first in short form.
An answer that cannot be saved (the state directory takes no writes) is asked again; a run whose state
cannot be saved stops, paused, and agentd run exits 1 saying so (an editor can resume it later).

Exit status: 0 completed, 1 failed or paused, 2 usage error or no model configured, 130 cancelled.`

// runFlags are `agentd run`'s options.
type runFlags struct {
	policy, session, dir, stateDir, logFile, logLevel *string
	noIndex, json, reasoning                          *bool
}

func runTerminal(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newCommand("run", `agentd run [flags] "prompt"`, runAbout)
	f := runFlags{
		policy:    fs.String("policy", "", "approval mode: read-only, ask, auto-edit or full-auto (default: the approvalPolicy setting)"),
		session:   fs.String("session", "", "continue this session (agentd sessions lists them): its latest runs are shown first, in short form, and the model reads its conversation so far"),
		dir:       fs.String("dir", ".", "the workspace"),
		stateDir:  fs.String("state-dir", "", "base directory for state and index (default: $AGENTD_STATE_DIR, else ~/.local/state and ~/.cache)"),
		logFile:   fs.String("log-file", "", "log to this file instead of stderr"),
		logLevel:  fs.String("log-level", "error", "debug, info, warn or error"),
		noIndex:   fs.Bool("no-index", false, "do not index the workspace (search_semantic then tells the model to use grep)"),
		json:      fs.Bool("json", false, "print the run's notifications as JSON lines on stdout, for scripts; asks nothing"),
		reasoning: fs.Bool("reasoning", false, "show the model's reasoning whole, dimmed, instead of one line per thought"),
	}
	pos, code := fs.parse(args, stdout, stderr)
	if code >= 0 {
		return code
	}
	prompt := strings.TrimSpace(strings.Join(pos, " "))
	switch {
	case prompt == "":
		return fs.fail(stderr, errors.New(`give a prompt, e.g. agentd run "explain what this repository does"`))
	case *f.policy != "" && !slices.Contains(tools.Modes, tools.Mode(*f.policy)):
		return fs.fail(stderr, fmt.Errorf("--policy %q: use one of %s", *f.policy, tools.ModeList()))
	}
	if *f.stateDir != "" {
		os.Setenv("AGENTD_STATE_DIR", *f.stateDir)
	}
	logs := &logSink{w: stderr}
	log, closeLog, err := newLogger(*f.logFile, *f.logLevel, logs)
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
	root, err := filepath.Abs(*f.dir)
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		fmt.Fprintln(stderr, "agentd: workspace:", err)
		return exitUsage
	}
	if prompt == "/help" {
		// Answered here, without a model: the prompts agentd run knows.
		printCommandHelp(stdout, agent.LoadCommands(root, cfg.UserConfigDir))
		return exitCompleted
	}
	if err := cfg.CheckModel(); err != nil {
		fmt.Fprintln(stderr, "agentd:", err)
		return exitUsage
	}
	state, cache, err := stateDirs(root)
	if err != nil {
		fmt.Fprintln(stderr, "agentd:", err)
		return exitUsage
	}
	cfg.Root, cfg.StateDir, cfg.Logger = root, state, log
	t := &terminalRun{stdout: stdout, stderr: stderr, logs: logs}
	return t.run(ctx, cfg, f, cache, stdin, agent.RunParams{Prompt: prompt, SessionID: *f.session, ApprovalPolicy: tools.Mode(*f.policy)})
}

// terminalRun is one `agentd run`: its front end, its agent and its index.
type terminalRun struct {
	stdout, stderr io.Writer
	logs           *logSink
	a              *agent.Agent
	queue          *agent.Queue
	final          <-chan agent.RunState
	front          interface{ show(runID string) }
	sc             *screen // nil with --json
	printer        *printer
	ui             *termUI
	pr             *prompter // nil when no one can be asked
	kb             *keyboard // nil when no one can be asked
	interrupts     chan struct{}
}

func (t *terminalRun) run(ctx context.Context, cfg agent.Config, f runFlags, cache string, stdin io.Reader, params agent.RunParams) int {
	if !*f.json && isTerminal(stdin) && isTerminal(t.stdout) {
		kb, err := openKeyboard(stdin.(*os.File))
		if err != nil {
			cfg.Logger.Warn("terminal modes", "err", err)
		} else {
			t.kb = kb
			defer kb.restore()
		}
	}
	t.frontEnd(*f.json, *f.reasoning)
	if t.sc != nil {
		defer t.sc.close()
	}
	cfg.Listener = t.queue
	if t.kb == nil {
		cfg.RequestKinds = []agent.RequestKind{} // nobody can answer: fail closed
	}
	if !*f.noIndex {
		idx := newOneShotIndex(cfg, cache)
		defer idx.close()
		cfg.Searcher = idx
	}
	a, err := agent.New(cfg)
	if err != nil {
		fmt.Fprintln(t.stderr, "agentd:", err)
		return exitFailed
	}
	t.a = a
	defer within(3*time.Second, a.Shutdown)
	t.interrupts = make(chan struct{}, 1)
	switch {
	case t.kb != nil:
		t.pr = newPrompter(a, t.kb, t.sc, t.printer, t.interrupt)
		t.ui.pr = t.pr
		t.header(cfg, params)
	case !*f.json:
		fmt.Fprintln(t.stderr, "agentd: no terminal: questions are not asked, and writes or commands the policy does not allow are rejected.")
	}
	if err := t.earlierRuns(ctx, params.SessionID, *f.json); err != nil {
		return t.fail(err)
	}
	res, err := a.Run(ctx, params)
	if err != nil {
		return t.fail(err)
	}
	// Before the queue delivers anything (wait starts it): only this run is
	// shown, not an earlier one the agent found paused in the workspace.
	t.front.show(res.RunID)
	st, code := t.wait(ctx, res)
	if t.sc != nil {
		t.sc.close()
		fmt.Fprintln(t.stderr, t.sc.style("2", t.printer.summary(st)))
	} else {
		fmt.Fprintf(t.stderr, "session %s, run %s: %s\n", st.SessionID, st.RunID, st.State)
	}
	return code
}

// fail reports a run that could not start, below what the screen showed.
func (t *terminalRun) fail(err error) int {
	if t.sc != nil {
		t.sc.close()
	}
	fmt.Fprintln(t.stderr, "agentd:", err)
	return exitUsage
}

// earlierRuns shows a continued session's latest runs in short form before
// the new one (on the screen, under the header, so the status line stays
// whole), dimmed; with --json it only checks the session, as stdout is the
// run's. What the model wrote is shown with its control characters escaped.
func (t *terminalRun) earlierRuns(ctx context.Context, sessionID string, asJSON bool) error {
	if sessionID == "" {
		return nil
	}
	if asJSON {
		return printEarlierRuns(ctx, io.Discard, t.a, sessionID)
	}
	var b strings.Builder
	if err := printEarlierRuns(ctx, &b, t.a, sessionID); err != nil {
		return err
	}
	var shown strings.Builder
	for l := range strings.Lines(visible(b.String())) {
		line := strings.TrimSuffix(l, "\n")
		shown.WriteString(t.sc.style("2", line) + l[len(line):])
	}
	t.sc.print(shown.String())
	return nil
}

// frontEnd sets up what shows the run: JSON lines, or the screen (live on a
// terminal, plain otherwise) with its printer.
func (t *terminalRun) frontEnd(asJSON, reasoning bool) {
	if asJSON {
		j := newJSONUI(t.stdout)
		t.queue, t.final, t.front = agent.NewQueue(j), j.final, j
		return
	}
	live := isTerminal(t.stdout)
	t.sc = newScreen(t.stdout, live, live && os.Getenv("NO_COLOR") == "")
	t.sc.errOut = t.stderr
	if live && isTerminal(t.stderr) {
		t.logs.through(t.sc)
	}
	t.printer = newPrinter(t.sc, printOptions{render: live, reasoning: reasoning})
	t.ui = newTermUI(t.sc, t.printer)
	t.queue, t.final, t.front = agent.NewQueue(t.ui), t.ui.final, t.ui
}

// interrupt is Ctrl-C read as a key at a prompt.
func (t *terminalRun) interrupt() {
	select {
	case t.interrupts <- struct{}{}:
	default:
	}
}

// header is the run's first line on a terminal: the model, the policy and
// the workspace. A continued session runs with its own settings (what this
// run asks for aside), not necessarily the configured ones.
func (t *terminalRun) header(cfg agent.Config, params agent.RunParams) {
	var set agent.SessionSettings
	if info, ok := t.a.SessionInfo(params.SessionID); ok {
		set = info.Settings
	}
	if params.ApprovalPolicy != "" {
		set.ApprovalPolicy = params.ApprovalPolicy
	}
	set = t.a.Effective(set)
	facts := []string{"model " + set.Model, "policy " + string(set.ApprovalPolicy), cfg.Root}
	if params.SessionID != "" {
		facts = append(facts, "session "+params.SessionID)
	}
	t.sc.println(t.sc.style("2", "agentd · "+strings.Join(facts, " · ")))
	t.sc.setStatus("thinking")
}

// wait delivers the run's notifications until it ends. Ctrl-C (at a
// prompt or not) cancels the run and returns as soon as it is cancelled,
// within a few seconds whatever happens; a second Ctrl-C returns at once.
func (t *terminalRun) wait(ctx context.Context, res agent.RunResult) (agent.RunState, int) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)
	stops := make(chan os.Signal, 1)
	if t.kb != nil {
		signal.Notify(stops, syscall.SIGTSTP)
		defer signal.Stop(stops)
	}
	quit := make(chan struct{})
	defer close(quit)
	go t.queue.Run(quit)
	if t.pr != nil {
		go t.pr.run(quit)
	}
	cancelled := agent.RunState{RunID: res.RunID, SessionID: res.SessionID, State: agent.StateCancelled}
	var deadline <-chan time.Time
	done := ctx.Done()
	cancel := func() bool {
		if deadline != nil {
			return true // the second time: stop waiting
		}
		if t.sc != nil {
			t.sc.setPrompt(nil)
			t.sc.println(t.sc.style("33", "agentd: cancelling… (Ctrl-C again to quit now)"))
		}
		_ = t.a.Cancel(context.Background(), res.RunID)
		deadline = time.After(3 * time.Second)
		return false
	}
	for {
		select {
		case <-sigs:
			if cancel() {
				return cancelled, exitCancelled
			}
		case <-t.interrupts:
			if cancel() {
				return cancelled, exitCancelled
			}
		case <-done:
			done = nil
			cancel()
		case <-stops:
			t.suspend()
		case <-deadline:
			return cancelled, exitCancelled
		case st := <-t.final:
			switch st.State {
			case agent.StateCompleted:
				return st, exitCompleted
			case agent.StateCancelled:
				return st, exitCancelled
			}
			return st, exitFailed
		}
	}
}

// suspend stops the process for Ctrl-Z, giving the terminal back as it was,
// and takes it again when the shell continues it (fg). It stops with
// SIGSTOP: a SIGTSTP it sent itself would come back to the channel.
func (t *terminalRun) suspend() {
	conts := make(chan os.Signal, 1)
	signal.Notify(conts, syscall.SIGCONT)
	defer signal.Stop(conts)
	t.sc.pause()
	t.kb.restore()
	// kill returns before every thread has stopped: wait for the SIGCONT
	// that ends the stop.
	if syscall.Kill(syscall.Getpid(), syscall.SIGSTOP) == nil {
		<-conts
	}
	t.kb.quietAgain()
	t.sc.resume()
}

// within runs f, waiting for it at most d: what is left of it ends with the
// process.
func within(d time.Duration, f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// logSink is where agentd run logs without --log-file: stderr, but while
// the screen is live on the same terminal through the screen, so that a
// log line is printed above the status line instead of into it.
type logSink struct {
	mu sync.Mutex
	w  io.Writer
	sc *screen
}

func (l *logSink) through(sc *screen) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sc = sc
}

func (l *logSink) Write(b []byte) (int, error) {
	l.mu.Lock()
	sc := l.sc
	l.mu.Unlock()
	if sc == nil {
		return l.w.Write(b)
	}
	sc.print(string(b))
	return len(b), nil
}

func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	return ok && term.IsTerminal(int(file.Fd()))
}
