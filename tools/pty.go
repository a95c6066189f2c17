package tools

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/creack/pty"
)

// Interactive commands run in a terminal; when output stalls at something
// that looks like a prompt, the prompt is answered.
const (
	promptQuiet    = 500 * time.Millisecond
	maxAutoAnswers = 3
	recentKeep     = 4 << 10
)

// ptySession is one interactive command's state while it runs.
type ptySession struct {
	env      *Env
	line     string
	f        *os.File
	capt     *capture
	recent   strings.Builder // output since the last answer, for detection
	autoUsed int
}

// runPTY runs cmd in a pseudo-terminal (its own session, so its own
// process group), in the kernel sandbox's profile cmd.Confine names. Time
// spent waiting for the user does not count against the timeout.
func runPTY(ctx context.Context, env *Env, cmd *Command, dir string, timeout time.Duration) Result {
	ptmx, tty, err := pty.Open()
	if err != nil {
		return *Errorf("starting the command in a terminal: %v", err)
	}
	defer ptmx.Close()
	_ = pty.Setsize(ptmx, &pty.Winsize{Rows: 40, Cols: 120})
	s := &ptySession{env: env, line: cmd.Line, f: ptmx, capt: newCapture(env, cmd)}
	spec := commandSpec(env, cmd, dir, nil, nil, tty)
	spec.Env = append(spec.Env, "TERM=xterm")
	start := time.Now()
	p, err := env.sandbox().Command(ctx, spec)
	tty.Close() // the command has its own copy; the reader sees EOF when it ends
	if err != nil {
		return startFailed(ctx, env, cmd, err, s.capt.String(), start)
	}
	chunks := readChunks(ptmx)
	done := make(chan error, 1)
	go func() { done <- p.Wait() }()
	o := s.loop(ctx, chunks, done, p, start.Add(timeout), timeout)
	o.elapsed = time.Since(start)
	if o.stopped == "" {
		code := p.ExitCode()
		o.exitCode = &code
	}
	return finishConfined(env, s.capt.String(), o, cmd.Confine, p)
}

func readChunks(f *os.File) <-chan []byte {
	ch := make(chan []byte, 16)
	go func() {
		defer close(ch)
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			if n > 0 {
				ch <- append([]byte(nil), buf[:n]...)
			}
			if err != nil {
				return
			}
		}
	}()
	return ch
}

// loop pumps output until the command exits, is killed, or a prompt
// cannot be answered.
func (s *ptySession) loop(ctx context.Context, chunks <-chan []byte, done <-chan error, p *Proc, deadline time.Time, timeout time.Duration) cmdOutcome {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	last, fresh := time.Now(), false
	stop := func(why string) cmdOutcome {
		_ = p.Kill()
		<-done
		return cmdOutcome{stopped: why}
	}
	for {
		select {
		case b, ok := <-chunks:
			if !ok {
				chunks = nil
				continue
			}
			s.record(b)
			last, fresh = time.Now(), true
		case <-done:
			s.drain(chunks)
			return cmdOutcome{}
		case <-ctx.Done():
			return stop("cancelled")
		case now := <-tick.C:
			if now.After(deadline) {
				return stop("timed out after " + timeout.String())
			}
			if !fresh || now.Sub(last) < promptQuiet {
				continue
			}
			fresh = false
			asked := time.Now()
			if why := s.answer(ctx); why != "" {
				return stop(why)
			}
			deadline = deadline.Add(time.Since(asked))
		}
	}
}

func (s *ptySession) record(b []byte) {
	_, _ = s.capt.Write(b)
	s.recent.Write(b)
	if s.recent.Len() > 2*recentKeep {
		r := s.recent.String()
		s.recent.Reset()
		s.recent.WriteString(r[len(r)-recentKeep:])
	}
}

// drain collects what the command printed just before it exited; a
// background child holding the terminal must not keep us here.
func (s *ptySession) drain(chunks <-chan []byte) {
	if chunks == nil {
		return
	}
	t := time.NewTimer(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case b, ok := <-chunks:
			if !ok {
				return
			}
			s.record(b)
			t.Reset(200 * time.Millisecond)
		case <-t.C:
			return
		}
	}
}

// answer checks whether the stalled output is a prompt and types the
// answer. A non-empty return says why the command must be stopped.
func (s *ptySession) answer(ctx context.Context) string {
	p, ok := detectPrompt(cleanTerminal(s.capt.redact(s.recent.String())))
	if !ok {
		return ""
	}
	keys, note, why := s.reply(ctx, p)
	if why != "" {
		return why
	}
	if p.Kind == promptSecret {
		s.capt.addSecret(strings.TrimSuffix(keys, "\r"))
	}
	s.recent.Reset()
	if note != "" {
		_, _ = s.capt.Write([]byte(note))
	}
	if _, err := s.f.Write([]byte(keys)); err != nil {
		return "could not type the answer: " + err.Error()
	}
	return ""
}

// reply decides what to type: a safe default confirmation is answered
// automatically (at most maxAutoAnswers times per command); everything
// else, passwords always, goes to the user.
func (s *ptySession) reply(ctx context.Context, p cmdPrompt) (keys, note, why string) {
	if p.auto != "" && s.autoUsed < maxAutoAnswers {
		s.autoUsed++
		return p.auto, fmt.Sprintf("\n[agentd answered %q to %q automatically]\n", strings.TrimSpace(p.auto), p.Text), ""
	}
	if s.env.Asker == nil {
		return "", "", fmt.Sprintf("stopped at a prompt no one can answer (%q)", p.Text)
	}
	q := Question{Title: "The command is asking", Message: p.Text, Options: p.Options, Secret: p.Kind == promptSecret, Command: s.line}
	a, err := s.env.Asker.Ask(ctx, q)
	switch {
	case err != nil:
		return "", "", fmt.Sprintf("stopped: asking the user failed (%v)", err)
	case a.TimedOut:
		return "", "", fmt.Sprintf("stopped: the user did not answer the prompt %q in time", p.Text)
	case a.Cancelled:
		return "", "", fmt.Sprintf("stopped: the user declined to answer the prompt %q", p.Text)
	}
	shown := a.Text
	if p.Kind == promptSecret {
		shown = "(secret)"
	} else if a.OptionID != "" {
		shown = a.OptionID
	}
	return p.keysFor(a), fmt.Sprintf("\n[the user answered %q to %q]\n", shown, p.Text), ""
}
