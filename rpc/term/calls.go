package term

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/rpc/term/termmd"
	"github.com/agentd/agentd/tools"
)

// callView is one tool call as the terminal shows it.
type callView struct {
	id, title string
	kind      tools.Kind
	line      string // the call as printed: "$ go test ./..." or "read main.go"
	out       strings.Builder
	partial   string // plain mode: output after the last newline, not printed yet
	streamed  bool
	// nest indents a subagent's call under its task (subagent.go), and
	// label names the subagent on the call's line.
	nest, label string
}

func (p *printer) toolCall(up agent.Update) {
	c := &callView{id: up.ToolCallID, title: up.Title, kind: up.ToolKind}
	c.line = callLine(up)
	if n := p.nested[c.id]; n != "" {
		c.nest, c.label = "  ", n
	}
	p.calls[c.id] = c
	switch up.Title {
	case "Ask the user", "Update the plan":
		return // the question or the plan says it
	}
	p.gap("call")
	if c.nest != "" {
		p.sc.println(p.style("2", "  ↳ "+c.label+" · ") + p.style("1", c.line))
	} else {
		p.sc.println(p.style("36", "• ") + p.style("1", c.line))
	}
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
	if up.Diagnostics != nil {
		p.diagnostics(up.Diagnostics)
		return
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
	case up.Subagent != nil:
		facts = append(facts, subagentFacts(up.Subagent)...)
		if !p.opt.past {
			body = p.outputLines(headTail(taskAnswer(lines), 6, 0)) // its answer, as the model read it
		}
	case len(lines) == 1:
		facts = append(facts, oneLine(lines[0], max(20, p.width()-20)))
	case len(lines) > 1:
		facts = append(facts, plural(len(lines), "line"))
	}
	head := "  " + c.nest + mark
	if len(facts) > 0 {
		head += " " + p.style("2", strings.Join(facts, " · "))
	}
	if failed && len(facts) > 0 {
		head = "  " + c.nest + mark + " " + p.style("31", strings.Join(facts, " · "))
	}
	if c.nest != "" {
		body = indentAll(body, c.nest)
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
		if f.RunsLater != "" { // it runs outside the sandbox later: say so where the user looks
			fmt.Fprintf(&b, "    %s\n", p.style("33", "runs later, outside the sandbox: "+f.RunsLater))
		}
	}
	p.sc.print(b.String())
	p.last = ""
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

// diagnostics shows, under a reply's last edit, what the language servers
// told the model of the files the reply changed.
func (p *printer) diagnostics(d *tools.DiagnosticsReport) {
	lines := splitLines(d.Text)
	if p.opt.past && len(lines) > 1 {
		lines = lines[:1] // a past run in short form: the summary
	}
	color := "32"
	if len(d.Items)+d.Omitted > 0 {
		color = "33"
	}
	if d.New > 0 {
		color = "31"
	}
	if len(lines) > 0 {
		lines[0] = p.style(color, lines[0])
	}
	p.sc.print(indent(strings.Join(lines, "\n")+"\n", "    "))
}
