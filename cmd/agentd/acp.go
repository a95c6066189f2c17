package main

import (
	"context"
	"flag"
	"io"
	"log/slog"

	"github.com/agentd/agentd/rpc/acp"
)

// runACP speaks the Agent Client Protocol on stdio: what Zed, JetBrains,
// CodeCompanion and other ACP editors launch.
func runACP(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("acp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	flags := addDaemonFlags(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	log, closeLog, set, code := flags.setup(stderr)
	if code != 0 {
		return code
	}
	defer closeLog()
	slog.SetDefault(log) // the ACP SDK logs to the default logger; never to stdout
	opts := acp.Options{Version: version, StateDirs: stateDirs, UserConfigDir: set.UserConfigDir, Model: set.Model,
		Policy: set.Policy, QuestionTimeout: set.QuestionTimeout, ConfirmTimeout: set.ConfirmTimeout,
		RetryBase: set.RetryBase, MaxSteps: set.MaxSteps, Logger: log}
	if !*flags.noIndex {
		opts.OpenIndex = acpIndexOpener(set.Embed)
	}
	if err := acp.Serve(ctx, stdin, stdout, opts); err != nil {
		log.Error("acp", "err", err)
		return 1
	}
	return 0
}

// acpIndexOpener opens the same rag index as `agentd serve`.
func acpIndexOpener(e embedConfig) acp.IndexOpener {
	open := indexOpener(e)
	return func(ctx context.Context, root, dir string) (acp.Index, error) {
		idx, err := open(ctx, root, dir)
		if err != nil {
			return nil, err // not a typed nil inside the interface
		}
		return idx, nil
	}
}
