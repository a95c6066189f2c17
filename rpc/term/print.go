package term

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/rpc/term/termmd"
	"github.com/agentd/agentd/tools"
)

// printOptions say how a run is shown.
type printOptions struct {
	// render lays markdown out and colours (a terminal); otherwise the
	// answer is printed as the model wrote it.
	render bool
	// reasoning prints the model's reasoning whole, dimmed, instead of
	// folding it into one line.
	reasoning bool
	// past is a run that already happened: no live parts, no streamed
	// output, each tool call on one line with its result.
	past bool
}

// printer turns a run's notifications into what a person reads. The
// terminal front end feeds it live; printEvents feeds it a past run's log.
type printer struct {
	sc  *screen
	opt printOptions

	answer   strings.Builder // the answer's markdown not printed yet
	answered bool            // some answer text was printed
	thought  strings.Builder
	thinking time.Time // when the reasoning being streamed began
	calls    map[string]*callView
	nested   map[string]string // a subagent's calls (task/own id) → its label
	running  []string          // calls in progress, oldest first
	last     string            // the call whose lines were printed last
	prompted map[string]bool
	usage    *agent.Usage
	started  time.Time
	lastAt   time.Time // when the last notification came: the model was asked then
	block    string    // what was printed last: "answer", "call", "" (other)
	// openLine: plain output printed answer text that did not end its
	// line, so the next block must start one ("…passes.Changed" otherwise).
	openLine bool
}

func newPrinter(sc *screen, opt printOptions) *printer {
	now := time.Now()
	return &printer{sc: sc, opt: opt, calls: map[string]*callView{}, nested: map[string]string{}, prompted: map[string]bool{}, started: now, lastAt: now}
}

// printEvents prints a past run's notifications (Agent.Events,
// Agent.SessionHistory) in short form: the answer, each tool call on one
// line with its result, the questions and how they were answered. With
// colour, for a terminal, the answer is laid out and coloured for the
// width of w (80 columns when w is no terminal).
func printEvents(w io.Writer, events []agent.Event, colour bool) error {
	sc := newScreen(w, false, colour)
	p := newPrinter(sc, printOptions{render: colour, past: true})
	for _, e := range events {
		if err := e.Deliver(p); err != nil {
			return err
		}
	}
	p.flush()
	sc.close()
	return nil
}

// Update implements agent.Listener.
func (p *printer) Update(u agent.UpdateParams) { p.update(visibleUpdate(u.Update)) }

// InputRequest implements agent.Listener: a past run's question.
func (p *printer) InputRequest(req agent.InputRequest) {
	req = visibleRequest(req)
	p.flush()
	p.gap("request")
	line := p.style("33", "? "+requestHeadline(req))
	if who := subagentAsks(req); who != "" {
		line = p.style("2", who) + "\n" + line
	}
	if req.Command != "" {
		line += "\n    " + p.style("1", "$ "+req.Command)
	}
	p.sc.println(line)
}

// InputResolved implements agent.Listener.
func (p *printer) InputResolved(r agent.InputResolved) {
	if r.By == agent.ByUser && !p.opt.past {
		return // the prompt said it
	}
	p.sc.println(p.style("2", "  → "+outcomeText(r)))
}

// RunState implements agent.Listener.
func (p *printer) RunState(st agent.RunState) { p.state(st) }

func (p *printer) style(code, s string) string { return p.sc.style(code, s) }

func (p *printer) width() int { return min(p.sc.width(), 120) }

func (p *printer) update(up agent.Update) {
	if up.Kind != agent.UpdateThoughtChunk {
		p.foldThought()
	}
	switch up.Kind {
	case agent.UpdateMessageChunk:
		p.answerChunk(up.Text)
	case agent.UpdateThoughtChunk:
		p.thoughtChunk(up.Text)
	case agent.UpdatePlan:
		p.flush()
		p.plan(up)
	case agent.UpdateToolCall:
		p.flush()
		p.toolCall(up)
	case agent.UpdateToolCallUpdate:
		p.toolCallUpdate(up)
	case agent.UpdateUsage:
		p.usage = up.Usage
	case agent.UpdateFilesChanged:
		p.flush()
		p.filesChanged(up.Files)
	case agent.UpdateResult:
		p.flush()
		if !p.answered && up.Text != "" {
			p.printAnswer(up.Text)
		}
	case agent.UpdateInstructions:
		p.flush()
		p.instructions(up.Instructions)
	case agent.UpdateNotice:
		p.flush()
		p.sc.warn(p.style("33", "agentd: warning: "+up.Text))
	case agent.UpdateSteer:
		p.flush()
		p.steer(up.Text)
	case agent.UpdateSubagent:
		p.subagent(up) // subagent.go
	case agent.UpdateSettings:
		p.flush()
		if s := up.Settings; s != nil {
			p.sc.println(p.style("2", "agentd: the session's mode is now "+string(s.ApprovalPolicy)))
		}
	}
	p.lastAt = time.Now()
	p.setStatus()
}

