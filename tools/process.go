package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// ProcessToolName manages background processes.
const ProcessToolName = "process"

//go:embed process.md
var processDescription string

// ProcessParams are the process tool's arguments.
type ProcessParams struct {
	Action  string `json:"action" enum:"list,read,wait,stop" jsonschema:"list, read, wait or stop."`
	ID      string `json:"id,omitempty" jsonschema:"The background process (p1, p2 …), for read, wait and stop."`
	Pattern string `json:"pattern,omitempty" jsonschema:"wait: a regular expression a new line of output must match."`
	Timeout int    `json:"timeout,omitempty" min:"1" max:"600" jsonschema:"wait: seconds to wait at most; default 30."`
}

var processSchema = SchemaOf(ProcessParams{})

const defaultProcessWait = 30 * time.Second

type processTool struct{}

func (processTool) Info() Info {
	return Info{Name: ProcessToolName, Description: processDescription, Parameters: processSchema,
		Kind: KindExecute, Effect: EffectRead, Timeout: 11 * time.Minute}
}

// Prepare checks the arguments. The process tool only looks at and stops
// what the session's approved commands started: its effect is read.
func (processTool) Prepare(ctx context.Context, env *Env, args json.RawMessage) (*Call, *Result) {
	var p ProcessParams
	if r := decodeArgs(args, &p); r != nil {
		return nil, r
	}
	if env.Background == nil {
		return nil, Errorf("background processes are not available here")
	}
	if p.Action != "list" && p.ID == "" {
		return nil, Errorf("%s needs the id of a background process (list shows them)", p.Action)
	}
	var re *regexp.Regexp
	if p.Pattern != "" {
		var err error
		if re, err = regexp.Compile(p.Pattern); err != nil {
			return nil, Errorf("pattern: %v (RE2 syntax)", err)
		}
	}
	title := "processes"
	if p.ID != "" {
		title = p.Action + " " + p.ID
	}
	return &Call{Title: title, Run: func(ctx context.Context) (Result, error) {
		return runProcessAction(ctx, env, p, re), nil
	}}, nil
}

func runProcessAction(ctx context.Context, env *Env, p ProcessParams, re *regexp.Regexp) Result {
	b := env.Background
	limit := env.outputLimit() - 512
	switch p.Action {
	case "list":
		return listProcesses(b.List(env.SessionID))
	case "stop":
		info, err := b.Stop(env.SessionID, p.ID, ByModel)
		if err != nil {
			return *Errorf("%v", err)
		}
		return Result{Output: fmt.Sprintf("%s: %s", info.ID, describeProcess(info))}
	case "read":
		info, text, skipped, err := b.Read(env.SessionID, p.ID, limit)
		if err != nil {
			return *Errorf("%v", err)
		}
		return processOutput(env, info, text, skipped, "")
	}
	timeout := defaultProcessWait
	if p.Timeout > 0 {
		timeout = time.Duration(p.Timeout) * time.Second
	}
	info, text, skipped, matched, err := b.Wait(ctx, env.SessionID, p.ID, re, timeout, limit)
	if err != nil {
		return *Errorf("%v", err)
	}
	var how string
	switch {
	case matched == MatchedNew:
		how = fmt.Sprintf("a line matched %q", p.Pattern)
	case matched == MatchedShown:
		how = fmt.Sprintf("a line already shown matched %q", p.Pattern)
	case info.State != ProcRunning:
		how = "it ended"
	case re != nil:
		how = fmt.Sprintf("no line matched %q within %s", p.Pattern, timeout)
	default:
		how = fmt.Sprintf("still running after %s", timeout)
	}
	return processOutput(env, info, text, skipped, how)
}

// processOutput shows new output with the process's state.
func processOutput(env *Env, info ProcessInfo, text string, skipped int64, how string) Result {
	var b strings.Builder
	head := fmt.Sprintf("[%s: %s", info.ID, describeProcess(info))
	if how != "" {
		head += "; " + how
	}
	b.WriteString(head + "]\n")
	if skipped > 0 {
		fmt.Fprintf(&b, "[%d earlier bytes of new output not shown; wait with a pattern, or have the command write to a file and grep it]\n", skipped)
	}
	text = cleanTerminal(text)
	if env.Redactor != nil {
		text = env.Redactor.Redact(text)
	}
	if strings.TrimSpace(text) == "" {
		b.WriteString("(no new output)")
	} else {
		b.WriteString(strings.TrimRight(text, "\n"))
	}
	return Result{Output: b.String()}
}

func listProcesses(infos []ProcessInfo) Result {
	if len(infos) == 0 {
		return Result{Output: "No background processes in this session."}
	}
	var b strings.Builder
	for _, in := range infos {
		fmt.Fprintf(&b, "%s: `%s` (in %s) %s\n", in.ID, in.Command, in.Cwd, describeProcess(in))
	}
	return Result{Output: strings.TrimRight(b.String(), "\n")}
}

// describeProcess says in a few words how a process stands.
func describeProcess(in ProcessInfo) string {
	var s string
	switch in.State {
	case ProcRunning:
		s = "running for " + time.Since(in.StartedAt).Round(time.Second).String()
	case ProcExited:
		s = fmt.Sprintf("exited with code %d", *in.ExitCode)
	case ProcStopped:
		s = map[string]string{ByModel: "stopped", ByUser: "stopped by the user", ByAgentd: "stopped when agentd stopped"}[in.StoppedBy]
	case ProcLost:
		s = "ended when agentd restarted"
	}
	return fmt.Sprintf("%s, %s printed", s, sizeOf(int(in.Output)))
}
