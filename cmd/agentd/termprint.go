package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/cmd/agentd/termmd"
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
	running  []string // calls in progress, oldest first
	last     string   // the call whose lines were printed last
	prompted map[string]bool
	usage    *agent.Usage
	started  time.Time
	lastAt   time.Time // when the last notification came: the model was asked then
	block    string    // what was printed last: "answer", "call", "" (other)
}

// callView is one tool call as the terminal shows it.
type callView struct {
	id, title string
	kind      tools.Kind
	line      string // the call as printed: "$ go test ./..." or "read main.go"
	out       strings.Builder
	partial   string // plain mode: output after the last newline, not printed yet
	streamed  bool
}

func newPrinter(sc *screen, opt printOptions) *printer {
	now := time.Now()
	return &printer{sc: sc, opt: opt, calls: map[string]*callView{}, prompted: map[string]bool{}, started: now, lastAt: now}
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
	}
	p.lastAt = time.Now()
	p.setStatus()
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
		p.sc.print(text)
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
		p.sc.print(md)
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

// flush prints what is left of the answer.
func (p *printer) flush() {
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

func (p *printer) toolCall(up agent.Update) {
	c := &callView{id: up.ToolCallID, title: up.Title, kind: up.ToolKind}
	c.line = callLine(up)
	p.calls[c.id] = c
	switch up.Title {
	case "Ask the user", "Update the plan":
		return // the question or the plan says it
	}
	p.gap("call")
	p.sc.println(p.style("36", "• ") + p.style("1", c.line))
	p.last = c.id
}

// callLine is a tool call in a few words: the title its tool gave it ("read
// main.go"), "$ " and the command for a command, or, when the tool gave no
// title but its name, the name and its arguments, decoded (never raw JSON).
func callLine(up agent.Update) string {
	title := strings.TrimSpace(up.Title)
	var args struct {
		Command string `json:"command"`
	}
	_ = json.Unmarshal(up.Input, &args)
	switch {
	case up.ToolKind == tools.KindExecute && title != "" && title == strings.TrimSpace(visible(args.Command)):
		title = "$ " + title
	case title == "" || !strings.Contains(title, " "):
		title = strings.TrimSpace(title + " " + compactArgs(up.Input))
	}
	return oneLine(visible(title), 200)
}

// compactArgs shows a tool's JSON arguments as key=value pairs, strings
// unquoted where they can be, nothing escaped for HTML.
func compactArgs(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return oneLine(string(raw), 120)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+compactValue(m[k]))
	}
	return oneLine(strings.Join(parts, " "), 160)
}