// steer shows the user's words added to the run, where they were given.
func (p *printer) steer(text string) {
	p.gap("steer")
	var b strings.Builder
	for i, l := range wrapPlain(text, p.width()-2) {
		mark := "  "
		if i == 0 {
			mark = "› "
		}
		b.WriteString(p.style("1;36", mark) + p.style("36", l) + "\n")
	}
	p.sc.print(b.String())
}

// setStatus names what the agent is doing now.
func (p *printer) setStatus() {
	if p.opt.past {
		return
	}
	status := "thinking"
	switch {
	case len(p.running) > 0:
		c := p.calls[p.running[len(p.running)-1]]
		status = "running " + oneLine(c.title, 200)
		if c.kind != tools.KindExecute {
			status = oneLine(c.title, 200)
		}
	case p.thought.Len() > 0:
		status = "thinking"
	case p.answer.Len() > 0:
		status = "writing"
	}
	p.sc.setStatus(status)
}

// answerChunk takes a piece of the answer. On a terminal it is printed a
// block at a time, laid out, while the block being written shows in the
// live region; otherwise it is printed as it comes.
func (p *printer) answerChunk(text string) {
	if !p.opt.render {
		p.printPlain(text)
		p.answered = true
		return
	}
	p.answer.WriteString(text)
	done, rest := completeBlocks(p.answer.String())
	if done != "" {
		p.printAnswer(done)
		p.answer.Reset()
		p.answer.WriteString(rest)
	}
	p.previewAnswer()
}

func (p *printer) previewAnswer() {
	if p.opt.past {
		return
	}
	text := strings.TrimSpace(lastLines(p.answer.String(), 3))
	if text == "" {
		p.sc.setPreview(nil)
		return
	}
	lines := wrapPlain(text, p.width())
	p.sc.setPreview(lastN(lines, 3))
}

// printAnswer prints markdown, laid out on a terminal.
func (p *printer) printAnswer(md string) {
	if strings.TrimSpace(md) == "" {
		return
	}
	p.answered = true
	p.last = ""
	if !p.opt.render {
		p.printPlain(md)
		return
	}
	p.gap("answer")
	p.sc.print(termmd.Render(md, p.width(), p.sc.colour))
}

// gap puts a blank line around each block of the answer.
func (p *printer) gap(block string) {
	if p.block != "" && (p.block == "answer" || block == "answer") {
		p.sc.print("\n")
	}
	p.block = block
}

// printPlain prints answer text as the model wrote it, noting whether its
// last line is still open.
func (p *printer) printPlain(text string) {
	if text == "" {
		return
	}
	p.sc.print(text)
	p.openLine = !strings.HasSuffix(text, "\n")
}

// flush prints what is left of the answer, and ends an open line of it.
func (p *printer) flush() {
	if p.openLine {
		p.sc.print("\n")
		p.openLine = false
	}
	p.foldThought()
	if p.answer.Len() > 0 {
		md := p.answer.String()
		p.answer.Reset()
		p.printAnswer(md)
		p.sc.setPreview(nil)
	}
}

// completeBlocks splits markdown after its last blank line outside a code
// fence: what comes before is whole blocks, laid out the same whatever
// follows.
func completeBlocks(md string) (string, string) {
	cut, fence := 0, ""
	for i := 0; i < len(md); {
		end := strings.IndexByte(md[i:], '\n')
		if end < 0 {
			break
		}
		line := md[i : i+end]
		i += end + 1
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case fence != "":
			if strings.HasPrefix(trimmed, fence) && strings.TrimSpace(strings.TrimLeft(trimmed, fence[:1])) == "" {
				fence = ""
			}
		case strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~"):
			fence = trimmed[:3]
		case strings.TrimSpace(line) == "":
			cut = i
		}
	}
	return md[:cut], md[cut:]
}

func (p *printer) thoughtChunk(text string) {
	if p.thought.Len() == 0 {
		p.thinking = p.lastAt
	}
	p.thought.WriteString(text)
	if p.opt.past || !p.sc.live {
		return
	}
	lines := wrapPlain(strings.TrimSpace(lastLines(p.thought.String(), 2)), p.width()-2)
	tail := lastN(lines, 2)
	for i, l := range tail {
		tail[i] = p.style("2;3", "  "+l)
	}
	p.sc.setPreview(tail)
}

