package agent

// KindAnswer says how a kind of input request is answered: with a decision
// (agent/confirm) or with a reply (agent/reply), and whether the answer is
// a secret (typed hidden, never persisted nor shown to the model). The
// protocol's contract lists it for the clients.
func KindAnswer(k RequestKind) (decision, secret bool) {
	r := requestRules[k]
	return r.decision, r.secret
}
