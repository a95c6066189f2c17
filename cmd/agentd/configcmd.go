package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/agentd/agentd/agent"
)

// runConfig is `agentd config`: every setting with the value in effect
// (keys masked) and where it is read from, then what is missing to call a
// model, if anything is.
func runConfig(args []string, stdout, stderr io.Writer) int {
	fs := newCommand("config", "agentd config",
		"Show every setting with the value in effect (keys masked) and where it is read from, then what is\nmissing to call a model, if anything is.")
	pos, code := fs.parse(args, stdout, stderr)
	if code < 0 && len(pos) > 0 {
		code = fs.fail(stderr, fmt.Errorf("unexpected argument %q", pos[0]))
	}
	if code >= 0 {
		return code
	}
	cfg, warnings, err := loadConfig()
	if err != nil {
		fmt.Fprintln(stderr, "agentd:", err)
		return 1
	}
	for _, w := range warnings {
		fmt.Fprintln(stderr, "agentd: warning:", w)
	}
	fmt.Fprintf(stdout, "Settings come from the environment, over %s, over the defaults;\n", cfg.ConfigFile())
	fmt.Fprintln(stdout, "an editor may also set those marked * in initializationOptions.")
	fmt.Fprintln(stdout)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SETTING\tENVIRONMENT\tVALUE")
	for _, s := range agent.Settings() {
		key, env, v := s.Key, s.Env, s.Value(&cfg)
		if s.Editor {
			key += " *"
		}
		if env == "" {
			env = "-"
		}
		if v == "" {
			v = "(unset)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", key, env, v)
	}
	tw.Flush()
	if err := cfg.CheckModel(); err != nil {
		fmt.Fprintf(stdout, "\n%v\n", err)
	}
	return 0
}
