package main

import (
	"context"
	"flag"
	"io"

	"github.com/agentd/agentd/rag"
	"github.com/agentd/agentd/rpc"
)

func runServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
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
	opts := rpc.Options{Version: version, StateDirs: stateDirs, UserConfigDir: set.UserConfigDir, Model: set.Model,
		Policy: set.Policy, QuestionTimeout: set.QuestionTimeout, ConfirmTimeout: set.ConfirmTimeout,
		RetryBase: set.RetryBase, MaxSteps: set.MaxSteps, Logger: log}
	if !*flags.noIndex {
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
