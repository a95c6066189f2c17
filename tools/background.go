package tools

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// Background processes: a dev server, a watcher, a long build the model
// starts with run_cmd's background and then reads, waits on and stops with
// the process tool. Each runs in its session's sandbox and network
// namespace (a server it starts on 127.0.0.1 is reachable from the
// session's later commands, and from nothing else), under the approval its
// command line got like any command. They end when stopped, when their
// session is deleted, and with the daemon (the sandbox's init dies with
// it, and its namespace with it; Reap takes care of the rest after a
// crash).

// ProcessInfo is one background process, as the model and the editors see
// it.
type ProcessInfo struct {
	ID        string `json:"id"`
	SessionID string `json:"sessionId"`
	Command   string `json:"command"`
	Cwd       string `json:"cwd"`
	// State is ProcRunning, ProcExited (on its own: ExitCode says how),
	// ProcStopped (by the model or the user) or ProcLost (it ended with an
	// earlier daemon).
	State string `json:"state"`
	// StoppedBy says who stopped it: "model", "user" or "agentd".
	StoppedBy string     `json:"stoppedBy,omitempty"`
	ExitCode  *int       `json:"exitCode,omitempty"`
	StartedAt time.Time  `json:"startedAt"`
	EndedAt   *time.Time `json:"endedAt,omitempty"`
	// Output is how many bytes it printed in all.
	Output int64 `json:"output"`
	// ToolCallID is the run_cmd call that started it.
	ToolCallID string `json:"toolCallId,omitempty"`
	// Proc names the process for Reap after a crash (not on the wire).
	Proc *ProcID `json:"-"`
}

// Background process states.
const (
	ProcRunning = "running"
	ProcExited  = "exited"
	ProcStopped = "stopped"
	ProcLost    = "lost"
)

// Bounds of background processes.
const (
	maxBackgroundPerSession = 8
	backgroundKeep          = 1 << 20 // bytes of output kept per process: the latest
)

// Background is the daemon's table of background processes.
type Background struct {
	ctx    context.Context // outlives every call: cancelled by Close, which kills them all
	cancel context.CancelFunc

	mu     sync.Mutex // guards procs, next
	procs  map[string]*bgProc
	next   map[string]int // session → the last number given
	notify func(ProcessInfo)
}

// bgProc is one process and what it printed.
type bgProc struct {
	info ProcessInfo
	p    *Proc
	out  *ring
	// read is where the model's next read starts (an offset in out);
	// shown is what the last read gave the model, which a wait's pattern
	// also looks at (a server's "ready" line already shown by run_cmd).
	read  int64
	shown string
	done  chan struct{}
	// change is closed and replaced whenever output comes or the process
	// ends, for the process tool's waits.
	change chan struct{}
}

// NewBackground returns an empty table; notify (may be nil) hears every
// change of a process's state.
func NewBackground(notify func(ProcessInfo)) *Background {
	ctx, cancel := context.WithCancel(context.Background())
	return &Background{ctx: ctx, cancel: cancel, procs: map[string]*bgProc{}, next: map[string]int{}, notify: notify}
}

// Restore puts back the processes an earlier daemon left in its record:
// they died with it (or are reaped now) and are listed as lost.
func (b *Background) Restore(infos []ProcessInfo) []ProcessInfo {
	b.mu.Lock()
	defer b.mu.Unlock()
	var lost []ProcessInfo
	for _, in := range infos {
		if in.State == ProcRunning {
			if in.Proc != nil {
				Reap(*in.Proc)
			}
			in.State = ProcLost
			now := time.Now().UTC()
			in.EndedAt = &now
			lost = append(lost, in)
		}
		bp := &bgProc{info: in, out: newRing(0), done: make(chan struct{}), change: make(chan struct{})}
		close(bp.done)
		b.procs[key(in.SessionID, in.ID)] = bp
		var n int
		if _, err := fmt.Sscanf(in.ID, "p%d", &n); err == nil && n > b.next[in.SessionID] {
			b.next[in.SessionID] = n
		}
	}
	return lost
}

func key(session, id string) string { return session + "/" + id }

// Start starts cmd in the background in env's session and returns at once.
func (b *Background) Start(env *Env, cmd *Command, dir, toolCallID string) (ProcessInfo, error) {
	b.mu.Lock()
	running := 0
	for _, bp := range b.procs {
		if bp.info.SessionID == env.SessionID && bp.info.State == ProcRunning {
			running++
		}
	}
	if running >= maxBackgroundPerSession {
		b.mu.Unlock()
		return ProcessInfo{}, fmt.Errorf("%d background processes already run in this session; stop one first (process action stop)", running)
	}
	b.next[env.SessionID]++
	id := fmt.Sprintf("p%d", b.next[env.SessionID])
	b.mu.Unlock()

	bp := &bgProc{out: newRing(backgroundKeep), done: make(chan struct{}), change: make(chan struct{}),
		info: ProcessInfo{ID: id, SessionID: env.SessionID, Command: cmd.Line, Cwd: cmd.Cwd, State: ProcRunning,
			StartedAt: time.Now().UTC(), ToolCallID: toolCallID}}
	w := &bgWriter{b: b, bp: bp}
	spec := commandSpec(env, cmd, dir, w, w, nil)
	spec.Started = func(pid ProcID) { bp.info.Proc = &pid }
	p, err := env.sandbox().Command(b.ctx, spec)
	if err != nil {
		return ProcessInfo{}, err
	}
	bp.p = p
	b.mu.Lock()
	b.procs[key(env.SessionID, id)] = bp
	info := bp.info
	b.mu.Unlock()
	b.tell(info)
	go b.wait(bp)
	return info, nil
}

