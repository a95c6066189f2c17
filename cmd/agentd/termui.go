package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/term"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/tools"
)

// termUI renders a run's notifications on a terminal and asks its questions
// there. It is an agent.Listener behind an agent.Queue: the run never waits
// on the terminal, and the terminal may wait on the user.
type termUI struct {
	agent *agent.Agent
	queue *agent.Queue
	in    *bufio.Reader
	inFd  int
	out   io.Writer
	err   io.Writer
	tty   bool
	final chan agent.RunState
}

func newTermUI(stdin io.Reader, stdout, stderr io.Writer) *termUI {
	u := &termUI{in: bufio.NewReader(stdin), out: stdout, err: stderr, tty: isTerminal(stdin, stdout), final: make(chan agent.RunState, 1)}
	if f, ok := stdin.(*os.File); ok {
		u.inFd = int(f.Fd())
	}
	u.queue = agent.NewQueue(u)
	return u
}

// Update shows a run event.
func (u *termUI) Update(p agent.UpdateParams) { u.show(p.Update) }

// InputRequest asks the user.
func (u *termUI) InputRequest(req agent.InputRequest) { u.ask(req) }

// InputResolved needs nothing: the terminal asks one thing at a time.
func (u *termUI) InputResolved(agent.InputResolved) {}

// RunState reports failures and the end of the run.
func (u *termUI) RunState(st agent.RunState) { u.state(st) }

