package main

import (
	"context"
	"github.com/agentd/agentd/agent"
	"io"
	"log/slog"

	"github.com/agentd/agentd/rag"
	"github.com/agentd/agentd/rpc/acp"
)

// runACP speaks the Agent Client Protocol on stdio: what Zed, JetBrains,
// CodeCompanion and other ACP editors launch.
func runACP(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	flags, log, closeLog, cfg, code := parseDaemonFlags("acp",
		"Speak the Agent Client Protocol on stdio: what Zed, JetBrains, CodeCompanion and other ACP editors launch\n(docs/acp.md).", args, stdout, stderr)
	if code >= 0 {
		return code
	}
	defer closeLog()
	slog.SetDefault(log) // the ACP SDK logs to the default logger; never to stdout
	opts := acp.Options{Version: version, Agent: cfg, StateDirs: stateDirs, Logger: log}
	if !*flags.noIndex {
		opts.OpenIndex = acpIndexStarter(cfg, log)
	}
	if err := acp.Serve(ctx, stdin, stdout, opts); err != nil {
		log.Error("acp", "err", err)
		return 1
	}
	return 0
}

// acpIndexStarter runs the same rag index as `agentd serve`.
func acpIndexStarter(cfg agent.Config, log *slog.Logger) acp.IndexStarter {
	return func(root, dir string) acp.Index {
		if t := startTeam(cfg, ragOptions(cfg, root, dir, log), rag.Progress{}); t != nil {
			return t
		}
		return rag.StartLive(ragOptions(cfg, root, dir, log), rag.Progress{})
	}
}
