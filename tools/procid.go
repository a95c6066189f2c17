package tools

import "github.com/agentd/agentd/tools/sandbox"

// ProcID names a process a call started, across a daemon restart: its pid
// and its start time, so that a recycled pid is never mistaken for it.
type ProcID = sandbox.ProcID

// Reap kills what is left of a process a call started before the daemon
// died: its whole process group, unless the pid now names another
// process. It reports whether anything was signalled.
func Reap(id ProcID) (bool, error) { return sandbox.Reap(id) }
