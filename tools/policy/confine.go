package policy

import (
	"slices"
	"strings"

	"github.com/agentd/agentd/tools"
)

// confine completes a command's verdict with how it runs, and raises it
// where the kernel or the command needs the user (issue 11: the policy
// decides when to ask, the kernel decides what can happen). It reads the
// shell analysis's class of the line (Classify):
//
//   - the profile: read for a line the analysis judges read-only (and for
//     every command in read-only mode, where nothing else is allowed),
//     workspace-write otherwise, and in full-auto; full only by the user's
//     explicit choice (AllowFull), never from the policy;
//   - the network, off unless the command needs it (the model said so, the
//     class names a known network program or a /dev/tcp redirect), then
//     granted by a network rule or the mode: read-only refuses it, ask and
//     auto-edit ask, full-auto allows;
//   - a command that uses a secret is never allowed without the user;
//   - where the kernel cannot confine the profile, the command asks in
//     every mode and, approved, runs with the user's own rights.
//
// Denials and lines that cannot be checked were decided before: a denial
// stays one, and an unchecked line already asks in every mode.
func (p *Policy) confine(rules []Rule, mode tools.Mode, c *tools.Call, an *shellAnalysis, cls CommandClass, d Verdict) Verdict {
	if d.Action == Deny {
		return d
	}
	d.Confine.Profile = tools.ProfileWorkspaceWrite
	if mode == tools.ModeReadOnly || cls.ReadOnly && mode != tools.ModeFullAuto {
		d.Confine.Profile = tools.ProfileRead
	}
	// git alone may write the repository's objects, refs and index; any
	// other command finds the git directory read-only (gitwrite.go).
	d.Confine.Git = cls.Git && d.Confine.Profile == tools.ProfileWorkspaceWrite
	if an.ParseErr == nil {
		if cls.Network || c.Command.Network {
			parts := networkParts(an, c.Command.Network)
			nd := decideNetwork(rules, mode, an, parts)
			if nd.Action == Deny {
				return nd
			}
			if nd.Action == Ask && d.Action != Deny {
				nd.Rule += networkGrantNote(p.networkGrantRules(rules, an, c.Command.Network, ScopeSession))
			}
			d = raise(d, nd)
			d.Confine.Network = true
		}
	} else if c.Command.Network {
		d.Confine.Network = true // the user sees the line and the network in the prompt
	}
	if len(c.Command.Secrets) > 0 {
		names := "$" + strings.Join(c.Command.Secrets, ", $")
		sd := Verdict{Action: Ask, Rule: "secret: the command uses " + names + ": ask",
			Reason: "a command that uses a secret the user gave is never run without the user"}
		if mode == tools.ModeReadOnly {
			return Verdict{Action: Deny, Rule: "mode read-only: the command uses " + names + ": deny",
				Reason: "read-only mode runs no command that uses a secret, since it asks no one"}
		}
		d = raise(d, sd)
		d.Secrets = slices.Clone(c.Command.Secrets)
	}
	if !p.sandbox.Supports(d.Confine.Profile) {
		st := p.sandbox.Status()
		d = raise(d, Verdict{Action: Ask, Rule: "sandbox: not available for " + string(d.Confine.Profile) + ": ask",
			Reason: st.Summary})
		d.Action = Ask // read-only mode too: nothing runs unconfined unasked
		d.Confine = tools.Confine{Profile: tools.ProfileFull, Network: true}
	}
	return d
}

// raise makes d at least as strict as by, naming both rules when both ask.
func raise(d, by Verdict) Verdict {
	switch {
	case by.Action.severity() > d.Action.severity():
		d.Action, d.Rule, d.Reason = by.Action, by.Rule, by.Reason
	case by.Action == d.Action && by.Action != Allow:
		d.Rule += "; " + by.Rule
		d.Reason += "; " + by.Reason
	}
	return d
}
