package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Refusal is a right the kernel sandbox did not give a process that it
// seems to have needed, read back from what the process printed when it
// failed: Right is "read" (and execute), "write" or "network"; Path is
// empty for the network.
type Refusal struct {
	Path  string `json:"path,omitempty"`
	Right string `json:"right"`
}

// Refused lists what the sandbox refused the process, judging by output
// (its standard error): the paths it names, or that are its arguments,
// that exist but it could not read (or write), and the network. Call it
// after Wait, for a process that failed.
func (p *Proc) Refused(output string) []Refusal {
	var out []Refusal
	for _, r := range p.c.Refused(output) {
		out = append(out, Refusal{Path: r.Path, Right: r.Right})
	}
	return out
}

// RefusalHint says, for a process the user configured (an MCP server, a
// hook), what the sandbox refused and which setting of entry grants it:
// "read" or "write" (a directory rather than one file of it, which rarely
// goes alone), "network", or "sandbox": "full". entry names the
// configuration, e.g. `mcpServers "docs" in ~/.config/agentd/config.json`.
// "" when nothing was refused.
func RefusalHint(refs []Refusal, entry string) string {
	if len(refs) == 0 {
		return ""
	}
	var parts []string
	for _, r := range refs {
		switch r.Right {
		case "network":
			parts = append(parts, `it had no network: set "network": true`)
		case "read":
			grant := r.Path
			if fi, err := os.Stat(r.Path); err == nil && !fi.IsDir() {
				grant = filepath.Dir(r.Path)
			}
			parts = append(parts, fmt.Sprintf("it could not read %s: add %q to \"read\"", r.Path, grant))
		case "write":
			parts = append(parts, fmt.Sprintf("it could not write %s: add %q to \"write\"", r.Path, r.Path))
		}
	}
	return "the kernel sandbox refused it: " + strings.Join(parts, "; ") + " in " + entry +
		` (or "sandbox": "full" to run it unconfined)`
}
