package agent

import "github.com/agentd/agentd/tools"

// HostAllowed says whether the run may reach a host without asking
// (tools.HostGate): a fetch follows a redirect only there.
func (r *run) HostAllowed(tool string, h tools.HostAccess) bool {
	return r.a.policy.HostAllowed(r.rec.SessionID, r.runSettings().ApprovalPolicy, tool, h)
}
