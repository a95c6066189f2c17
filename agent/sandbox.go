package agent

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentd/agentd/tools"
	"github.com/agentd/agentd/tools/policy"
)

// Every command runs in the kernel sandbox (tools.Sandbox) in the profile
// the policy picked: the confirmation shows it, the user may instead run the
// command without the sandbox (tools.AllowFull), and where the machine
// cannot confine commands every command asks and the user is told once per
// session.

// SandboxStatus is what the kernel sandbox offers here, for initialize's
// capabilities.
func (a *Agent) SandboxStatus() tools.SandboxStatus { return a.sandbox.Status() }

// warnUnconfined tells the session once, at its first command, that
// commands cannot all be confined here, so every such command asks and runs
// with the user's rights.
func (r *run) warnUnconfined() {
	if r.a.sandbox.Supports(tools.ProfileWorkspaceWrite) {
		return
	}
	if _, done := r.a.warned.LoadOrStore(r.rec.SessionID, true); done {
		return
	}
	st := r.a.sandbox.Status()
	text := strings.ToUpper(st.Summary[:1]) + st.Summary[1:] + "." // a notice: front ends mark it as a warning
	if len(st.Problems) > 0 {
		text += " (" + strings.Join(st.Problems, "; ") + ")"
	}
	r.logger().Warn("commands are not confined", "status", st.Summary, "problems", st.Problems)
	r.update(Update{Kind: UpdateNotice, Text: text})
}

// describeConfinement shows on a command's confirmation how it will run:
// the profile and the network (in the message, the rule text and fields an
// editor can show), the secrets it uses, and the answers that fit.
func (r *run) describeConfinement(req *InputRequest, d policy.Verdict) {
	c := d.Confine
	req.Profile, req.Network, req.Secrets = c.Profile, c.Network, d.Secrets
	net := "without the network"
	if c.Network {
		net = "with the network"
	}
	var how string
	switch {
	case c.Profile == tools.ProfileFull:
		how = fmt.Sprintf("The kernel sandbox cannot confine it here (%s): if you allow it, it runs with your full rights, %s.",
			r.a.sandbox.Status().Summary, net)
		req.Options = unconfinedOptions
	case c.Profile == tools.ProfileRead:
		how = "Allowed, it runs in the read sandbox (it can change nothing but its temporary files), " + net + "."
		req.Options = withFull(c)
	case c.Git:
		how = "Allowed, it runs in the workspace-write sandbox as git alone (it can change the workspace and the repository's " +
			"commits, branches and index, not its configuration or hooks; git runs without hooks), " + net + "."
		req.Options = withFull(c)
	default:
		how = "Allowed, it runs in the workspace-write sandbox (it can change the workspace, not the repository's .git, " +
			"nested repositories or .agentd/), " + net + "."
		req.Options = withFull(c)
	}
	req.Message = "The agent wants to run a command. " + how
	if len(d.Secrets) > 0 {
		req.Message += " It uses the secret " + dollar(d.Secrets) + " you gave."
	}
	req.Rule += "; runs in " + string(c.Profile) + ", " + net
	if len(d.Secrets) > 0 {
		req.Rule += ", uses " + dollar(d.Secrets)
	}
}

func dollar(names []string) string { return "$" + strings.Join(names, ", $") }

// unconfinedOptions answer a command the sandbox cannot confine: allowing
// it is running it unconfined, once; nothing unconfined is stored as a rule.
var unconfinedOptions = []tools.Option{
	{OptionID: string(tools.AllowOnce), Label: "Run without the sandbox", Description: "once, with your full rights"},
	{OptionID: string(tools.RejectOnce), Label: "Reject"},
	{OptionID: string(tools.RejectAlways), Label: "Always reject"},
}

// withFull is the usual answers, saying where an allowed command runs, and
// the one way to run it with the user's own rights.
func withFull(c tools.Confine) []tools.Option {
	where := "in the " + string(c.Profile) + " sandbox"
	if c.Network {
		where += ", with the network"
	}
	opts := slices.Clone(confirmOptions)
	for i := range opts {
		if tools.Decision(opts[i].OptionID).Allows() {
			opts[i].Description = where
		}
	}
	return append(opts, tools.Option{OptionID: string(tools.AllowFull), Label: "Allow without the sandbox",
		Description: "once, with your full rights and the network"})
}

// confineOnApproval is how an approved command runs: as the confirmation
// said, or with the user's own rights when the user chose so.
func confineOnApproval(pc *pendingCall, d tools.Decision) *tools.Confine {
	if d == tools.AllowFull {
		return &tools.Confine{Profile: tools.ProfileFull, Network: true}
	}
	return pc.Confine // nil for a request persisted before profiles: judged again when it runs
}

// confineToRun sets how an approved command runs: as decided when it was
// judged or approved (pc.Confine). A call approved before the daemon
// recorded that is judged again; if the policy would no longer let it run,
// it runs in the narrowest profile, without network.
func (r *run) confineToRun(pc *pendingCall, call *tools.Call) *tools.Confine {
	if call.Command == nil {
		return nil
	}
	r.mu.Lock()
	conf := pc.Confine
	mode := r.rec.Policy
	r.mu.Unlock()
	if conf == nil {
		d := r.a.policy.Decide(r.rec.SessionID, policyMode(mode), call)
		c := tools.Confine{Profile: tools.ProfileRead}
		if d.Action != policy.Deny && (d.Action == policy.Allow || pc.req != nil) && d.Confine.Profile != tools.ProfileFull {
			c = d.Confine
		}
		conf = &c
	}
	call.Command.Confine = *conf
	return conf
}

// Sandbox is the kernel sandbox every process the agent starts goes
// through (tools.Sandbox.Command): hooks and MCP servers use it too.
func (a *Agent) Sandbox() *tools.Sandbox { return a.sandbox }

// ownDirs are agentd's own directories, hidden from every confined process
// (tools.SandboxConfig.Own): the user's configuration and the directory that
// holds every workspace's state (this one's is a directory of it).
func ownDirs(cfg Config) []string {
	var out []string
	if cfg.UserConfigDir != "" {
		out = append(out, cfg.UserConfigDir)
	}
	if cfg.StateDir != "" {
		out = append(out, filepath.Dir(filepath.Clean(cfg.StateDir)))
	}
	return out
}
