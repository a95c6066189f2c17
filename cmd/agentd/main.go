// Command agentd is a coding agent that lives in the editor. `agentd serve`
// is what an editor launches (JSON-RPC over stdio); `agentd run` is the same
// agent in a terminal; `agentd index` and `agentd search` query the workspace
// index without a model.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

const usage = `agentd — a coding agent for your editor and your terminal

Usage:
  agentd run      [flags] "prompt"          the agent in a terminal (agentd run --help for its flags and keys)
  agentd sessions [flags]                   the workspace's sessions, newest first
  agentd undo     [flags] [cN]              undo the agent's changes, commands' included; rewind a session
  agentd serve    [flags]                   speak JSON-RPC on stdio (what editors launch)
  agentd acp      [flags]                   speak the Agent Client Protocol on stdio (Zed, JetBrains, …)
  agentd index    [flags] [dir]             build the workspace index
  agentd search   [flags] "query" [dir]     search the workspace index
  agentd mcp      [flags] [dir]             an MCP server on stdio offering the index (search, outline)
  agentd config                             the settings in effect and where they come from
  agentd search-eval [flags] SET.jsonl...   score the search on commit sets (docs/index.md)
  agentd doctor   [flags]                   is the kernel sandbox active here, and its cost
  agentd version
  agentd help COMMAND                       a command's flags (or: agentd COMMAND --help)

Flags go before or after the other arguments; -- ends them.
Configuration: OPENAI_BASE_URL, OPENAI_API_KEY, AGENTD_MODEL, or ~/.config/agentd/config.json;
` + "`agentd config`" + ` lists every setting. See README.md and docs/protocol.md.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	switch args[0] {
	case "serve":
		return runServe(ctx, args[1:], stdin, stdout, stderr)
	case "acp":
		return runACP(ctx, args[1:], stdin, stdout, stderr)
	case "run":
		return runTerminal(ctx, args[1:], stdin, stdout, stderr)
	case "sessions":
		return runSessions(ctx, args[1:], stdout, stderr)
	case "undo":
		return runUndo(ctx, args[1:], stdin, stdout, stderr)
	case "index":
		return runIndex(ctx, args[1:], stdout, stderr)
	case "search":
		return runSearch(ctx, args[1:], stdout, stderr)
	case "mcp":
		return runMCP(ctx, args[1:], stdin, stdout, stderr)
	case "config":
		return runConfig(args[1:], stdout, stderr)
	case "search-eval":
		return runSearchEval(ctx, args[1:], stdout, stderr)
	case "doctor":
		return runDoctor(ctx, args[1:], stdout, stderr)
	case "version", "--version", "-v":
		fmt.Fprintln(stdout, "agentd", version)
		return 0
	case "help", "--help", "-h":
		if len(args) > 1 && args[1] != "help" && !strings.HasPrefix(args[1], "-") {
			return run([]string{args[1], "--help"}, stdin, stdout, stderr)
		}
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "agentd: unknown command %q\n\n%s", args[0], usage)
	return 2
}

// command is one subcommand's flags and help.
type command struct {
	*flag.FlagSet
	synopsis string // "agentd index [flags] [dir]"
	about    string // what it does, and anything the flags do not say
}

func newCommand(name, synopsis, about string) *command {
	c := &command{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), synopsis: synopsis, about: about}
	c.Usage = c.printUsage
	return c
}

func (c *command) printUsage() {
	w := c.Output()
	fmt.Fprintf(w, "usage: %s\n", c.synopsis)
	if c.about != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimRight(c.about, "\n"))
	}
	hasFlags := false
	c.VisitAll(func(*flag.Flag) { hasFlags = true })
	if hasFlags {
		fmt.Fprintln(w, "\nFlags (before or after the arguments; -- ends them):")
		c.PrintDefaults()
	}
}

// parse reads the flags wherever they are among the arguments and returns
// the others. A code of 0 or more means stop and exit with it: 0 after
// -h/--help (the help on stdout), 2 after a usage error (said on stderr).
func (c *command) parse(args []string, stdout, stderr io.Writer) ([]string, int) {
	c.SetOutput(io.Discard)
	pos, err := parseInterleaved(c.FlagSet, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		c.SetOutput(stdout)
		c.Usage()
		return nil, 0
	case err != nil:
		return nil, c.fail(stderr, err)
	}
	c.SetOutput(stderr)
	return pos, -1
}

// fail reports a usage error and returns exit code 2.
func (c *command) fail(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "agentd %s: %v\nusage: %s (agentd %s --help for more)\n", c.Name(), err, c.synopsis, c.Name())
	return 2
}

// parseInterleaved parses flags wherever they appear among the positional
// arguments, as `agentd search "query" --json` or `agentd run "hi" --policy
// read-only` read; everything after "--" is positional.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