// foldThought ends the reasoning being streamed: one dimmed line saying
// how long the model thought, or the whole of it with --reasoning.
func (p *printer) foldThought() {
	if p.thought.Len() == 0 {
		return
	}
	text := strings.TrimSpace(p.thought.String())
	p.thought.Reset()
	p.sc.setPreview(nil)
	if !p.sc.live && !p.opt.reasoning && !p.opt.past {
		return // plain output carries the answer only
	}
	if p.opt.reasoning {
		var b strings.Builder
		for _, l := range wrapPlain(text, p.width()-2) {
			b.WriteString(p.style("2;3", "  "+l) + "\n")
		}
		p.sc.print(b.String())
		return
	}
	words := len(strings.Fields(text))
	line := fmt.Sprintf("  thought (%d words)", words)
	if !p.opt.past {
		line = fmt.Sprintf("  thought for %s (%d words)", formatDuration(time.Since(p.thinking)), words)
	}
	p.sc.println(p.style("2;3", line))
}

// instructions names the instruction files the model was given, dimmed
// (beside the run's own output on a terminal, on stderr otherwise).
func (p *printer) instructions(files []agent.InstructionFile) {
	if len(files) == 0 {
		return
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = visible(f.Path)
		if f.Truncated {
			names[i] += " (first 32 KB)"
		}
	}
	p.sc.warn(p.style("2", "agentd: instructions from "+strings.Join(names, ", ")))
}

func (p *printer) plan(up agent.Update) {
	p.gap("plan")
	var b strings.Builder
	b.WriteString(p.style("1", "Plan") + "\n")
	if up.Explanation != "" {
		b.WriteString(p.style("2", "  "+up.Explanation) + "\n")
	}
	for _, e := range up.Entries {
		mark, code := "○", "0"
		switch e.Status {
		case agent.StatusCompleted:
			mark, code = "✓", "32"
		case agent.StatusInProgress:
			mark, code = "▸", "1"
		case agent.StatusFailed:
			mark, code = "✗", "31"
		}
		if !p.sc.colour {
			mark = map[agent.Status]string{agent.StatusPending: "[ ]", agent.StatusInProgress: "[~]",
				agent.StatusCompleted: "[x]", agent.StatusFailed: "[!]"}[e.Status]
		}
		b.WriteString("  " + p.style(code, mark+" "+e.Content) + "\n")
	}
	p.sc.print(b.String())
	p.last = ""
}

func (p *printer) state(st agent.RunState) {
	switch st.State {
	case agent.StateFailed:
		p.flush()
		p.sc.warn(p.style("31", "agentd: run failed: "+visible(st.Error))) // the model's server's words, among others
	case agent.StatePaused:
		p.flush()
		p.sc.warn(p.style("33", "agentd: run paused: "+visible(st.Error)))
		if !p.opt.past {
			p.sc.warn(p.style("33", "agentd: its state could not be saved, so it stopped where it stands and stays paused; "+
				"agentd run cannot resume it (an editor can, once the state directory takes writes again)"))
		}
	}
	if st.State.Finished() || st.State == agent.StatePaused && !p.opt.past {
		p.flush()
		p.running = nil
		p.sc.setTails(nil)
		p.sc.setStatus("")
	}
}

// summary is the closing line of a run: its state, what it cost, how to
// go on.
func (p *printer) summary(st agent.RunState) string {
	facts := []string{string(st.State)}
	if p.usage != nil && p.usage.TotalTokens > 0 {
		facts = append(facts, fmt.Sprintf("%s tokens", compactCount(p.usage.TotalTokens)))
	}
	facts = append(facts, formatDuration(time.Since(p.started)))
	return fmt.Sprintf("session %s, run %s: %s", st.SessionID, st.RunID, strings.Join(facts, " · "))
}

// requestHeadline is what a request asks, in one line.
func requestHeadline(req agent.InputRequest) string {
	switch req.Kind {
	case agent.KindConfirmCommand:
		return "Allow this command?"
	case agent.KindConfirmWrite:
		return "Allow this change: " + req.Title + "?"
	}
	if req.Message != "" && (!strings.Contains(strings.TrimSpace(req.Message), "\n") || req.Title == "") {
		return req.Message
	}
	return req.Title // a message of several lines is shown below it
}

// outcomeText says how a request was closed.
func outcomeText(r agent.InputResolved) string {
	what := strings.ReplaceAll(string(r.Outcome), "_", " ")
	switch r.By {
	case agent.ByTimeout:
		return "no answer in time"
	case agent.ByCancel:
		return "cancelled"
	case agent.ByPolicy:
		return what + " by the policy (nobody could be asked)"
	}
	return what
}
