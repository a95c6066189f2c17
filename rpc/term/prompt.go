package term

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/rpc/term/termmd"
	"github.com/agentd/agentd/tools"
)

var (
	// errPromptClosed ends a prompt whose request was closed elsewhere
	// (timed out, cancelled).
	errPromptClosed = errors.New("the request was closed")
	// errInterrupted is Ctrl-C read as a key.
	errInterrupted = errors.New("interrupted")
	// errSkipped is Ctrl-D at a text prompt.
	errSkipped = errors.New("skipped")
)

// prompter puts the run's input requests to the user one at a time, on
// its own goroutine, so that notifications keep flowing while it waits
// (and the run's end is seen even with a prompt open).
type prompter struct {
	a         *agent.Agent
	kb        *keyboard
	sc        *screen
	p         *printer
	interrupt func()

	mu      sync.Mutex // guards queue, open, runID, stopSteer
	queue   []agent.InputRequest
	open    map[string]chan struct{} // closed when the request is resolved
	ready   chan struct{}
	current string

	// While no question is open, what the user types goes to the steer
	// line (steer.go), for the run runID; stopSteer ends that when a
	// question comes.
	runID     string
	steerLine lineEdit
	stopSteer func()
	noSteer   bool // the keyboard closed
}

func newPrompter(a *agent.Agent, kb *keyboard, sc *screen, p *printer, interrupt func()) *prompter {
	return &prompter{a: a, kb: kb, sc: sc, p: p, interrupt: interrupt,
		open: map[string]chan struct{}{}, ready: make(chan struct{}, 1)}
}

// add queues a request (called in the order the run sent them).
func (pr *prompter) add(req agent.InputRequest) {
	pr.mu.Lock()
	pr.queue = append(pr.queue, req)
	pr.open[req.RequestID] = make(chan struct{})
	if pr.stopSteer != nil {
		pr.stopSteer() // the question takes the keyboard
	}
	pr.mu.Unlock()
	select {
	case pr.ready <- struct{}{}:
	default:
	}
}

// resolved closes the request's prompt, or drops it from the queue.
func (pr *prompter) resolved(id string) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if ch, ok := pr.open[id]; ok {
		close(ch)
		delete(pr.open, id)
	}
}

// pending says how many requests wait, the open one included.
func (pr *prompter) pending() int {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return len(pr.open)
}

// run asks the queued requests until quit is closed.
func (pr *prompter) run(quit <-chan struct{}) {
	for {
		pr.mu.Lock()
		var req *agent.InputRequest
		var done chan struct{}
		for len(pr.queue) > 0 && req == nil {
			r := pr.queue[0]
			pr.queue = pr.queue[1:]
			if ch, ok := pr.open[r.RequestID]; ok {
				req, done = &r, ch
			}
		}
		steer := pr.runID != "" && !pr.noSteer
		pr.mu.Unlock()
		if req == nil && steer {
			pr.steer(quit)
			select {
			case <-quit:
				return
			default:
				continue
			}
		}
		if req == nil {
			select {
			case <-pr.ready:
				continue
			case <-quit:
				return
			}
		}
		err := pr.askUntilSaved(*req, done)
		pr.sc.setPrompt(nil)
		switch {
		case errors.Is(err, errInterrupted):
			pr.interrupt()
		case errors.Is(err, errPromptClosed), err == nil:
		case errors.Is(err, errKeyboardClosed):
			pr.sc.println("agentd: the terminal closed: " + requestHeadline(*req) + " stays unanswered")
			<-quit
			return
		default:
			pr.sc.println("agentd: " + err.Error())
		}
	}
}

// askUntilSaved asks req until its answer is saved: an answer that could
// not be saved (agent.ErrNotSaved) leaves the request open, so it is said
// why and asked again, unless the request was closed meanwhile.
func (pr *prompter) askUntilSaved(req agent.InputRequest, done <-chan struct{}) error {
	for {
		err := pr.ask(req, done)
		if !errors.Is(err, agent.ErrNotSaved) {
			return err
		}
		pr.sc.setPrompt(nil)
		pr.sc.println(pr.sc.style("31", "agentd: "+err.Error()) + pr.sc.style("2", " (the answer was not taken: asking again)"))
		select {
		case <-done:
			return nil
		default:
		}
	}
}

// ask puts a request to the user by its generic form, whatever its kind:
// a decision to take, a secret to type, options to pick (with words to go
// with some of them), or text.
func (pr *prompter) ask(req agent.InputRequest, done <-chan struct{}) error {
	switch {
	case req.AnswerWith == agent.AnswerConfirm:
		return pr.confirm(req, done)
	case req.Input != nil && req.Input.Secret:
		return pr.secret(req, done)
	case len(req.Options) > 0:
		return pr.choice(req, done)
	}
	return pr.question(req, done)
}

// choiceItem is one line of a picker.
type choiceItem struct {
	key   rune // the key that picks it; 0: only its number
	label string
	id    string // the option's id, or a decision
}

