package term

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	xterm "golang.org/x/term"

	"github.com/agentd/agentd/agent"
)

// Exit codes of `agentd run`.
const (
	ExitCompleted = 0
	ExitFailed    = 1
	ExitUsage     = 2
	ExitCancelled = 130
)

// Options are one `agentd run`'s: what cmd read from its flags and the
// configuration.
type Options struct {
	// Config is the agent's configuration, with Root, StateDir and Logger
	// set, and Searcher if the run may search the index. Run sets its
	// Listener and, when no one can be asked, its RequestKinds.
	Config agent.Config
	Params agent.RunParams
	// JSON prints the run's notifications as JSON lines on Stdout and asks
	// nothing; Reasoning shows the model's reasoning whole.
	JSON, Reasoning bool
	Stdin           io.Reader
	Stdout, Stderr  io.Writer
	// Logs is where the logger writes when it writes to stderr (nil if it
	// logs to a file): while the screen is live, through the screen.
	Logs *LogSink
}

// Run runs the agent on one prompt in the terminal and returns the exit
// code.
func Run(ctx context.Context, o Options) int {
	logs := o.Logs
	if logs == nil {
		logs = NewLogSink(io.Discard)
	}
	t := &terminalRun{stdout: o.Stdout, stderr: o.Stderr, logs: logs}
	return t.run(ctx, o)
}

// terminalRun is one `agentd run`: its front end, its agent and its index.
type terminalRun struct {
	stdout, stderr io.Writer
	logs           *LogSink
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

func (t *terminalRun) run(ctx context.Context, o Options) int {
	cfg, params, stdin := o.Config, o.Params, o.Stdin
	if !o.JSON && IsTerminal(stdin) && IsTerminal(t.stdout) {
		kb, err := openKeyboard(stdin.(*os.File))
		if err != nil {
			cfg.Logger.Warn("terminal modes", "err", err)
		} else {
			t.kb = kb
			defer kb.restore()
		}
	}
	t.frontEnd(o.JSON, o.Reasoning)
	if t.sc != nil {
		defer t.sc.close()
	}
	cfg.Listener = t.queue
	if t.kb == nil {
		cfg.RequestKinds = []agent.RequestKind{} // nobody can answer: fail closed
	}
	a, err := agent.New(cfg)
	if err != nil {
		fmt.Fprintln(t.stderr, "agentd:", err)
		return ExitFailed
	}
	t.a = a
	defer within(3*time.Second, a.Shutdown)
	t.interrupts = make(chan struct{}, 1)
	switch {
	case t.kb != nil:
		t.pr = newPrompter(a, t.kb, t.sc, t.printer, t.interrupt)
		t.ui.pr = t.pr
		t.header(cfg, params)
	case !o.JSON:
		fmt.Fprintln(t.stderr, "agentd: no terminal: questions are not asked, and writes or commands the policy does not allow are rejected.")
	}
	if err := t.earlierRuns(ctx, params.SessionID, o.JSON); err != nil {
		return t.fail(err)
	}
	res, err := a.Run(ctx, params)
	if err != nil {
		return t.fail(err)
	}
	t.showImages(res.Images)
	// Before the queue delivers anything (wait starts it): only this run is
	// shown, not an earlier one the agent found paused in the workspace.
	t.front.show(res.RunID)
	if t.pr != nil {
		t.pr.setRun(res.RunID) // what is typed while it works steers it
	}
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
	return ExitUsage
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
	live := IsTerminal(t.stdout)
	t.sc = newScreen(t.stdout, live, live && os.Getenv("NO_COLOR") == "")
	t.sc.errOut = t.stderr
	if live && IsTerminal(t.stderr) {
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

// showImages lists the prompt's pictures under the header, as the model
// gets them.
func (t *terminalRun) showImages(refs []agent.ImageRef) {
	for _, im := range refs {
		line := "image " + im.Name + " (" + im.String() + ")"
		if t.sc != nil {
			t.sc.println(t.sc.style("2", "• "+line))
		} else {
			fmt.Fprintln(t.stderr, line)
		}
	}
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
				return cancelled, ExitCancelled
			}
		case <-t.interrupts:
			if cancel() {
				return cancelled, ExitCancelled
			}
		case <-done:
			done = nil
			cancel()
		case <-stops:
			t.suspend()
		case <-deadline:
			return cancelled, ExitCancelled
		case st := <-t.final:
			switch st.State {
			case agent.StateCompleted:
				return st, ExitCompleted
			case agent.StateCancelled:
				return st, ExitCancelled
			}
			return st, ExitFailed
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

// LogSink is where agentd run logs without --log-file: stderr, but while
// the screen is live on the same terminal through the screen, so that a
// log line is printed above the status line instead of into it.
type LogSink struct {
	mu sync.Mutex
	w  io.Writer
	sc *screen
}

// NewLogSink writes to w until the screen goes live.
func NewLogSink(w io.Writer) *LogSink { return &LogSink{w: w} }

func (l *LogSink) through(sc *screen) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sc = sc
}

func (l *LogSink) Write(b []byte) (int, error) {
	l.mu.Lock()
	sc := l.sc
	l.mu.Unlock()
	if sc == nil {
		return l.w.Write(b)
	}
	sc.print(string(b))
	return len(b), nil
}

// IsTerminal says whether f is a file open on a terminal.
func IsTerminal(f any) bool {
	file, ok := f.(*os.File)
	return ok && xterm.IsTerminal(int(file.Fd()))
}