func compactValue(v any) string {
	switch v := v.(type) {
	case string:
		if v == "" || strings.ContainsAny(v, " \t\n\"=") {
			return strconv.Quote(v)
		}
		return v
	case nil:
		return "null"
	case bool, float64:
		return fmt.Sprint(v)
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSpace(b.String())
}

func (p *printer) toolCallUpdate(up agent.Update) {
	c := p.calls[up.ToolCallID]
	if c == nil {
		c = &callView{id: up.ToolCallID, title: up.ToolCallID, line: up.ToolCallID}
		p.calls[c.id] = c
	}
	switch up.Status {
	case agent.StatusInProgress:
		if !slices.Contains(p.running, c.id) {
			p.running = append(p.running, c.id)
		}
		if up.OutputDelta != "" {
			p.outputDelta(c, up.OutputDelta)
		}
	case agent.StatusCompleted, agent.StatusFailed:
		p.running = slices.DeleteFunc(p.running, func(id string) bool { return id == c.id })
		p.showTails()
		p.finishCall(c, up)
	}
}

// outputDelta takes a piece of a running command's output: its last lines
// show under the call on a terminal; elsewhere the lines are printed as
// they complete.
func (p *printer) outputDelta(c *callView, delta string) {
	c.out.WriteString(delta)
	c.streamed = true
	if p.opt.past {
		return
	}
	if !p.sc.live {
		text := c.partial + delta
		cut := strings.LastIndexByte(text, '\n') + 1
		c.partial = text[cut:]
		if cut > 0 {
			p.sc.print(indent(plainLines(text[:cut]), "    "))
		}
		return
	}
	p.showTails()
}

// showTails draws the last lines of every running command.
func (p *printer) showTails() {
	if !p.sc.live || p.opt.past {
		return
	}
	var tails [][]string
	for _, id := range p.running {
		c := p.calls[id]
		if c.out.Len() == 0 {
			continue
		}
		lines := lastN(splitLines(lastLines(c.out.String(), 4)), 4)
		tail := make([]string, len(lines))
		for i, l := range lines {
			tail[i] = p.style("2", "  │ "+expandTabs(termmd.Plain(l)))
		}
		tails = append(tails, tail)
	}
	p.sc.setTails(tails)
}

// finishCall prints how a call ended: a line with its outcome; a failed
// command's whole output; a write's diff unless a prompt showed it.
func (p *printer) finishCall(c *callView, up agent.Update) {
	if c.partial != "" {
		p.sc.print(indent(plainLines(c.partial+"\n"), "    "))
		c.partial = ""
	}
	failed := up.Status == agent.StatusFailed
	if c.title == "Update the plan" && !failed {
		return
	}
	if c.title == "Ask the user" && !failed {
		return
	}
	mark := p.style("32", "✓")
	if failed {
		mark = p.style("31", "✗")
	}
	var facts []string
	if p.last != c.id && !p.opt.past {
		facts = append(facts, oneLine(c.line, max(20, p.width()/2)))
	}
	if up.ExitCode != nil {
		facts = append(facts, fmt.Sprintf("exit %d", *up.ExitCode))
	}
	if up.DurationMs >= 100 {
		facts = append(facts, formatDuration(time.Duration(up.DurationMs)*time.Millisecond))
	}
	output := strings.TrimRight(up.Output, "\n")
	if output == "" {
		output = strings.TrimRight(c.out.String(), "\n")
	}
	lines := splitLines(output)
	if up.ExitCode != nil && len(lines) > 0 && strings.HasPrefix(lines[len(lines)-1], "[exit code ") {
		lines = lines[:len(lines)-1] // said in the line's facts
	}
	var body []string
	switch {
	case len(up.Files) > 0 && !failed:
		for _, f := range up.Files {
			add, del := diffStat(f.Diff)
			facts = append(facts, fmt.Sprintf("%s %s (+%d -%d)", f.Status, f.Path, add, del))
			if !p.prompted[c.id] && !p.opt.past {
				body = append(body, p.diffLines(f.Diff, 40)...)
			}
		}
	case failed && (c.kind == tools.KindExecute || up.ExitCode != nil):
		if !(c.streamed && !p.sc.live) && !p.opt.past {
			body = p.outputLines(headTail(lines, 50, 400))
		}
	case failed && len(lines) == 1:
		facts = append(facts, lines[0])
	case failed:
		body = p.outputLines(headTail(lines, 10, 10))
	case c.kind == tools.KindExecute || up.ExitCode != nil:
		if len(lines) == 0 {
			facts = append(facts, "no output")
		} else {
			facts = append(facts, plural(len(lines), "line")+" of output")
		}
		if !p.opt.past && p.sc.live && len(lines) > 0 {
			body = p.outputLines(lastN(lines, 3))
		}
	case len(lines) == 1:
		facts = append(facts, oneLine(lines[0], max(20, p.width()-20)))
	case len(lines) > 1:
		facts = append(facts, plural(len(lines), "line"))
	}
	head := "  " + mark
	if len(facts) > 0 {
		head += " " + p.style("2", strings.Join(facts, " · "))
	}
	if failed && len(facts) > 0 {
		head = "  " + mark + " " + p.style("31", strings.Join(facts, " · "))
	}
	p.sc.print(head + "\n" + strings.Join(append(body, ""), "\n"))
	p.last = c.id
}

func (p *printer) outputLines(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = p.style("2", "    "+expandTabs(termmd.Plain(l)))
	}
	return out
}

// diffLines colours a unified diff, at most max lines of it (-1: all).
func (p *printer) diffLines(diff string, max int) []string {
	lines := splitLines(strings.TrimRight(diff, "\n"))
	var out []string
	for i, l := range lines {
		if i == max {
			out = append(out, p.style("2", fmt.Sprintf("    … %d more lines", len(lines)-max)))
			break
		}
		switch {
		case strings.HasPrefix(l, "+++") || strings.HasPrefix(l, "---"):
			l = p.style("1", l)
		case strings.HasPrefix(l, "+"):
			l = p.style("32", l)
		case strings.HasPrefix(l, "-"):
			l = p.style("31", l)
		case strings.HasPrefix(l, "@@"):
			l = p.style("36", l)
		}
		out = append(out, "    "+expandTabs(l))
	}
	return out
}

func (p *printer) filesChanged(files []tools.FileDiff) {
	p.gap("files")
	var b strings.Builder
	b.WriteString(p.style("1", "Changed") + "\n")
	for _, f := range files {
		add, del := diffStat(f.Diff)
		name := f.Path
		if f.OldPath != "" {
			name = f.OldPath + " → " + f.Path
		}
		fmt.Fprintf(&b, "  %s %s %s\n", f.Status, name, p.style("2", fmt.Sprintf("+%d -%d", add, del)))
	}
	p.sc.print(b.String())
	p.last = ""
}

