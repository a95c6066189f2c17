package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/agentd/agentd/rag"
	"github.com/agentd/agentd/rpc"
)

func runServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
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
	set, err := loadSettings()
	if err != nil {
		fmt.Fprintln(stderr, "agentd:", err)
		return 2
	}
	opts := rpc.Options{Version: version, StateDirs: stateDirs, UserConfigDir: set.UserConfigDir, Model: set.Model,
		Policy: set.Policy, QuestionTimeout: set.QuestionTimeout, ConfirmTimeout: set.ConfirmTimeout,
		RetryBase: set.RetryBase, MaxSteps: set.MaxSteps, Logger: log}
	if !*noIndex {
		opts.OpenIndex = indexOpener(set.Embed)
	}
	return rpc.Serve(ctx, stdio{stdin, stdout}, opts)
}

// indexOpener opens the rag index with the configured embedder (the
// in-process one unless an endpoint is set).
func indexOpener(e embedConfig) rpc.IndexOpener {
	return func(ctx context.Context, root, dir string) (rpc.Index, error) {
		opts := rag.Options{Root: root, StateDir: dir}
		if e.BaseURL != "" && e.Model != "" {
			opts.Embedder = rag.NewOpenAIEmbedder(e.BaseURL, e.APIKey, e.Model)
		}
		idx, err := rag.Open(ctx, opts)
		if err != nil {
			return nil, err // not a typed nil inside the interface
		}
		return idx, nil
	}
}

// stdio joins stdin and stdout into the connection the protocol runs on.
type stdio struct {
	io.Reader
	io.Writer
}

func (s stdio) Close() error {
	if c, ok := s.Reader.(io.Closer); ok {
		c.Close()
	}
	if c, ok := s.Writer.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
