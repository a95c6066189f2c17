package agent

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A long output keeps its start and its end at line boundaries and says
// how much of the middle is gone; a short one is untouched.
func TestBoundFull(t *testing.T) {
	assert.Equal(t, "ok\n", boundFull("ok\n"))
	var b strings.Builder
	for i := 0; b.Len() < 3*maxFullOutput; i++ {
		b.WriteString(strings.Repeat("x", 99) + "\n")
	}
	b.WriteString("FAIL the-end\n")
	long := b.String()
	got := boundFull(long)
	assert.LessOrEqual(t, len(got), maxFullOutput+100)
	assert.True(t, strings.HasPrefix(got, strings.Repeat("x", 99)+"\n"))
	assert.True(t, strings.HasSuffix(got, "FAIL the-end\n"))
	head, rest, ok := strings.Cut(got, "[… ")
	assert.True(t, ok)
	assert.True(t, strings.HasSuffix(head, "\n"), "cut at a line boundary")
	note, tail, _ := strings.Cut(rest, "\n")
	assert.Equal(t, fmt.Sprintf("%d bytes of output not shown …]", len(long)-len(head)-len(tail)), note)
	for _, l := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
		assert.True(t, l == strings.Repeat("x", 99) || l == "FAIL the-end" || strings.HasPrefix(l, "[… "), "a whole line: %.20q", l)
	}
}
