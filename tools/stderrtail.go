package tools

import (
	"fmt"
	"strings"
	"sync"
)

// The servers agentd keeps running beside a session (language servers in
// tools/lsp, MCP servers in tools/mcp) say why they fail on stderr; these
// keep its end and put it in the words the user and the model read.

// Tail keeps the last Max bytes written to it: a server's stderr.
type Tail struct {
	Max int

	mu  sync.Mutex
	buf []byte
}

func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.Max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// ExitText says how a server ended from its Proc.ExitCode (128+n: killed
// by signal n), with the last lines of its stderr on one line.
func ExitText(exit int, stderr string, lines int) string {
	msg := fmt.Sprintf("exited with status %d", exit)
	if exit > 128 && exit < 160 {
		msg = fmt.Sprintf("was killed by signal %d", exit-128)
	}
	if t := strings.TrimSpace(stderr); t != "" {
		msg += ": " + lastLines(t, lines)
	}
	return msg
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
