package main

import (
	"context"
	"io"
	"log/slog"

	"github.com/agentd/agentd/rag"
	"github.com/agentd/agentd/rpc"
)

func runServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	flags, log, closeLog, set, code := parseDaemonFlags("serve", args, stderr)
	if code != 0 {
		return code
	}
	defer closeLog()
	opts := rpc.Options{Version: version, StateDirs: stateDirs, UserConfigDir: set.UserConfigDir, Model: set.Model,
		Policy: set.Policy, QuestionTimeout: set.QuestionTimeout, ConfirmTimeout: set.ConfirmTimeout,
		RetryBase: set.RetryBase, MaxSteps: set.MaxSteps, Logger: log}
	if !*flags.noIndex {
		opts.OpenIndex = indexStarter(set.Embed, log)
	}
	return rpc.Serve(ctx, stdio{stdin, stdout}, opts)
}

// indexStarter runs the rag index in the background with the configured
// embedder (the in-process one unless an endpoint is set).
func indexStarter(e embedConfig, log *slog.Logger) rpc.IndexStarter {
	return func(root, dir string, p rpc.IndexProgress) rpc.Index {
		return rag.StartLive(ragOptions(e, root, dir, log), rag.Progress{Begin: p.Begin, Report: p.Report, End: p.End})
	}
}

func ragOptions(e embedConfig, root, dir string, log *slog.Logger) rag.Options {
	opts := rag.Options{Root: root, StateDir: dir, Logger: log}
	if e.BaseURL != "" && e.Model != "" {
		opts.Embedder = rag.NewOpenAIEmbedder(e.BaseURL, e.APIKey, e.Model)
	}
	return opts
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