func (p *printer) state(st agent.RunState) {
	switch st.State {
	case agent.StateFailed:
		p.flush()
		p.sc.warn(p.style("31", "agentd: run failed: "+st.Error))
	case agent.StatePaused:
		p.sc.warn(p.style("33", "agentd: run paused: "+st.Error))
	}
	if st.State.Finished() {
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
	if req.Message != "" {
		return req.Message
	}
	return req.Title
}

// outcomeText says how a request was closed.
func outcomeText(r agent.InputResolved) string {
	what := strings.ReplaceAll(string(r.Outcome), "_", " ")
	switch r.By {
	case agent.ByTimeout:
		return "no answer in time (" + what + ")"
	case agent.ByCancel:
		return "cancelled"
	case agent.ByPolicy:
		return what + " by the policy (nobody could be asked)"
	}
	return what
}

func diffStat(diff string) (add, del int) {
	for _, l := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		case strings.HasPrefix(l, "+"):
			add++
		case strings.HasPrefix(l, "-"):
			del++
		}
	}
	return add, del
}

func splitLines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
}

// lastLines is the end of s from its n-th last line, so a preview costs
// the same however long the text grows.
func lastLines(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	if len(s) > 1000 {
		s = s[len(s)-1000:]
		if i := strings.IndexAny(s, " \n"); i >= 0 {
			s = s[i+1:] // from a whole word on
		}
	}
	i := len(s)
	for ; n > 0 && i > 0; n-- {
		i = strings.LastIndexByte(s[:i], '\n')
		if i < 0 {
			return s
		}
	}
	return s[i+1:]
}

func lastN(lines []string, n int) []string {
	if len(lines) > n {
		return append([]string(nil), lines[len(lines)-n:]...)
	}
	return append([]string(nil), lines...)
}

// headTail keeps the first head and last tail lines, saying how many were
// left out between.
func headTail(lines []string, head, tail int) []string {
	if len(lines) <= head+tail {
		return lines
	}
	out := append([]string(nil), lines[:head]...)
	out = append(out, fmt.Sprintf("… %d lines …", len(lines)-head-tail))
	return append(out, lines[len(lines)-tail:]...)
}

func indent(text, prefix string) string {
	lines := strings.SplitAfter(text, "\n")
	var b strings.Builder
	for _, l := range lines {
		if l != "" {
			b.WriteString(prefix + l)
		}
	}
	return b.String()
}

// wrapPlain wraps text without markup at width.
func wrapPlain(text string, width int) []string {
	out := strings.Split(strings.TrimSpace(termmd.Render(text, width, false)), "\n")
	if len(out) == 1 && out[0] == "" {
		return nil
	}
	return out
}

func expandTabs(s string) string { return strings.ReplaceAll(s, "\t", "    ") }

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

func compactCount(n int) string {
	if n < 1000 {
		return strconv.Itoa(n)
	}
	return strconv.FormatFloat(float64(n)/1000, 'f', 1, 64) + "k"
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// visible shows the control characters of text the model wrote as escapes
// (\x1b), so that it can neither move the cursor nor hide a part of what a
// prompt shows; newlines and tabs stay.
func visible(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isControl(r) {
			fmt.Fprintf(&b, "\\x%02x", r)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isControl(r rune) bool {
	return r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f
}

// plainLines is a command's output without escape sequences or control
// characters, line by line.
func plainLines(text string) string {
	lines := strings.SplitAfter(text, "\n")
	for i, l := range lines {
		nl := strings.HasSuffix(l, "\n")
		lines[i] = termmd.Plain(strings.TrimSuffix(l, "\n"))
		if nl {
			lines[i] += "\n"
		}
	}
	return strings.Join(lines, "")
}

// visibleUpdate is up with what the model wrote made visible (see
// visible); command output is made plain where it is shown.
func visibleUpdate(up agent.Update) agent.Update {
	up.Text, up.Title, up.Explanation = visible(up.Text), visible(up.Title), visible(up.Explanation)
	if len(up.Entries) > 0 {
		entries := slices.Clone(up.Entries)
		for i := range entries {
			entries[i].Content = visible(entries[i].Content)
		}
		up.Entries = entries
	}
	up.Files = visibleFiles(up.Files)
	return up
}

func visibleFiles(files []tools.FileDiff) []tools.FileDiff {
	if len(files) == 0 {
		return files
	}
	out := slices.Clone(files)
	for i := range out {
		out[i].Path, out[i].OldPath, out[i].Diff = visible(out[i].Path), visible(out[i].OldPath), visible(out[i].Diff)
	}
	return out
}

// visibleRequest is req with what the model wrote made visible: a command
// line or a diff can hide nothing from the person who approves it.
func visibleRequest(req agent.InputRequest) agent.InputRequest {
	req.Title, req.Message, req.Context = visible(req.Title), visible(req.Message), visible(req.Context)
	req.Command, req.Cwd, req.Default = visible(req.Command), visible(req.Cwd), visible(req.Default)
	if len(req.Options) > 0 {
		opts := slices.Clone(req.Options)
		for i := range opts {
			opts[i].Label, opts[i].Description = visible(opts[i].Label), visible(opts[i].Description)
		}
		req.Options = opts
	}
	req.Diff = visibleFiles(req.Diff)
	return req
}