// wait records the process's end.
func (b *Background) wait(bp *bgProc) {
	_ = bp.p.Wait()
	code := bp.p.ExitCode()
	now := time.Now().UTC()
	b.mu.Lock()
	if bp.info.State == ProcRunning {
		bp.info.State = ProcExited
	}
	bp.info.ExitCode, bp.info.EndedAt = &code, &now
	info := bp.info
	b.changedLocked(bp)
	b.mu.Unlock()
	close(bp.done)
	b.tell(info)
}

func (b *Background) tell(info ProcessInfo) {
	if b.notify != nil {
		b.notify(info)
	}
}

// changedLocked wakes the waits on bp. b.mu is held.
func (b *Background) changedLocked(bp *bgProc) {
	close(bp.change)
	bp.change = make(chan struct{})
}

// bgWriter takes a process's output.
type bgWriter struct {
	b  *Background
	bp *bgProc
}

func (w *bgWriter) Write(p []byte) (int, error) {
	w.b.mu.Lock()
	defer w.b.mu.Unlock()
	w.bp.out.write(p)
	w.bp.info.Output = w.bp.out.total
	w.b.changedLocked(w.bp)
	return len(p), nil
}

// List returns a session's processes, oldest first.
func (b *Background) List(session string) []ProcessInfo {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []ProcessInfo
	for _, bp := range b.procs {
		if bp.info.SessionID == session {
			out = append(out, bp.info)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].StartedAt.Before(out[j].StartedAt) })
	return out
}

// All returns every process the daemon knows, for its record.
func (b *Background) All() []ProcessInfo {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]ProcessInfo, 0, len(b.procs))
	for _, bp := range b.procs {
		out = append(out, bp.info)
	}
	return out
}

func (b *Background) get(session, id string) (*bgProc, error) {
	bp, ok := b.procs[key(session, id)]
	if !ok {
		return nil, fmt.Errorf("no background process %q in this session", id)
	}
	return bp, nil
}

// ErrNoProcess is a process id the session does not have.
var ErrNoProcess = errors.New("no such background process")

// Who stops a process.
const (
	ByModel  = "model"
	ByUser   = "user"
	ByAgentd = "agentd"
)

// Stop kills a process and everything it started; by says who asked.
func (b *Background) Stop(session, id, by string) (ProcessInfo, error) {
	b.mu.Lock()
	bp, err := b.get(session, id)
	if err != nil {
		b.mu.Unlock()
		return ProcessInfo{}, fmt.Errorf("%w: %v", ErrNoProcess, err)
	}
	if bp.info.State != ProcRunning || bp.p == nil {
		info := bp.info
		b.mu.Unlock()
		return info, nil
	}
	bp.info.State, bp.info.StoppedBy = ProcStopped, by
	b.mu.Unlock()
	_ = bp.p.Kill()
	<-bp.done
	b.mu.Lock()
	defer b.mu.Unlock()
	return bp.info, nil
}