// confirmItems are a confirmation's answers, from the request's options.
func confirmItems(req agent.InputRequest) []choiceItem {
	labels := map[tools.Decision]choiceItem{
		tools.AllowOnce:    {'y', "Yes, once", ""},
		tools.AllowSession: {'s', "Yes, for this session", ""},
		tools.AllowAlways:  {'a', "Always (saves a rule)", ""},
		tools.AllowFull:    {'f', "Yes, once, without the sandbox (with your full rights)", ""},
		tools.RejectOnce:   {'n', "No", ""},
		tools.RejectAlways: {'x', "Never (saves a rule that rejects it; asks to be sure)", ""},
	}
	opts := req.Options
	if len(opts) == 0 {
		for _, d := range tools.Decisions {
			opts = append(opts, tools.Option{OptionID: string(d)})
		}
	}
	var items []choiceItem
	for _, o := range opts {
		it, ok := labels[tools.Decision(o.OptionID)]
		if !ok {
			it = choiceItem{label: o.Label}
		}
		it.id = o.OptionID
		items = append(items, it)
		if tools.Decision(o.OptionID) == tools.RejectOnce {
			items = append(items, choiceItem{'t', "No, and tell the agent what to do instead", tellID})
		}
	}
	return items
}

// tellID is the picker's "no, and say why" answer.
const tellID = "reject_with_reason"

func (pr *prompter) confirm(req agent.InputRequest, done <-chan struct{}) error {
	var b strings.Builder
	if who := subagentAsks(req); who != "" {
		b.WriteString(pr.sc.style("36", who) + "\n")
	}
	b.WriteString(pr.sc.style("1;33", "? "+requestHeadline(req)) + "\n")
	if req.Command != "" {
		cwd := ""
		if req.Cwd != "" && req.Cwd != "." {
			cwd = pr.sc.style("2", "   (in "+req.Cwd+")")
		}
		b.WriteString(pr.sc.style("1", indent("$ "+req.Command, "    ")) + cwd + "\n")
	}
	for _, d := range req.Diff {
		for _, l := range pr.p.diffLines(d.Diff, -1) { // all of it: nothing is approved unseen
			b.WriteString(l + "\n")
		}
		if d.RunsLater != "" {
			b.WriteString(pr.sc.style("33", "  "+d.Path+" runs later, outside the sandbox: "+d.RunsLater) + "\n")
		}
	}
	if req.Kind == agent.KindConfirmCommand && req.Message != "" {
		// Where it would run: the sandbox profile, the network, the secrets.
		for _, l := range wrapWords(req.Message, pr.p.width()-4) {
			b.WriteString("  " + l + "\n")
		}
	}
	if len(req.GrantCovers) > 0 { // what a lasting answer would allow from then on
		for _, l := range wrapWords("\"for this session\" and \"always\" also allow: "+strings.Join(req.GrantCovers, "; "), pr.p.width()-4) {
			b.WriteString("  " + l + "\n")
		}
	}
	if req.Rule != "" {
		for _, l := range wrapWords("("+req.Rule+")", pr.p.width()-4) {
			b.WriteString(pr.sc.style("2", "  "+l) + "\n")
		}
	}
	if e := expiry(req, "rejected"); e != "" {
		b.WriteString(pr.sc.style("2", e) + "\n")
	}
	pr.sc.print(b.String())
	pr.sc.setRecall(pr.recall(req))
	items := confirmItems(req)
	for {
		it, err := pr.pick(items, done, "Ctrl-D: no")
		if errors.Is(err, errSkipped) {
			it, err = choiceItem{label: "No"}, nil
			it.id = string(tools.RejectOnce)
		}
		if err != nil {
			return err
		}
		p := agent.ConfirmParams{RequestID: req.RequestID, Decision: tools.Decision(it.id)}
		switch it.id {
		case string(tools.RejectAlways):
			sure, err := pr.yesNo("Never allow this? It saves a rule that rejects it from now on. y: yes, never · any other key: back", done)
			if err != nil {
				return err
			}
			if !sure {
				continue
			}
		case tellID:
			reason, err := pr.readLine("Tell the agent what to do instead", "", false, done)
			if errors.Is(err, errSkipped) {
				continue
			}
			if err != nil {
				return err
			}
			p.Decision, p.Reason = tools.RejectOnce, reason
			it.label = "No: " + reason
		}
		code := "32"
		if !p.Decision.Allows() {
			code = "31"
		}
		pr.sc.setPrompt(nil)
		pr.sc.answered("  " + pr.sc.style(code, "→ "+it.label))
		return pr.a.Confirm(context.Background(), p)
	}
}

