package agent

// seqListener hands every notification's run id and seq to onSeq, and each
// run's final state to onEnd, from whichever goroutine notifies.
type seqListener struct {
	onSeq func(runID string, seq int64)
	onEnd func(RunState)
}

func (l seqListener) Update(p UpdateParams)         { l.onSeq(p.RunID, p.Seq) }
func (l seqListener) InputRequest(p InputRequest)   { l.onSeq(p.RunID, p.Seq) }
func (l seqListener) InputResolved(p InputResolved) { l.onSeq(p.RunID, p.Seq) }
func (l seqListener) RunState(p RunState) {
	l.onSeq(p.RunID, p.Seq)
	if p.State.Finished() && l.onEnd != nil {
		l.onEnd(p)
	}
}
