package rpc

import (
	"context"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/rpc/wire"
)

// The undo methods (docs/protocol.md#undo): thin handlers over the agent's
// Checkpoints, Undo and Rewind.
func init() {
	requests[wire.MethodCheckpoints] = checkpointsHandler
	requests[wire.MethodUndo] = undoHandler
	requests[wire.MethodRewind] = rewindHandler
}

var (
	checkpointsHandler = agentCall(func(ctx context.Context, a *agent.Agent, p SessionRef) (CheckpointsResult, error) {
		cps, err := a.Checkpoints(p.SessionID)
		return CheckpointsResult{Checkpoints: cps}, err
	})
	undoHandler = agentCall(func(ctx context.Context, a *agent.Agent, p agent.UndoParams) (agent.UndoResult, error) {
		return a.Undo(ctx, p)
	})
	rewindHandler = agentCall(func(ctx context.Context, a *agent.Agent, p agent.RewindParams) (agent.UndoResult, error) {
		return a.Rewind(ctx, p)
	})
)
