package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// RunCmdToolName runs a shell command.
const RunCmdToolName = "run_cmd"

//go:embed run_cmd.md
var runCmdDescription string

// RunCmdParams are run_cmd's arguments. Timeout is in seconds.
type RunCmdParams struct {
	Command     string `json:"command" jsonschema:"Shell command line, run with bash -c."`
	Cwd         string `json:"cwd,omitempty" jsonschema:"Working directory relative to the workspace root; default the root."`
	Timeout     int    `json:"timeout,omitempty" min:"1" max:"600" jsonschema:"Seconds before the command is killed; default 120, maximum 600."`
	Interactive bool   `json:"interactive,omitempty" jsonschema:"Run in a terminal and put its prompts (y/n, menus, passwords) to the user. Only for commands that cannot be made non-interactive with flags."`
	Network     bool   `json:"network,omitempty" jsonschema:"The command needs the network (downloads, fetches, API calls). Commands run without it unless this is set or the program is a known network one; the user is asked."`
}

var runCmdSchema = SchemaOf(RunCmdParams{})

const (
	defaultCmdTimeout = 2 * time.Minute
	maxCmdTimeout     = 10 * time.Minute
)

type runCmdTool struct{}

func (runCmdTool) Info() Info {
	return Info{Name: RunCmdToolName, Description: runCmdDescription,
		Parameters: runCmdSchema, Kind: KindExecute, Effect: EffectExecute, Timeout: maxCmdTimeout}
}

func (runCmdTool) Prepare(ctx context.Context, env *Env, args json.RawMessage) (*Call, *Result) {
	var p RunCmdParams
	if r := decodeArgs(args, &p); r != nil {
		return nil, r
	}
	if strings.TrimSpace(p.Command) == "" {
		return nil, Errorf("command is required")
	}
	dir, rel, r := confine(env, p.Cwd)
	if r != nil {
		return nil, r
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, Errorf("cwd %s is not a directory", rel)
	}
	timeout := defaultCmdTimeout
	if p.Timeout > 0 {
		timeout = min(time.Duration(p.Timeout)*time.Second, maxCmdTimeout)
	}
	c := &Command{Line: p.Command, Cwd: rel, Interactive: p.Interactive, Network: p.Network,
		Secrets: secretsUsed(p.Command, env.Secrets)}
	return &Call{
		Title: p.Command, Command: c,
		Locations: []Location{{Path: rel}},
		Run: func(ctx context.Context) (Result, error) {
			if p.Interactive {
				return runPTY(ctx, env, c, dir, timeout), nil
			}
			return runPlain(ctx, env, c, dir, timeout), nil
		},
	}, nil
}

// shellPath prefers bash, which models write for, and falls back to sh.
func shellPath() string {
	if p, err := exec.LookPath("bash"); err == nil {
		return p
	}
	return "/bin/sh"
}

// cmdOutcome is how a command ended, for the line the model reads last.
type cmdOutcome struct {
	exitCode *int
	elapsed  time.Duration
	stopped  string // why the command was killed: "timed out after …", "cancelled", a prompt message
}

// finish caps the output and appends the outcome line.
func finish(out string, o cmdOutcome) Result {
	out = cleanTerminal(out)
	capped, cut := capOutput(out)
	var tail string
	dur := o.elapsed.Round(10 * time.Millisecond)
	switch {
	case o.stopped != "":
		tail = fmt.Sprintf("[%s after %s; the process group was killed]", o.stopped, dur)
	case o.exitCode != nil:
		tail = fmt.Sprintf("[exit code %d, %s]", *o.exitCode, dur)
	default:
		tail = fmt.Sprintf("[ended without an exit code, %s]", dur)
	}
	if capped != "" && !strings.HasSuffix(capped, "\n") {
		capped += "\n"
	}
	res := Result{
		Output: capped + tail, Truncated: cut, ExitCode: o.exitCode,
		IsError: o.stopped != "" || o.exitCode == nil || *o.exitCode != 0,
	}
	if cut {
		res.Full = out + "\n" + tail
	}
	return res
}
