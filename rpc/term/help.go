package term

import (
	"fmt"
	"io"

	"github.com/agentd/agentd/agent"
)

// PrintCommandHelp answers `agentd run /help`: the custom commands a prompt
// may start with (docs/extensions.md), each as it is typed, with its
// description and where it comes from; shadowed and broken ones are named
// so a user sees why theirs does not run.
func PrintCommandHelp(w io.Writer, cmds []agent.Command) {
	fmt.Fprintln(w, "A prompt that starts with /name runs that custom command: its prompt file, with the rest of the line as its arguments.")
	fmt.Fprintln(w, `  agentd run "/review cart.go"`)
	fmt.Fprintln(w)
	if len(cmds) == 0 {
		fmt.Fprintln(w, "No custom commands: add Markdown prompt files to .agentd/commands/ in the workspace or ~/.config/agentd/commands/.")
		return
	}
	fmt.Fprintln(w, "Custom commands:")
	// Names, descriptions and paths are the workspace's text: shown, with
	// their control characters, never obeyed.
	for _, c := range cmds {
		switch {
		case c.Error != "":
			fmt.Fprintf(w, "  /%-24s broken: %s (%s)\n", visible(c.Name), visible(c.Error), visible(c.Path))
		case c.Shadowed:
			fmt.Fprintf(w, "  /%-24s not used: the user's command of that name wins (%s)\n", visible(c.Name), visible(c.Path))
		default:
			fmt.Fprintf(w, "  %-25s %s (%s)\n", visible(c.Usage()), visible(c.Description), c.Source)
		}
	}
}
