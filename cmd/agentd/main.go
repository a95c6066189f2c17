// Command agentd is a coding agent that lives in the editor. `agentd serve`
// is what an editor launches (JSON-RPC over stdio); `agentd run` is the same
// agent in a terminal; `agentd index` and `agentd search` query the workspace
// index without a model.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

const usage = `agentd — a coding agent for your editor

Usage:
  agentd serve   [--state-dir D] [--log-file F] [--log-level L]   speak JSON-RPC on stdio (what editors launch)
  agentd acp     [--state-dir D] [--log-file F] [--log-level L]   speak the Agent Client Protocol on stdio (Zed, JetBrains, …)
  agentd run     [--policy MODE] [--session ID] [--dir D] "prompt"  the agent in a terminal
  agentd undo    [--session S] [cN | --run R | --rewind [N] | --list] undo the agent's changes, commands' included
  agentd index   [--state-dir D] [dir]                             build the workspace index
  agentd search  [--json] [--limit N] [--state-dir D] "query" [dir] search the workspace index
  agentd config                                                    the settings in effect and where they come from
  agentd search-eval [--corpora DIR] SET.jsonl...                  score the search on commit sets (docs/index.md)
  agentd version

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
	case "undo":
		return runUndo(ctx, args[1:], stdin, stdout, stderr)
	case "index":
		return runIndex(ctx, args[1:], stderr)
	case "search":
		return runSearch(ctx, args[1:], stdout, stderr)
	case "config":
		return runConfig(stdout, stderr)
	case "search-eval":
		return runSearchEval(ctx, args[1:], stdout, stderr)
	case "version", "--version", "-v":
		fmt.Fprintln(stdout, "agentd", version)
		return 0
	case "help", "--help", "-h":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "agentd: unknown command %q\n\n%s", args[0], usage)
	return 2
}
