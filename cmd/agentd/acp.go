package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/agentd/agentd/rpc/acp"
)

// runACP speaks the Agent Client Protocol on stdio: what Zed, JetBrains,
// CodeCompanion and other ACP editors launch.
func runACP(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("acp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	stateDir := fs.String("state-dir", "", "base directory for state and index (default: $AGENTD_STATE_DIR, else ~/.local/state and ~/.cache)")
	logFile := fs.String("log-file", "", "log to this file instead of stderr")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	noIndex := fs.Bool("no-index", false, "do not index the workspace")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *stateDir != "" {
		os.Setenv("AGENTD_STATE_DIR", *stateDir)
	}
	log, closeLog, err := newLogger(*logFile, *logLevel, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "agentd:", err)
		return 2
	}
	defer closeLog()
	slog.SetDefault(log) // the ACP SDK logs to the default logger; never to stdout
	set, err := loadSettings()
	if err != nil {
		fmt.Fprintln(stderr, "agentd:", err)
		return 2
	}
	opts := acp.Options{Version: version, StateDirs: stateDirs, UserConfigDir: set.UserConfigDir, Model: set.Model,
		Policy: set.Policy, QuestionTimeout: set.QuestionTimeout, ConfirmTimeout: set.ConfirmTimeout,
		RetryBase: set.RetryBase, MaxSteps: set.MaxSteps, Logger: log}
	if !*noIndex {
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
