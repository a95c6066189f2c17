package rpctest

import (
	"bytes"
	"os"
	"sync"
)

// Terminal is a pseudo-terminal a daemon has as its controlling terminal:
// the test reads what reaches the screen and what waits in its input.
type Terminal struct {
	leader, follower *os.File
	mu               sync.Mutex
	screen           bytes.Buffer
}

// Screen is everything written to the terminal so far (the echo of typed
// input included).
func (t *Terminal) Screen() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.screen.String()
}
