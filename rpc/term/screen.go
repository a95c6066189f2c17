package term

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/agentd/agentd/rpc/term/termmd"
)

// screen is where a run is shown. Output is printed once and scrolls
// away like any command's; on a terminal, a live region under it is
// redrawn in place: the tail of what is streaming (the answer being
// written, a command's output), then either the status line (a spinner,
// the current activity and its time) or the open prompt. Without a
// terminal it only prints: no colours, no cursor motion, no status.
type screen struct {
	mu     sync.Mutex // guards everything below and writes to out
	out    io.Writer
	errOut io.Writer // where plain output's warnings go (stderr)
	fd     int
	live   bool // a terminal: the live region is drawn
	colour bool

	drawn   int // lines of the live region now on the screen
	preview []string
	tails   [][]string
	status  string
	since   time.Time
	prompt  []string
	back    int // columns the cursor sits left of the prompt's end
	// input is the line the user types to steer the run, under the status
	// line while no prompt is open; inputBack as back.
	input     []string
	inputBack int
	// recall is the open prompt's question, shown again above the prompt
	// once other output (a subagent's work) has pushed the question up:
	// away says some has been printed since.
	recall  []string
	away    bool
	frame   int
	stop    chan struct{}
	hidden  bool // the cursor is hidden
	paused  bool // the process is stopped (Ctrl-Z): draw nothing live
	midLine bool // plain output ended without a newline
}

// spinnerFrames turn while the agent works.
var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

func newScreen(out io.Writer, live, colour bool) *screen {
	s := &screen{out: out, fd: -1, live: live, colour: colour}
	if f, ok := out.(*os.File); ok {
		s.fd = int(f.Fd())
	}
	if live {
		s.stop = make(chan struct{})
		go s.spin()
	}
	return s
}

// width is the terminal's width in columns (80 when it cannot tell).
func (s *screen) width() int {
	if s.fd >= 0 {
		if w, _, err := term.GetSize(s.fd); err == nil && w > 0 {
			return w
		}
	}
	return 80
}

func (s *screen) height() int {
	if s.fd >= 0 {
		if _, h, err := term.GetSize(s.fd); err == nil && h > 0 {
			return h
		}
	}
	return 24
}

// spin turns the spinner ten times a second while there is a status.
func (s *screen) spin() {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.mu.Lock()
			if s.status != "" && s.prompt == nil {
				s.frame++
				s.redrawLocked()
			}
			s.mu.Unlock()
		}
	}
}

// close clears the live region and shows the cursor again; later prints
// still work.
func (s *screen) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.live {
		if s.midLine {
			io.WriteString(s.out, "\n")
			s.midLine = false
		}
		return
	}
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	s.preview, s.tails, s.status, s.prompt, s.input = nil, nil, "", nil, nil
	s.eraseLocked()
	s.cursorLocked(true)
}

// pause clears the live region and shows the cursor while the process is
// stopped (Ctrl-Z); resume draws it again.
func (s *screen) pause() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live {
		s.eraseLocked()
		s.cursorLocked(true)
	}
	s.paused = true
}

func (s *screen) resume() { s.set(func() { s.paused = false }) }

