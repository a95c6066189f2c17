package tools

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

// A very long line is cut at a character boundary, and says how much is
// left and which bytes to ask for next.
func TestTruncateLine(t *testing.T) {
	short := strings.Repeat("a", maxLineChars)
	assert.Equal(t, short, truncateLine(short))

	long := strings.Repeat("é", 3000) // 6000 bytes
	got := truncateLine(long)
	head, note, ok := strings.Cut(got, "… [")
	assert.True(t, ok)
	assert.True(t, utf8.ValidString(head), "cut inside a character")
	assert.Equal(t, maxLineChars, len(head))
	assert.Equal(t, "4000 more bytes of this line; `cut -b 2001-4000` on the line shows the next ones]", note)

	odd := "x" + long // the boundary falls inside a character
	head, _, _ = strings.Cut(truncateLine(odd), "… [")
	assert.True(t, utf8.ValidString(head))
	assert.Equal(t, maxLineChars-1, len(head))
}
