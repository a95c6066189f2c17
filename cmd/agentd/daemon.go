package main

import (
	"flag"
	"fmt"
	"github.com/agentd/agentd/agent"
	"io"
	"log/slog"
	"os"
)

// daemonFlags are the flags of the two front ends an editor launches,
// `serve` and `acp`.
type daemonFlags struct {
	stateDir, logFile, logLevel *string
	noIndex                     *bool
}

// parseDaemonFlags parses the flags of serve or acp, applies the state
// directory, opens the log and loads the settings. A code of 0 or more means
// stop and exit with it (0 after --help, printed on stdout).
func parseDaemonFlags(name, about string, args []string, stdout, stderr io.Writer) (daemonFlags, *slog.Logger, func(), agent.Config, int) {
	fs := newCommand(name, "agentd "+name+" [flags]", about)
	flags := addDaemonFlags(fs.FlagSet)
	pos, code := fs.parse(args, stdout, stderr)
	if code < 0 && len(pos) > 0 {
		code = fs.fail(stderr, fmt.Errorf("unexpected argument %q", pos[0]))
	}
	if code >= 0 {
		return flags, nil, nil, agent.Config{}, code
	}
	log, closeLog, set, code := flags.setup(stderr)
	if code == 0 {
		code = -1
	}
	return flags, log, closeLog, set, code
}

func addDaemonFlags(fs *flag.FlagSet) daemonFlags {
	return daemonFlags{
		stateDir: fs.String("state-dir", "", "base directory for state and index (default: $AGENTD_STATE_DIR, else ~/.local/state and ~/.cache)"),
		logFile:  fs.String("log-file", "", "log to this file instead of stderr"),
		logLevel: fs.String("log-level", "info", "debug, info, warn or error"),
		noIndex:  fs.Bool("no-index", false, "do not index the workspace"),
	}
}

// setup applies the state directory, opens the log and loads the
// configuration, logging what the config file has that no setting knows.
// A non-zero code means it failed and said why on stderr.
func (f daemonFlags) setup(stderr io.Writer) (*slog.Logger, func(), agent.Config, int) {
	if *f.stateDir != "" {
		os.Setenv("AGENTD_STATE_DIR", *f.stateDir)
	}
	log, closeLog, err := newLogger(*f.logFile, *f.logLevel, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "agentd:", err)
		return nil, nil, agent.Config{}, 2
	}
	cfg, warnings, err := loadConfig()
	if err != nil {
		closeLog()
		fmt.Fprintln(stderr, "agentd:", err)
		return nil, nil, agent.Config{}, 2
	}
	for _, w := range warnings {
		log.Warn(w)
	}
	return log, closeLog, cfg, 0
}