// print writes text above the live region. On a terminal the text is made
// to end in a newline, so the live region always starts a line.
func (s *screen) print(text string) {
	if text == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.live {
		io.WriteString(s.out, text)
		s.midLine = !strings.HasSuffix(text, "\n")
		return
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	s.away = s.recall != nil
	s.eraseLocked()
	io.WriteString(s.out, text)
	s.drawLocked()
}

// println writes a line, starting a new one first if plain output was left
// in the middle of one.
func (s *screen) println(line string) {
	s.mu.Lock()
	if s.midLine {
		io.WriteString(s.out, "\n")
		s.midLine = false
	}
	s.mu.Unlock()
	s.print(line + "\n")
}

// warn prints a line about the run itself (it failed, it paused): on the
// screen with the rest on a terminal, on stderr otherwise.
func (s *screen) warn(line string) {
	if s.live || s.errOut == nil {
		s.println(line)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	io.WriteString(s.errOut, line+"\n")
}

// setPreview shows the lines being streamed (the answer or reasoning not
// yet printed).
func (s *screen) setPreview(lines []string) { s.set(func() { s.preview = lines }) }

// setTails shows the running commands' last lines.
func (s *screen) setTails(tails [][]string) { s.set(func() { s.tails = tails }) }

// setStatus names what the agent is doing; "" hides the status line. The
// clock restarts when the activity changes.
func (s *screen) setStatus(status string) {
	s.set(func() {
		if status != s.status {
			s.since = time.Now()
		}
		s.status = status
	})
}

// setPrompt shows a prompt's lines in place of the status; nil closes it.
func (s *screen) setPrompt(lines []string) { s.setPromptCursor(lines, 0) }

// setPromptCursor is setPrompt with the cursor back columns left of the
// end of the last line, where a line being edited has it.
func (s *screen) setPromptCursor(lines []string, back int) {
	s.set(func() {
		s.prompt, s.back = lines, back
		if lines == nil {
			s.recall, s.away = nil, false
		}
	})
}

// answered prints the answer to the open prompt's question: after the
// question again when other output pushed it up, so that what scrolls
// away reads question, then answer.
func (s *screen) answered(line string) {
	s.mu.Lock()
	if s.away && s.recall != nil {
		line = strings.Join(s.recall, "\n") + "\n" + line
	}
	s.recall, s.away = nil, false
	s.mu.Unlock()
	s.println(line)
}

// setRecall names the question just printed, which the prompt that
// follows answers (see recall).
func (s *screen) setRecall(lines []string) { s.set(func() { s.recall, s.away = lines, false }) }

// setInput shows the steer line under the status line (nil hides it), the
// cursor back columns left of its end.
func (s *screen) setInput(lines []string, back int) {
	s.set(func() { s.input, s.inputBack = lines, back })
}

func (s *screen) set(change func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	change()
	if s.live {
		s.redrawLocked()
	}
}

func (s *screen) redrawLocked() {
	s.eraseLocked()
	s.drawLocked()
}

// eraseLocked moves to the start of the live region and clears it.
func (s *screen) eraseLocked() {
	if s.drawn == 0 {
		return
	}
	var b strings.Builder
	b.WriteString("\r")
	for range s.drawn - 1 {
		b.WriteString("\x1b[1A")
	}
	b.WriteString("\x1b[J")
	io.WriteString(s.out, b.String())
	s.drawn = 0
}

// drawLocked draws the live region, leaving the cursor at the end of its
// last line (where a prompt's input goes).
func (s *screen) drawLocked() {
	lines := s.liveLinesLocked()
	if len(lines) == 0 || s.paused {
		return
	}
	width := s.width()
	for i, l := range lines {
		lines[i] = termmd.Truncate(l, width-1)
	}
	io.WriteString(s.out, strings.Join(lines, "\n"))
	s.drawn = len(lines)
	back := s.back
	if s.prompt == nil {
		back = s.inputBack
	}
	if (s.prompt != nil || s.input != nil) && back > 0 {
		fmt.Fprintf(s.out, "\x1b[%dD", back)
	}
	s.cursorLocked(s.prompt != nil || s.input != nil)
}

func (s *screen) cursorLocked(show bool) {
	if show == !s.hidden {
		return
	}
	s.hidden = !show
	if show {
		io.WriteString(s.out, "\x1b[?25h")
	} else {
		io.WriteString(s.out, "\x1b[?25l")
	}
}

// liveLinesLocked is what the live region shows, cut to fit the screen:
// the prompt first, then the status, then the newest streamed lines.
func (s *screen) liveLinesLocked() []string {
	var bottom []string
	switch {
	case s.prompt != nil && s.away:
		bottom = append(append([]string(nil), s.recall...), s.prompt...)
	case s.prompt != nil:
		bottom = s.prompt
	case s.status != "":
		bottom = append([]string{s.statusLineLocked()}, s.input...)
	default:
		bottom = s.input
	}
	var top []string
	for _, t := range s.tails {
		top = append(top, t...)
	}
	if s.prompt == nil {
		top = append(top, s.preview...)
	}
	room := s.height() - 1 - len(bottom)
	if room < 0 {
		bottom = bottom[len(bottom)-(s.height()-1):]
		room = 0
	}
	if len(top) > room {
		top = top[len(top)-room:]
	}
	return append(append([]string(nil), top...), bottom...)
}

// statusLineLocked is the spinner, the activity cut to fit, its time and
// how to cancel.
func (s *screen) statusLineLocked() string {
	suffix := " · Ctrl-C to cancel"
	if d := time.Since(s.since); d >= time.Second {
		suffix = " (" + formatDuration(d) + ")" + suffix
	}
	activity := termmd.Truncate(s.status, max(10, s.width()-3-termmd.Width(suffix)))
	return s.style("2", spinnerFrames[s.frame%len(spinnerFrames)]+" "+activity+suffix)
}

func (s *screen) style(code, text string) string {
	if !s.colour || text == "" {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

// formatDuration is d for people: 850ms, 4.2s, 3m05s.
func formatDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
