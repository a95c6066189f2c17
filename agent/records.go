package agent

import (
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/agentd/agentd/tools"
)

// recorder writes the audit log (every write, command and approval decision
// with the rule that decided it) and the trace log (each model call and tool
// call with timings) as JSONL under the state directory. Secrets never reach
// them: answers to secret requests are not recorded and outputs are redacted
// before they get here.
type recorder struct {
	log   *slog.Logger
	mu    sync.Mutex // guards audit, trace
	audit *os.File
	trace *os.File
}

func newRecorder(dir string, log *slog.Logger) *recorder {
	rc := &recorder{log: log}
	open := func(name string) *os.File {
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			log.Warn("opening log", "file", name, "err", err)
			return nil
		}
		return f
	}
	rc.audit, rc.trace = open("audit.jsonl"), open("trace.jsonl")
	return rc
}

func (rc *recorder) write(f *os.File, v any) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if f == nil {
		return
	}
	if err := appendLine(f, v); err != nil {
		rc.log.Warn("writing log", "err", err)
	}
}

func (rc *recorder) close() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, f := range []*os.File{rc.audit, rc.trace} {
		if f != nil {
			f.Close()
		}
	}
	rc.audit, rc.trace = nil, nil
}

// What the audit log records beside the policy's actions and the user's
// decisions.
const (
	auditRejected = "reject"   // the call needed a confirmation the front end cannot show
	auditExecuted = "executed" // the call ran
)

// auditEntry is one line of the audit log.
type auditEntry struct {
	Run  *runRecord
	Call *tools.Call
	// CallID is the model's call as the run knows it (unique in the
	// conversation), RequestID the confirmation a decision answered.
	CallID    string
	RequestID string
	// Decision is a policy action (allow, deny), a user's decision
	// (allow_once, …) or one of the audit words above.
	Decision string
	By       ResolvedBy
	Rule     string
	Reason   string
	Outcome  string
	Duration time.Duration
	// Confine is a command's sandbox profile and network.
	Confine *tools.Confine
}

type auditLine struct {
	Time       time.Time  `json:"time"`
	RunID      string     `json:"runId"`
	SessionID  string     `json:"sessionId"`
	CallID     string     `json:"callId,omitempty"`
	RequestID  string     `json:"requestId,omitempty"`
	Tool       string     `json:"tool,omitempty"`
	Title      string     `json:"title,omitempty"`
	Command    string     `json:"command,omitempty"`
	Cwd        string     `json:"cwd,omitempty"`
	Paths      []string   `json:"paths,omitempty"`
	Decision   string     `json:"decision"`
	By         ResolvedBy `json:"by,omitempty"`
	Rule       string     `json:"rule,omitempty"`
	Reason     string     `json:"reason,omitempty"`
	Outcome    string     `json:"outcome,omitempty"`
	DurationMs int64      `json:"durationMs,omitempty"`
	// Profile and Network: how a command runs (or would have run).
	Profile tools.Profile `json:"profile,omitempty"`
	Network bool          `json:"network,omitempty"`
	Secrets []string      `json:"secrets,omitempty"`
}

// audit records decisions about calls that change something; reads are not
// audited.
func (a *Agent) audit(e auditEntry) {
	if e.Call == nil || (e.Call.Command == nil && len(e.Call.Writes) == 0 && e.Call.Detail == "") {
		return
	}
	l := auditLine{Time: time.Now().UTC(), RunID: e.Run.ID, SessionID: e.Run.SessionID, CallID: e.CallID, RequestID: e.RequestID,
		Tool: e.Call.Tool, Title: e.Call.Title,
		Decision: e.Decision, By: e.By, Rule: e.Rule, Reason: e.Reason, Outcome: e.Outcome, DurationMs: e.Duration.Milliseconds()}
	if e.Call.Command != nil {
		l.Command, l.Cwd, l.Secrets = e.Call.Command.Line, e.Call.Command.Cwd, e.Call.Command.Secrets
	}
	if e.Confine != nil {
		l.Profile, l.Network = e.Confine.Profile, e.Confine.Network
	}
	for _, w := range e.Call.Writes {
		l.Paths = append(l.Paths, w.Path)
	}
	a.rec.write(a.rec.audit, l)
}

type traceLine struct {
	Time       time.Time `json:"time"`
	Kind       string    `json:"kind"`
	RunID      string    `json:"runId"`
	Step       int       `json:"step"`
	Attempt    int       `json:"attempt,omitempty"`
	Messages   int       `json:"messages,omitempty"`
	Tools      int       `json:"tools,omitempty"`
	ToolCalls  []string  `json:"toolCalls,omitempty"`
	TextChars  int       `json:"textChars,omitempty"`
	Tokens     int       `json:"tokens,omitempty"`
	Tool       string    `json:"tool,omitempty"`
	CallID     string    `json:"callId,omitempty"`
	IsError    bool      `json:"isError,omitempty"`
	OutChars   int       `json:"outChars,omitempty"`
	Error      string    `json:"error,omitempty"`
	DurationMs float64   `json:"durationMs"`
}

func (a *Agent) trace(l traceLine) { a.rec.write(a.rec.trace, l) }

func traceModel(rec *runRecord, req ModelRequest, reply ModelReply, err error, attempt int, d time.Duration) traceLine {
	l := traceLine{Time: time.Now().UTC(), Kind: "model", RunID: rec.ID, Step: rec.Step, Attempt: attempt + 1,
		Messages: len(req.Messages), Tools: len(req.Tools), TextChars: len(reply.Text), Tokens: reply.Usage.TotalTokens,
		DurationMs: float64(d.Microseconds()) / 1000}
	for _, c := range reply.ToolCalls {
		l.ToolCalls = append(l.ToolCalls, c.Name)
	}
	if err != nil {
		l.Error = err.Error()
	}
	return l
}

func traceTool(rec *runRecord, c ToolCall, res tools.Result, d time.Duration) traceLine {
	return traceLine{Time: time.Now().UTC(), Kind: "tool", RunID: rec.ID, Step: rec.Step, Tool: c.Name, CallID: c.ID,
		IsError: res.IsError, OutChars: len(res.Output), DurationMs: float64(d.Microseconds()) / 1000}
}
