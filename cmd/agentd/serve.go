package main

import (
	"context"
	"io"
	"log/slog"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/tools"

	"github.com/agentd/agentd/rag"
	"github.com/agentd/agentd/rpc"
)

func runServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	flags, log, closeLog, cfg, code := parseDaemonFlags("serve",
		"Speak the native protocol (JSON-RPC 2.0 with LSP framing) on stdio: what the editors launch (docs/protocol.md).", args, stdout, stderr)
	if code >= 0 {
		return code
	}
	defer closeLog()
	opts := rpc.Options{Version: version, Agent: cfg, StateDirs: stateDirs, Logger: log}
	if !*flags.noIndex {
		opts.OpenIndex = indexStarter(cfg, log)
	}
	return rpc.Serve(ctx, stdio{stdin, stdout}, opts)
}

// indexStarter runs the rag index in the background with the configured
// embedder (the in-process one unless an endpoint is set).
func indexStarter(cfg agent.Config, log *slog.Logger) rpc.IndexStarter {
	return func(root, dir string, p rpc.IndexProgress) rpc.Index {
		rp := rag.Progress{Begin: p.Begin, Report: p.Report, End: p.End}
		if t := startTeam(cfg, ragOptions(cfg, root, dir, log), rp); t != nil {
			return t
		}
		return rag.StartLive(ragOptions(cfg, root, dir, log), rp)
	}
}

// ragOptions are the index's options for root: its embeddings endpoint,
// if one is configured, with its own key (the model's only on the model's
// host: cfg.EmbeddingsKey).
func ragOptions(cfg agent.Config, root, dir string, log *slog.Logger) rag.Options {
	opts := rag.Options{Root: root, StateDir: dir, Logger: log, Hidden: tools.AgentDirs(dir, cfg.StateDir, cfg.UserConfigDir)}
	if e := cfg.Embeddings; e.BaseURL != "" && e.Model != "" {
		opts.Embedder = rag.NewOpenAIEmbedder(e.BaseURL, cfg.EmbeddingsKey(), e.Model)
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
