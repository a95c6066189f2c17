package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/rag"
)

// loadConfig builds the agent's configuration from its settings (the
// table in agent/config.go): the defaults, then ~/.config/agentd/config.json,
// then the environment. Keys the file has that no setting knows come back
// as warnings naming the key and the file.
func loadConfig() (agent.Config, []string, error) {
	cfg := agent.DefaultConfig()
	if dir, err := os.UserConfigDir(); err == nil {
		cfg.UserConfigDir = filepath.Join(dir, "agentd")
	}
	var warnings []string
	if path := cfg.ConfigFile(); path != "" {
		data, err := os.ReadFile(path)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return cfg, nil, fmt.Errorf("reading %s: %w", path, err)
		default:
			if warnings, err = cfg.LoadJSON(data, path, false); err != nil {
				return cfg, warnings, err
			}
		}
	}
	return cfg, warnings, cfg.LoadEnv(os.LookupEnv)
}

// stateDirs returns the per-workspace state directory (sessions, runs, logs,
// rules) and cache directory (the index). With AGENTD_STATE_DIR (or
// --state-dir) both live under it; otherwise the state goes under
// $XDG_STATE_HOME (~/.local/state) and the index under the user cache dir.
func stateDirs(root string) (string, string, error) {
	cache, err := rag.StateDirFor(root)
	if err != nil {
		return "", "", err
	}
	if os.Getenv("AGENTD_STATE_DIR") != "" {
		return cache, cache, nil
	}
	base := os.Getenv("XDG_STATE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", "", fmt.Errorf("state dir: %w", err)
		}
		base = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(base, "agentd", filepath.Base(cache)), cache, nil
}

// newLogger logs to the file, or to stderr; never to stdout, which carries
// the protocol.
func newLogger(file, level string, stderr io.Writer) (*slog.Logger, func(), error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(strings.ToUpper(level))); err != nil {
		return nil, nil, fmt.Errorf("--log-level: %w", err)
	}
	w, closeFn := stderr, func() {}
	if file != "" {
		f, err := os.OpenFile(file, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("--log-file: %w", err)
		}
		w, closeFn = f, func() { f.Close() }
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: lv})), closeFn, nil
}
