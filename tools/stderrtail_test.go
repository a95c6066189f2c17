package tools

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A server's stderr is kept to its last bytes, and its end is quoted on one
// line with how the server ended.
func TestStderrTail(t *testing.T) {
	tail := &Tail{Max: 16}
	for i := range 5 {
		fmt.Fprintf(tail, "line %d\n", i)
	}
	assert.Equal(t, "2\nline 3\nline 4\n", tail.String())

	assert.Equal(t, "exited with status 2: line 3 | line 4", ExitText(2, tail.String(), 2))
	assert.Equal(t, "was killed by signal 9", ExitText(137, " \n", 3))
	assert.Equal(t, "exited with status 0", ExitText(0, "", 3))
}