func (u *termUI) color(code, s string) string {
	if !u.tty {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (u *termUI) show(up agent.Update) {
	switch up.Kind {
	case agent.UpdateMessageChunk:
		fmt.Fprint(u.out, up.Text)
	case agent.UpdatePlan:
		fmt.Fprintln(u.out, u.color("1", "\nPlan:"))
		marks := map[agent.Status]string{agent.StatusPending: "[ ]", agent.StatusInProgress: "[~]", agent.StatusCompleted: "[x]", agent.StatusFailed: "[!]"}
		for _, e := range up.Entries {
			fmt.Fprintf(u.out, "  %s %s\n", marks[e.Status], e.Content)
		}
	case agent.UpdateToolCall:
		fmt.Fprintln(u.out, u.color("36", "\n• "+up.Title)+" "+u.color("2", oneLine(string(up.Input), 100)))
	case agent.UpdateToolCallUpdate:
		switch up.Status {
		case agent.StatusCompleted:
			fmt.Fprintln(u.out, u.color("32", "  ✓ ")+oneLine(up.Output, 120))
		case agent.StatusFailed:
			fmt.Fprintln(u.out, u.color("31", "  ✗ ")+oneLine(up.Output, 200))
		}
	case agent.UpdateFilesChanged:
		fmt.Fprintln(u.out, u.color("1", "\nFiles changed:"))
		for _, f := range up.Files {
			fmt.Fprintf(u.out, "  %s %s\n", f.Status, f.Path)
		}
	case agent.UpdateResult:
		fmt.Fprintln(u.out)
	case agent.UpdateInstructions:
		names := make([]string, len(up.Instructions))
		for i, f := range up.Instructions {
			names[i] = f.Path
			if f.Truncated {
				names[i] += " (first 32 KB)"
			}
		}
		fmt.Fprintln(u.err, u.color("2", "agentd: instructions from "+strings.Join(names, ", ")))
	case agent.UpdateNotice:
		fmt.Fprintln(u.err, u.color("33", "agentd: warning: "+up.Text))
	}
}

func (u *termUI) state(st agent.RunState) {
	switch st.State {
	case agent.StateFailed:
		fmt.Fprintln(u.err, u.color("31", "\nagentd: run failed: "+st.Error))
	case agent.StatePaused:
		fmt.Fprintln(u.err, "agentd: run paused: "+st.Error)
	}
	switch st.State {
	case agent.StateCompleted, agent.StateFailed, agent.StateCancelled, agent.StatePaused:
		// Paused, live, is a run whose state could not be saved: nothing
		// here can resume it, so the command ends.
		u.final <- st
	}
}

// ask puts an input request to the user and sends the answer. An answer
// that could not be saved leaves the request open: it is asked again.
func (u *termUI) ask(req agent.InputRequest) {
	ctx := context.Background()
	for {
		var err error
		switch req.Kind {
		case agent.KindConfirmWrite, agent.KindConfirmCommand:
			err = u.confirm(ctx, req)
		default:
			err = u.question(ctx, req)
		}
		if err != nil {
			fmt.Fprintln(u.err, "agentd:", err)
		}
		if !errors.Is(err, agent.ErrNotSaved) {
			return
		}
	}
}

func (u *termUI) question(ctx context.Context, req agent.InputRequest) error {
	fmt.Fprintln(u.out, u.color("33", "\n? "+req.Message))
	if req.Context != "" {
		fmt.Fprintln(u.out, u.color("2", "  "+req.Context))
	}
	if req.Kind == agent.KindSecret {
		fmt.Fprint(u.out, "  (hidden) > ")
		b, err := term.ReadPassword(u.inFd)
		fmt.Fprintln(u.out)
		if err != nil {
			return err
		}
		s := string(b)
		return u.agent.Reply(ctx, agent.ReplyParams{RequestID: req.RequestID, Text: &s})
	}
	for i, o := range req.Options {
		fmt.Fprintf(u.out, "  %d) %s\n", i+1, o.Label)
	}
	if len(req.Options) > 0 && req.AllowOther {
		fmt.Fprintln(u.out, "  or type your own answer")
	}
	fmt.Fprint(u.out, "> ")
	line, err := u.in.ReadString('\n')
	if err != nil && line == "" {
		return err
	}
	line = strings.TrimSpace(line)
	p := agent.ReplyParams{RequestID: req.RequestID}
	if n, convErr := strconv.Atoi(line); convErr == nil && n >= 1 && n <= len(req.Options) {
		p.OptionID = req.Options[n-1].OptionID
	} else {
		p.Text = &line
	}
	return u.agent.Reply(ctx, p)
}

func (u *termUI) confirm(ctx context.Context, req agent.InputRequest) error {
	fmt.Fprintln(u.out, u.color("33", "\n? "+req.Title))
	for _, d := range req.Diff {
		u.printDiff(d.Diff)
	}
	if req.Command != "" {
		fmt.Fprintf(u.out, "  $ %s   (in %s)\n", req.Command, req.Cwd)
	}
	if req.Rule != "" {
		fmt.Fprintln(u.out, u.color("2", "  rule: "+req.Rule))
	}
	if req.Kind == agent.KindConfirmCommand && req.Message != "" {
		fmt.Fprintln(u.out, "  "+req.Message) // the sandbox it runs in, the network, the secrets
	}
	var decision tools.Decision
	for decision == "" {
		fmt.Fprint(u.out, "Allow? [y]es once, [s]ession, [a]lways, [f]ull (no sandbox, once), [n]o, [N]ever > ")
		line, err := u.in.ReadString('\n')
		if err != nil && line == "" {
			return err
		}
		decision = map[string]tools.Decision{"y": tools.AllowOnce, "yes": tools.AllowOnce, "s": tools.AllowSession, "a": tools.AllowAlways,
			"f": tools.AllowFull, "N": tools.RejectAlways}[strings.TrimSpace(line)]
		if decision == "" {
			decision = tools.RejectOnce
		}
		if !offers(req, decision) {
			fmt.Fprintln(u.out, "  not offered here")
			decision = ""
		}
	}
	p := agent.ConfirmParams{RequestID: req.RequestID, Decision: decision}
	if decision == tools.RejectOnce || decision == tools.RejectAlways {
		fmt.Fprint(u.out, "Reason (optional) > ")
		reason, _ := u.in.ReadString('\n')
		p.Reason = strings.TrimSpace(reason)
	}
	return u.agent.Confirm(ctx, p)
}

// offers reports whether a confirmation offers decision (all when it lists none).
func offers(req agent.InputRequest, d tools.Decision) bool {
	if len(req.Options) == 0 {
		return true
	}
	for _, o := range req.Options {
		if o.OptionID == string(d) {
			return true
		}
	}
	return false
}

func (u *termUI) printDiff(diff string) {
	for _, l := range strings.Split(strings.TrimRight(diff, "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++"):
			l = u.color("32", l)
		case strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "---"):
			l = u.color("31", l)
		}
		fmt.Fprintln(u.out, "  "+l)
	}
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