// EndSession stops a session's processes and forgets them.
func (b *Background) EndSession(session string) {
	for _, in := range b.List(session) {
		_, _ = b.Stop(session, in.ID, ByAgentd)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for k, bp := range b.procs {
		if bp.info.SessionID == session {
			delete(b.procs, k)
		}
	}
}

// Close kills every process.
func (b *Background) Close() {
	b.mu.Lock()
	var running []*bgProc
	for _, bp := range b.procs {
		if bp.info.State == ProcRunning && bp.p != nil {
			bp.info.State, bp.info.StoppedBy = ProcStopped, ByAgentd
			running = append(running, bp)
		}
	}
	b.mu.Unlock()
	b.cancel()
	for _, bp := range running {
		<-bp.done
	}
}

// readNew returns the output printed since the model's last read, at most
// limit bytes of it (the latest), and how many bytes before those are not
// shown; it moves the read mark to the end.
func (b *Background) readNew(bp *bgProc, limit int) (string, int64) {
	text, skipped := bp.out.since(bp.read)
	bp.read = bp.out.total
	if text != "" {
		bp.shown = text[max(0, len(text)-limit):]
	}
	if len(text) > limit {
		cut := len(text) - limit
		if nl := strings.IndexByte(text[cut:], '\n'); nl >= 0 && nl < limit/2 {
			cut += nl + 1
		}
		skipped += int64(cut)
		text = text[cut:]
	}
	return text, skipped
}

// Wait waits until a line printed after the model's last read matches
// pattern (nil: until the process ends), the process ends, or timeout
// passes. A pattern the last read already showed (the "ready" line in
// run_cmd's result) answers at once. It returns the new output as readNew
// does, and whether the pattern matched: MatchedNew, MatchedShown or "".
// Each line is matched once, when it is complete (or the process ended),
// so a chatty process costs the wait its output's length, not its square.
func (b *Background) Wait(ctx context.Context, session, id string, pattern *regexp.Regexp, timeout time.Duration, limit int) (ProcessInfo, string, int64, string, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	checked := int64(-1) // output before this offset was matched already
	for {
		b.mu.Lock()
		bp, err := b.get(session, id)
		if err != nil {
			b.mu.Unlock()
			return ProcessInfo{}, "", 0, "", err
		}
		ended := bp.info.State != ProcRunning
		var matched string
		if pattern != nil {
			if checked < 0 {
				checked = bp.read
				if matchLines(pattern, bp.shown) {
					matched = MatchedShown
				}
			}
			var hit bool
			hit, checked = bp.out.matchSince(pattern, checked, ended)
			if hit {
				matched = MatchedNew
			}
		}
		if matched != "" || ended {
			text, skipped := b.readNew(bp, limit)
			info := bp.info
			b.mu.Unlock()
			return info, text, skipped, matched, nil
		}
		change := bp.change
		b.mu.Unlock()
		select {
		case <-change:
		case <-deadline.C:
			b.mu.Lock()
			text, skipped := b.readNew(bp, limit)
			info := bp.info
			b.mu.Unlock()
			return info, text, skipped, "", nil
		case <-ctx.Done():
			return ProcessInfo{}, "", 0, "", ctx.Err()
		}
	}
}

// matchLines reports whether one of text's lines matches re.
func matchLines(re *regexp.Regexp, text string) bool {
	for line := range strings.Lines(text) {
		if re.MatchString(strings.TrimSuffix(line, "\n")) {
			return true
		}
	}
	return false
}

// How a wait's pattern matched.
const (
	MatchedNew   = "new"   // in output the model had not seen
	MatchedShown = "shown" // in what the last read showed
)

// Read returns the output printed since the model's last read.
func (b *Background) Read(session, id string, limit int) (ProcessInfo, string, int64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	bp, err := b.get(session, id)
	if err != nil {
		return ProcessInfo{}, "", 0, err
	}
	text, skipped := b.readNew(bp, limit)
	return bp.info, text, skipped, nil
}

// ring keeps the latest bytes of a stream, and how many came in all.
type ring struct {
	buf   []byte
	keep  int
	total int64 // bytes written in all; buf holds the last len(buf) of them
}

func newRing(keep int) *ring { return &ring{keep: keep} }

// write keeps at least the last keep bytes; it trims only once twice that
// piled up, so a chatty process costs a copy per keep bytes, not per write.
func (r *ring) write(p []byte) {
	r.total += int64(len(p))
	r.buf = append(r.buf, p...)
	if over := len(r.buf) - r.keep; over > r.keep {
		r.buf = append(r.buf[:0:0], r.buf[over:]...)
	}
}

// since returns what came after offset from, and how many bytes of it are
// no longer kept.
func (r *ring) since(from int64) (string, int64) {
	start := r.total - int64(len(r.buf))
	var lost int64
	if from < start {
		lost, from = start-from, start
	}
	return string(r.buf[from-start:]), lost
}

// matchSince matches re against the complete lines written from offset
// from on (the last, unfinished one too when final), and returns whether
// one matched and the offset up to which it looked.
func (r *ring) matchSince(re *regexp.Regexp, from int64, final bool) (bool, int64) {
	text, lost := r.since(from)
	from += lost
	end := strings.LastIndexByte(text, '\n') + 1
	if final {
		end = len(text)
	}
	return matchLines(re, text[:end]), from + int64(end)
}

// startGrace is how long run_cmd's background waits for a process's first
// words: one that fails at once (a typo, a port taken) is reported then.
const startGrace = time.Second

// startBackground starts a command in the background and reports what it
// printed in its first moment, or how it ended if it ended at once.
func startBackground(ctx context.Context, env *Env, cmd *Command, dir string) Result {
	info, err := env.Background.Start(env, cmd, dir, env.ToolCallID)
	if err != nil {
		if errors.Is(err, ErrNotConfined) || strings.Contains(err.Error(), "sandbox") {
			return notStarted(cmd, err)
		}
		return *Errorf("not started: %v", err)
	}
	info, text, skipped, _, err := env.Background.Wait(ctx, env.SessionID, info.ID, nil, startGrace, env.outputLimit()-512)
	if err != nil {
		return *Errorf("%v", err)
	}
	how := "started in the background; read its output, wait for a line or stop it with the process tool (id " + info.ID + ")"
	res := processOutput(env, info, text, skipped, how)
	// The editor shows the process on its own line (agent/processChanged):
	// its call shows what the process printed, not the line for the model.
	_, res.Full, _ = strings.Cut(res.Output, "\n")
	if res.Full == "" {
		res.Full = "(no output yet)"
	}
	if info.State != ProcRunning {
		res.IsError = info.ExitCode == nil || *info.ExitCode != 0
		res.ExitCode = info.ExitCode
	}
	return res
}
