package acp

import (
	"context"
	"fmt"
	"slices"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"
)

// searchLimit is how many index hits /search shows.
const searchLimit = 8

// commands are the slash commands agentd answers itself, without the model.
var commands = append([]acpsdk.AvailableCommand{{
	Name:        "search",
	Description: "Search the workspace index (semantic code search, no model call)",
	Input:       &acpsdk.AvailableCommandInput{Unstructured: &acpsdk.UnstructuredCommandInput{Hint: "what you are looking for"}},
}, {
	Name:        "mcp",
	Description: "The MCP servers of this session: state, tools, why one failed",
}}, append(processCommands, undoCommands...)...)

func (s *session) announceCommands() {
	s.send(acpsdk.SessionUpdate{AvailableCommandsUpdate: &acpsdk.SessionAvailableCommandsUpdate{
		SessionUpdate: "available_commands_update", AvailableCommands: s.availableCommands()}})
}

// availableCommands are agentd's own slash commands, then the user's and
// the workspace's custom commands (agent.Commands), which a prompt
// "/name args" runs. Ours come first: a custom command named like one of
// them is not listed, since ours would answer. A broken command file is
// listed with why, so the user sees it; running it says the same.
func (s *session) availableCommands() []acpsdk.AvailableCommand {
	out := append([]acpsdk.AvailableCommand(nil), commands...)
	for _, c := range s.ws.agent.Commands() {
		if c.Shadowed || slices.ContainsFunc(commands, func(b acpsdk.AvailableCommand) bool { return b.Name == c.Name }) {
			continue
		}
		desc := c.Description
		if c.Error != "" {
			desc = "broken: " + c.Error
		}
		if desc == "" {
			desc = "custom command"
		}
		ac := acpsdk.AvailableCommand{Name: c.Name, Description: fmt.Sprintf("%s (%s command)", desc, c.Source)}
		if c.ArgumentHint != "" {
			ac.Input = &acpsdk.AvailableCommandInput{Unstructured: &acpsdk.UnstructuredCommandInput{Hint: c.ArgumentHint}}
		}
		out = append(out, ac)
	}
	return out
}

// slashCommand recognizes "/name arg" for a command of ours; any other text,
// slashes included, goes to the model.
func slashCommand(text string) (name, arg string, ok bool) {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "/") {
		return "", "", false
	}
	name, arg, _ = strings.Cut(t[1:], " ")
	for _, c := range commands {
		if c.Name == name {
			return name, strings.TrimSpace(arg), true
		}
	}
	return "", "", false
}

// command runs a slash command as a turn of its own.
func (s *session) command(ctx context.Context, name, arg string) (acpsdk.PromptResponse, error) {
	if name == "mcp" {
		return s.mcpCommand(ctx)
	}
	if name == "processes" || name == "stop" {
		return s.processCommand(ctx, name, arg), nil // processes.go
	}
	if name != "search" {
		return s.undoCommand(ctx, name, arg), nil // undo.go
	}
	if arg == "" {
		s.say("Usage: `/" + name + " <what you are looking for>`")
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonEndTurn}, nil
	}
	hits, partial, err := s.ws.index.Search(ctx, arg, searchLimit)
	if err != nil {
		s.say("Search failed: " + err.Error())
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonEndTurn}, nil
	}
	var b strings.Builder
	switch {
	case len(hits) == 0 && partial:
		b.WriteString("No results yet: the workspace is still being indexed.")
	case len(hits) == 0:
		b.WriteString("No results for `" + arg + "`.")
	default:
		fmt.Fprintf(&b, "Index results for `%s`:\n", arg)
	}
	for _, h := range hits {
		fmt.Fprintf(&b, "\n**%s** (%s %.2f", h.Path, h.Match, h.Score)
		if h.Kind != "" {
			b.WriteString(", " + h.Kind)
		}
		b.WriteString(")\n")
		for _, c := range h.Chunks {
			fmt.Fprintf(&b, "- lines %d-%d", c.StartLine, c.EndLine)
			if c.Symbol != "" {
				b.WriteString(" `" + c.Symbol + "`")
			}
			b.WriteString("\n```\n")
			for _, l := range c.Lines {
				fmt.Fprintf(&b, "%d│ %s\n", l.Line, clip(l.Text, 200))
			}
			b.WriteString("```\n")
		}
	}
	if partial && len(hits) > 0 {
		b.WriteString("\n_Indexing is still in progress; results may be incomplete._")
	}
	s.say(b.String())
	return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonEndTurn}, nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return strings.TrimRight(s, "\n")
	}
	return strings.TrimRight(s[:n], "\n") + "\n…"
}
