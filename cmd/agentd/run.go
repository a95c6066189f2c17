package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/rpc/term"
	"github.com/agentd/agentd/tools"
)

// Exit codes of agentd's commands (`agentd run`'s, which the others share).
const (
	exitCompleted = term.ExitCompleted
	exitFailed    = term.ExitFailed
	exitUsage     = term.ExitUsage
	exitCancelled = term.ExitCancelled
)

const runAbout = `The agent in a terminal, on the workspace (--dir, default the current directory): it streams the
answer, shows each tool call with its result, and asks before the writes and commands the policy does not
allow, showing the diff or the command line. A prompt "/name args" runs a custom command (docs/extensions.md);
agentd run /help lists them.

On a terminal, a status line says what the agent is doing (thinking, running a command, waiting for you)
and for how long; a running command's last lines show under it, and its whole output if it fails; the
answer is laid out for the terminal's width (headings, lists, tables, code in colour). NO_COLOR turns the
colours off.

Prompts take only keys typed after they appear: anything typed before is discarded. A permission prompt
takes y (yes, once), s (for this session), a (always: saves a rule), n (no), t (no, and tell the agent
what to do instead) or x (never: saves a rule, after a second y), in either case, or the arrows and
Enter; a key that is none of these asks again. Ctrl-D answers no (at a question: skips it). Ctrl-C
cancels the run and exits at once, at a prompt or not.

Without a terminal (stdin or stdout not one) the output is plain text and nothing is asked: questions go
unanswered and the writes or commands the policy does not allow are rejected. --json prints the run's
notifications instead, one JSON object a line ({"seq","kind","params"}, the params as the native
protocol's agent/update, agent/inputRequest, agent/inputResolved and agent/runState, docs/protocol.md),
and asks nothing either.

The model can use search_semantic: its first search starts the workspace index the editors use (brought
up to date, then watched) and waits for it, at most 10 s; the index stops when the run ends.

--session ID continues a session (agentd sessions lists them), showing its latest runs first in short form.
An answer that cannot be saved (the state directory takes no writes) is asked again; a run whose state
cannot be saved stops, paused, and agentd run exits 1 saying so (an editor can resume it later).

Exit status: 0 completed, 1 failed or paused, 2 usage error or no model configured, 130 cancelled.`

// runTerminal is `agentd run`: its flags, the configuration and the
// one-shot index; the terminal front end (rpc/term) does the rest.
func runTerminal(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newCommand("run", `agentd run [flags] "prompt"`, runAbout)
	var (
		policy    = fs.String("policy", "", "approval mode: read-only, plan, ask, auto-edit or full-auto (default: the approvalPolicy setting)")
		session   = fs.String("session", "", "continue this session (agentd sessions lists them): its latest runs are shown first, in short form, and the model reads its conversation so far")
		dir       = fs.String("dir", ".", "the workspace")
		stateDir  = fs.String("state-dir", "", "base directory for state and index (default: $AGENTD_STATE_DIR, else ~/.local/state and ~/.cache)")
		logFile   = fs.String("log-file", "", "log to this file instead of stderr")
		logLevel  = fs.String("log-level", "error", "debug, info, warn or error")
		noIndex   = fs.Bool("no-index", false, "do not index the workspace (search_semantic then tells the model to use grep)")
		asJSON    = fs.Bool("json", false, "print the run's notifications as JSON lines on stdout, for scripts; asks nothing")
		reasoning = fs.Bool("reasoning", false, "show the model's reasoning whole, dimmed, instead of one line per thought")
		pictures  fileList
	)
	fs.Var(&pictures, "image", "attach this picture (PNG, JPEG, GIF or WebP) to the prompt; repeat for several")
	pos, code := fs.parse(args, stdout, stderr)
	if code >= 0 {
		return code
	}
	prompt := strings.TrimSpace(strings.Join(pos, " "))
	switch {
	case prompt == "" && len(pictures) == 0:
		return fs.fail(stderr, errors.New(`give a prompt, e.g. agentd run "explain what this repository does"`))
	case *policy != "" && !slices.Contains(agent.Modes, tools.Mode(*policy)):
		return fs.fail(stderr, fmt.Errorf("--policy %q: use one of %s", *policy, agent.ModeList()))
	}
	imgs, err := readPictures(pictures)
	if err != nil {
		return fs.fail(stderr, err)
	}
	if *stateDir != "" {
		os.Setenv("AGENTD_STATE_DIR", *stateDir)
	}
	logs := term.NewLogSink(stderr)
	log, closeLog, err := newLogger(*logFile, *logLevel, logs)
	if err != nil {
		fmt.Fprintln(stderr, "agentd:", err)
		return exitUsage
	}
	defer closeLog()
	cfg, warnings, err := loadConfig()
	if err != nil {
		fmt.Fprintln(stderr, "agentd:", err)
		return exitUsage
	}
	for _, w := range warnings {
		fmt.Fprintln(stderr, "agentd: warning:", w)
	}
	root, err := filepath.Abs(*dir)
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		fmt.Fprintln(stderr, "agentd: workspace:", err)
		return exitUsage
	}
	if prompt == "/help" {
		// Answered here, without a model: the prompts agentd run knows.
		term.PrintCommandHelp(stdout, agent.LoadCommands(root, cfg.UserConfigDir))
		return exitCompleted
	}
	if err := cfg.CheckModel(); err != nil {
		fmt.Fprintln(stderr, "agentd:", err)
		return exitUsage
	}
	state, cache, err := stateDirs(root)
	if err != nil {
		fmt.Fprintln(stderr, "agentd:", err)
		return exitUsage
	}
	cfg.Root, cfg.StateDir, cfg.Logger = root, state, log
	if !*noIndex {
		idx := newOneShotIndex(cfg, cache)
		defer idx.close()
		cfg.Searcher = idx
	}
	return term.Run(ctx, term.Options{
		Config: cfg,
		Params: agent.RunParams{Prompt: prompt, SessionID: *session, ApprovalPolicy: tools.Mode(*policy), Images: imgs},
		JSON:   *asJSON, Reasoning: *reasoning,
		Stdin: stdin, Stdout: stdout, Stderr: stderr, Logs: logs,
	})
}

// fileList is a flag given once per file.
type fileList []string

func (f *fileList) String() string { return strings.Join(*f, ",") }

func (f *fileList) Set(v string) error {
	*f = append(*f, v)
	return nil
}

// readPictures reads the files given with --image: the user named them,
// so they may lie outside the workspace; the agent checks what they are.
func readPictures(paths []string) ([]agent.ImageInput, error) {
	var out []agent.ImageInput
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("--image: %w", err)
		}
		out = append(out, agent.ImageInput{Data: base64.StdEncoding.EncodeToString(data), Name: filepath.Base(p)})
	}
	return out, nil
}
