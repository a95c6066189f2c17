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
	"unicode/utf8"
)

// RunCmdToolName runs a shell command.
const RunCmdToolName = "run_cmd"

//go:embed run_cmd.md
var runCmdDescription string

// RunCmdParams are run_cmd's arguments. Timeout is in seconds.
type RunCmdParams struct {
	Command     string `json:"command" min:"1" jsonschema:"Shell command line, run with bash -c."`
	Cwd         string `json:"cwd,omitempty" jsonschema:"Working directory relative to the workspace root; default the root."`
	Timeout     int    `json:"timeout,omitempty" min:"1" max:"600" jsonschema:"Seconds before the command is killed; default 120, maximum 600."`
	Interactive bool   `json:"interactive,omitempty" jsonschema:"Run in a terminal and put its prompts (y/n, menus, passwords) to the user. Only for commands that cannot be made non-interactive with flags."`
	Network     bool   `json:"network,omitempty" jsonschema:"The command needs the network (downloads, fetches, API calls). Commands run without it unless this is set or the program is a known network one; the user is asked."`
	Background  bool   `json:"background,omitempty" jsonschema:"Start the command and return at once with its id (a dev server, a watcher, a long build); read its output, wait for it and stop it with the process tool."`
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
		return nil, Errorf("command is blank: give the command line to run")
	}
	if p.Background && (p.Interactive || env.Background == nil) {
		if p.Interactive {
			return nil, Errorf("a background command cannot be interactive: no one could answer its prompts")
		}
		return nil, Errorf("background commands are not available here; run it in the foreground with a timeout")
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
		timeout = time.Duration(p.Timeout) * time.Second // at most maxCmdTimeout: the schema's max
	}
	c := &Command{Line: p.Command, Cwd: rel, Interactive: p.Interactive, Network: p.Network,
		Secrets: secretsUsed(p.Command, env.Secrets)}
	return &Call{
		Title: p.Command, Command: c,
		Locations: []Location{{Path: rel}},
		Run: func(ctx context.Context) (Result, error) {
			if p.Background {
				return startBackground(ctx, env, c, dir), nil
			}
			cp := beginCommandCheckpoint(ctx, env, p.Command) // undo_cmd.go
			var res Result
			if p.Interactive {
				res = runPTY(ctx, env, c, dir, timeout)
			} else {
				res = runPlain(ctx, env, c, dir, timeout)
			}
			return cp.end(ctx, res), nil
		},
	}, nil
}

// shellArgv is the process a command line runs as: bash (which models
// write for) with pipefail, so `go test ./... 2>&1 | tail -80` fails when
// the tests fail, not when tail does; sh when there is no bash. Every
// command is spawned from this one argv.
func shellArgv(line string) []string {
	if p, err := exec.LookPath("bash"); err == nil {
		return []string{p, "-o", "pipefail", "-c", line}
	}
	return []string{"/bin/sh", "-c", line}
}

// cmdOutcome is how a command ended, for the line the model reads last.
type cmdOutcome struct {
	exitCode *int
	elapsed  time.Duration
	stopped  string // why the command was killed: "timed out after …", "cancelled", a prompt message
}

// finish caps the output for the model and appends the outcome line.
func finish(env *Env, out string, o cmdOutcome) Result {
	out = cleanTerminal(out)
	capped, cut := capCommand(env, out)
	if binaryOutput(out) {
		// Bytes that are not text reach the model as replacement
		// characters: noise that costs tokens and says nothing.
		capped, cut = fmt.Sprintf("[binary output (%s) not shown: send it to a file, or look at it with file, xxd | head or a tool that reads the format]", sizeOf(len(out))), true
	}
	var tail string
	dur := o.elapsed.Round(10 * time.Millisecond)
	switch {
	case strings.HasPrefix(o.stopped, "timed out"):
		tail = fmt.Sprintf("[%s (ran %s); the process group was killed. For a longer run set timeout (at most %d seconds), or run less at once]", o.stopped, dur, int(maxCmdTimeout.Seconds()))
	case o.stopped != "":
		tail = fmt.Sprintf("[%s (ran %s); the process group was killed]", o.stopped, dur)
	case o.exitCode != nil && *o.exitCode == 141:
		tail = fmt.Sprintf("[exit code 141 (SIGPIPE: a stage of the pipeline wrote after its reader, such as head, had stopped), %s]", dur)
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

// binaryOutput says whether a command printed bytes rather than text: a NUL,
// or more than one byte in eight of its start not valid UTF-8.
func binaryOutput(s string) bool {
	head := s[:min(len(s), 8000)]
	if strings.IndexByte(head, 0) >= 0 {
		return true
	}
	bad := 0
	for i := 0; i < len(head); {
		r, n := utf8.DecodeRuneInString(head[i:])
		if r == utf8.RuneError && n == 1 && len(head)-i >= utf8.UTFMax {
			bad++
		}
		i += n
	}
	return bad*8 > len(head)
}

// capCommand fits a command's output in what the model reads: the start
// and the end, whole lines, and from the omitted middle the lines that look
// like failures, with the line range left out and a narrower command. The
// line numbers count stdout and stderr together, as the model reads them,
// so the commands it is given to see more pipe both (2>&1).
func capCommand(env *Env, out string) (string, bool) {
	limit := min(maxOutputBytes, env.outputLimit())
	return cutLines(out, cutOptions{maxBytes: limit, maxLines: min(maxOutputLines, limit/40), failures: true,
		more: func(from, to int, kept []int) string {
			if len(kept) > 0 { // the lines around the first failure
				first, last := max(from, kept[0]-20), min(to, kept[0]+20)
				return fmt.Sprintf("To see the lines around the first, run the command again with 2>&1 | sed -n '%d,%dp' appended; or run less at once (one package or one test).", first+1, last)
			}
			return fmt.Sprintf("To see them, run the command again with 2>&1 | sed -n '%d,%dp' appended (up to 100 lines at a time; or grep -n PATTERN, or tail -n 100, in place of sed); or run less at once (one package or one test).",
				from+1, min(to, from+100))
		}})
}
