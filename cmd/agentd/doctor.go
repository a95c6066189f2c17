package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/agentd/agentd/tools"
	"github.com/agentd/agentd/tools/sandbox"
)

// runDoctor is `agentd doctor [--json] [--bench N]`: what the kernel
// sandbox offers on this machine, so that a user can check it is active,
// and with --bench what it costs per command. It exits 1 when a profile the
// approval mode needs is not available (read for every mode, and
// workspace-write for every mode but read-only): agentd then asks before
// those commands and runs them unconfined.
func runDoctor(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newCommand("doctor", "agentd doctor [flags]",
		"Say whether the kernel sandbox is active here (Landlock ABI, namespaces, seccomp) and, with --bench,\n"+
			"what it costs per command. Exit status 1 when a profile the approval mode needs is not available\n"+
			"(read for every mode, workspace-write for every mode but read-only): agentd then asks before those\n"+
			"commands and runs them with your full rights.")
	asJSON := fs.Bool("json", false, "print the sandbox status as JSON")
	bench := fs.Int("bench", 0, "also time `N` runs of `true` per profile, in the current directory")
	pos, code := fs.parse(args, stdout, stderr)
	switch {
	case code >= 0:
		return code
	case len(pos) > 0:
		return fs.fail(stderr, fmt.Errorf("unexpected argument %q", pos[0]))
	case *bench < 0:
		return fs.fail(stderr, errors.New("--bench must not be negative"))
	}
	st := sandbox.Check()
	off, landlock, mode := false, false, tools.ModeAsk
	if cfg, _, err := loadConfig(); err == nil {
		off, landlock = cfg.Sandbox == "off", cfg.Sandbox == "landlock"
		if cfg.Policy != "" {
			mode = cfg.Policy
		}
	}
	if landlock {
		st = st.WithoutNamespaces()
	}
	report := struct {
		Sandbox sandbox.Status `json:"sandbox"`
		// Profiles lists the profiles commands can run in here.
		Profiles []string `json:"profiles"`
		Off      bool     `json:"off,omitempty"` // the settings switch the sandbox off
		// Missing says what the approval mode needs that is not there,
		// why the exit status is 1; "" when nothing.
		Missing string             `json:"missing,omitempty"`
		Cost    map[string]float64 `json:"costMs,omitempty"` // mean per command, in milliseconds
	}{Sandbox: st, Off: off, Missing: missing(st, off, mode)}
	for _, p := range []sandbox.Profile{sandbox.Read, sandbox.WorkspaceWrite, sandbox.Full} {
		if st.Supports(p) && !(off && p != sandbox.Full) {
			report.Profiles = append(report.Profiles, p.String())
		}
	}
	if *bench > 0 {
		cost, err := spawnCost(ctx, st, *bench, landlock)
		if err != nil {
			fmt.Fprintf(stderr, "agentd doctor: %v\n", err)
			return 1
		}
		report.Cost = cost
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(report)
	} else {
		fmt.Fprint(stdout, st.String())
		if off {
			fmt.Fprintln(stdout, "SWITCHED OFF in the settings (sandbox: off, AGENTD_SANDBOX): every command asks, and runs with your full rights")
		}
		if report.Cost != nil {
			fmt.Fprintf(stdout, "cost per command (spawning true, mean of %d):\n  plain: %.2f ms\n", *bench, report.Cost["plain"])
			for _, p := range []sandbox.Profile{sandbox.Full, sandbox.Read, sandbox.WorkspaceWrite} {
				if ms, ok := report.Cost[p.String()]; ok {
					fmt.Fprintf(stdout, "  %s: %.2f ms (+%.2f ms)\n", p, ms, ms-report.Cost["plain"])
				}
			}
		}
	}
	if report.Missing != "" {
		if !*asJSON {
			fmt.Fprintln(stdout, "NOT ENOUGH: "+report.Missing)
		}
		return 1
	}
	return 0
}

// missing says what the approval mode needs of the sandbox that this
// machine (or the settings) does not give, "" when nothing: every mode
// confines read-only commands in read; every mode but read-only runs the
// commands it allows or the user approves in workspace-write.
func missing(st sandbox.Status, off bool, mode tools.Mode) string {
	switch {
	case off:
		return "the sandbox is switched off in the settings: every command asks, and runs with your full rights"
	case !st.Supports(sandbox.Read):
		return "no profile can be confined here: every command asks, and runs with your full rights"
	case !st.Supports(sandbox.WorkspaceWrite) && mode != tools.ModeReadOnly:
		return fmt.Sprintf("the approval mode %s runs the commands it allows or you approve in workspace-write, "+
			"which is not available here: each of them asks, and runs with your full rights", mode)
	}
	return ""
}

// spawnCost times n runs of `true`: plain, then in each profile the
// machine supports, with the current directory as the workspace.
func spawnCost(ctx context.Context, st sandbox.Status, n int, landlock bool) (map[string]float64, error) {
	ws, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	// A command follows a model's turn; the pause between runs (not timed)
	// stands for it, and lets the sandbox start its next entry point.
	mean := func(run func() error) (float64, error) {
		var total time.Duration
		for range n {
			time.Sleep(20 * time.Millisecond)
			start := time.Now()
			if err := run(); err != nil {
				return 0, err
			}
			total += time.Since(start)
		}
		return float64(total.Microseconds()) / 1000 / float64(n), nil
	}
	cost := map[string]float64{}
	cost["plain"], err = mean(func() error { return exec.CommandContext(ctx, "true").Run() })
	if err != nil {
		return nil, err
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for _, p := range []sandbox.Profile{sandbox.Full, sandbox.Read, sandbox.WorkspaceWrite} {
		if !st.Supports(p) {
			continue
		}
		cost[p.String()], err = mean(func() error {
			c, err := sandbox.Command(ctx, sandbox.Spec{Profile: p, Workspace: ws, Args: []string{"true"}, Env: env, LandlockOnly: landlock})
			if err != nil {
				return err
			}
			return c.Run()
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	return cost, nil
}
