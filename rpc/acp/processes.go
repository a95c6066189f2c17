package acp

import (
	"context"
	"fmt"
	"strings"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/tools"
)

// ACP has no notion of a process that outlives a tool call: the session's
// background processes (run_cmd's background) are listed with /processes
// and stopped with /stop, as slash commands answered without the model.

var processCommands = []acpsdk.AvailableCommand{{
	Name:        "processes",
	Description: "The background processes of this session (dev servers, watchers): state and output size",
}, {
	Name:        "stop",
	Description: "Stop a background process of this session",
	Input:       &acpsdk.AvailableCommandInput{Unstructured: &acpsdk.UnstructuredCommandInput{Hint: "its id, e.g. p1"}},
}}

func (s *session) processCommand(ctx context.Context, name, arg string) acpsdk.PromptResponse {
	s.mu.Lock()
	agentID := s.agentID
	s.mu.Unlock()
	done := acpsdk.PromptResponse{StopReason: acpsdk.StopReasonEndTurn}
	if agentID == "" {
		s.say("No background processes: this session has not run anything yet.")
		return done
	}
	if name == "processes" {
		ps, err := s.ws.agent.Processes(agent.ProcessesParams{SessionID: agentID})
		if err != nil {
			s.say("Cannot list the background processes: " + err.Error())
			return done
		}
		s.say(formatProcesses(ps))
		return done
	}
	if arg == "" {
		s.say("Usage: `/stop <id>`, an id `/processes` lists (p1, p2 …)")
		return done
	}
	p, err := s.ws.agent.StopProcess(ctx, agent.StopProcessParams{SessionID: agentID, ID: arg})
	if err != nil {
		s.say("Not stopped: " + err.Error())
		return done
	}
	s.say(fmt.Sprintf("%s `%s`: %s.", p.ID, p.Command, processState(p)))
	return done
}

func formatProcesses(ps []tools.ProcessInfo) string {
	if len(ps) == 0 {
		return "No background processes in this session."
	}
	var b strings.Builder
	b.WriteString("Background processes:\n")
	for _, p := range ps {
		fmt.Fprintf(&b, "\n- **%s** `%s` (in %s): %s", p.ID, p.Command, p.Cwd, processState(p))
	}
	if anyRunning(ps) {
		b.WriteString("\n\nStop one with `/stop <id>`.")
	}
	return b.String()
}

func anyRunning(ps []tools.ProcessInfo) bool {
	for _, p := range ps {
		if p.State == tools.ProcRunning {
			return true
		}
	}
	return false
}

// processState says how a process stands, for people.
func processState(p tools.ProcessInfo) string {
	switch p.State {
	case tools.ProcRunning:
		return "running for " + time.Since(p.StartedAt).Round(time.Second).String()
	case tools.ProcExited:
		return fmt.Sprintf("exited with code %d", *p.ExitCode)
	case tools.ProcStopped:
		return "stopped"
	}
	return "ended when agentd restarted"
}