func (pr *prompter) header(req agent.InputRequest) {
	var b strings.Builder
	if who := subagentAsks(req); who != "" {
		b.WriteString(pr.sc.style("36", who) + "\n")
	}
	b.WriteString(pr.sc.style("1;33", "? "+requestHeadline(req)) + "\n")
	// Named once the header is printed: printing it must not count as
	// output that pushed it away.
	defer pr.sc.setRecall(pr.recall(req))
	if requestHeadline(req) != req.Message { // a message of several lines (a plan): Markdown
		b.WriteString(indent(strings.TrimRight(termmd.Render(req.Message, pr.p.width()-4, pr.sc.colour), "\n"), "    ") + "\n")
	}
	if req.Context != "" {
		for _, l := range wrapPlain(req.Context, pr.p.width()-4) {
			b.WriteString(pr.sc.style("2", "    "+l) + "\n")
		}
	}
	if e := expiry(req, "left unanswered"); e != "" {
		b.WriteString(pr.sc.style("2", e) + "\n")
	}
	pr.sc.print(b.String())
}

// recall is what the prompt shows of its request again when other output
// (a subagent's siblings at work) pushed the request's header up: who
// asks, the question, the command.
func (pr *prompter) recall(req agent.InputRequest) []string {
	var lines []string
	if who := subagentAsks(req); who != "" {
		lines = append(lines, pr.sc.style("36", who))
	}
	lines = append(lines, pr.sc.style("1;33", "? "+requestHeadline(req)))
	if req.Command != "" {
		lines = append(lines, pr.sc.style("1", "    $ "+strings.SplitN(req.Command, "\n", 2)[0]))
	}
	return lines
}

// expiry says when an unanswered request closes by itself, if it does.
func expiry(req agent.InputRequest, then string) string {
	if req.ExpiresAt == nil {
		return ""
	}
	left := time.Until(*req.ExpiresAt).Round(time.Second)
	return fmt.Sprintf("  (without an answer within %s, it is %s)", max(left, 0), then)
}

func (pr *prompter) question(req agent.InputRequest, done <-chan struct{}) error {
	pr.header(req)
	text, err := pr.readLine("", req.Default, false, done)
	if errors.Is(err, errSkipped) {
		text, err = "(no answer)", nil
	}
	if err != nil {
		return err
	}
	pr.sc.answered("  " + pr.sc.style("32", "→ "+text))
	return pr.a.Reply(context.Background(), agent.ReplyParams{RequestID: req.RequestID, Text: &text})
}

func (pr *prompter) secret(req agent.InputRequest, done <-chan struct{}) error {
	pr.header(req)
	text, err := pr.readLine("hidden; Enter to send", "", true, done)
	if errors.Is(err, errSkipped) {
		text, err = "", nil
	}
	if err != nil {
		return err
	}
	pr.sc.answered("  " + pr.sc.style("32", "→ (given, hidden)"))
	return pr.a.Reply(context.Background(), agent.ReplyParams{RequestID: req.RequestID, Text: &text})
}

// otherID is the picker's "type an answer" entry.
const otherID = "\x00other"

func (pr *prompter) choice(req agent.InputRequest, done <-chan struct{}) error {
	pr.header(req)
	items := make([]choiceItem, 0, len(req.Options)+1)
	for _, o := range req.Options {
		label := o.Label
		if o.Description != "" {
			label += pr.sc.style("2", " — "+o.Description)
		}
		items = append(items, choiceItem{label: label, id: o.OptionID})
	}
	own := req.Input != nil && len(req.Input.With) == 0 // the text may be the answer
	if own {
		items = append(items, choiceItem{key: 'o', label: "Other: type an answer", id: otherID})
	}
	p := agent.ReplyParams{RequestID: req.RequestID}
	var shown string
	for {
		var err error
		if req.Multiple {
			var chosen []choiceItem
			chosen, err = pr.pickMany(items, done)
			for _, it := range chosen {
				p.Answers = append(p.Answers, it.id)
				shown += ", " + plainLabel(it.label)
			}
			shown = strings.TrimPrefix(shown, ", ")
		} else {
			var it choiceItem
			it, err = pr.pick(items, done, "")
			p.OptionID, shown = it.id, plainLabel(it.label)
		}
		if errors.Is(err, errSkipped) {
			if !own {
				continue // a closed choice needs one of its options
			}
			p.OptionID, p.Answers = "", nil
			text := "(no answer)"
			p.Text, shown, err = &text, text, nil
		}
		if err != nil {
			return err
		}
		if p.OptionID == otherID || slices.Contains(p.Answers, otherID) {
			text, err := pr.readLine("Your answer", "", false, done)
			if errors.Is(err, errSkipped) {
				p = agent.ReplyParams{RequestID: req.RequestID}
				continue
			}
			if err != nil {
				return err
			}
			p.OptionID, p.Answers, p.Text, shown = "", nil, &text, text
		} else if in := req.Input; in != nil && slices.Contains(in.With, p.OptionID) {
			// Words that go with this option (a plan's feedback).
			text, err := pr.readLine(in.Label, "", false, done)
			if errors.Is(err, errSkipped) || err == nil && in.Required && strings.TrimSpace(text) == "" {
				p = agent.ReplyParams{RequestID: req.RequestID}
				continue
			}
			if err != nil {
				return err
			}
			p.Text = &text
			shown += ": " + text
		}
		pr.sc.setPrompt(nil)
		pr.sc.answered("  " + pr.sc.style("32", "→ "+shown))
		return pr.a.Reply(context.Background(), p)
	}
}
