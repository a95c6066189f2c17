// Package term is the terminal front end, `agentd run`: the agent on one
// prompt, its notifications printed as they come (a status line, the
// answer laid out as markdown, each tool call with its result) and its
// input requests asked at prompts read from the keyboard. Without a
// terminal it prints plain text and asks nothing; with JSON set it prints
// the run's notifications as JSON lines.
//
// It is a front end beside rpc and rpc/acp: it implements agent.Listener
// and answers through the agent's methods. cmd/agentd parses the flags,
// builds the configuration and the one-shot index, and calls Run. It owns
// golang.org/x/term; termmd owns the markdown libraries.
package term
