package agent

import "github.com/agentd/agentd/tools"

// HostAllowed says whether the run may reach a host without asking
// (tools.HostGate): a fetch follows a redirect only there.
func (r *run) HostAllowed(tool string, h tools.HostAccess) bool {
	return r.a.policy.HostAllowed(r.rec.SessionID, policyMode(r.runSettings().ApprovalPolicy), tool, h)
}

// HostRefused says whether the policy refuses the run every request to a
// host, whatever it resolves to (tools.HostGate): the name is then not
// even looked up.
func (r *run) HostRefused(tool, host string) bool {
	return r.a.policy.HostRefused(r.rec.SessionID, policyMode(r.runSettings().ApprovalPolicy), tool, host)
}

// hostRequest names a network call by its host, for what the model reads
// when no one can approve it.
func hostRequest(call *tools.Call) string {
	s := "a request to " + call.Host.Name
	if call.Host.Private {
		s += " (on this machine or a private network, which only the user can allow)"
	}
	return s
}
