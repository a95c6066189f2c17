package tools

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// Globs from the model (glob_file_search, grep's glob) and rules files are
// bounded: {a,b} thirty times over expanded to a billion patterns, and
// **/ twenty times over took exponential time per file.
func TestGlobsAreBounded(t *testing.T) {
	t0 := time.Now()
	assert.False(t, matchGlob(strings.Repeat("**/", 40)+"x", strings.Repeat("d/", 30)+"y"))
	assert.True(t, matchGlob(strings.Repeat("**/", 40)+"x", strings.Repeat("d/", 30)+"x"))
	assert.True(t, matchGlob("src/**/*_test.{go,ts}", "src/a/b/c_test.ts"))
	assert.False(t, matchGlob("src/**/*_test.{go,ts}", "src/a/b/c.ts"))
	assert.Less(t, time.Since(t0), 2*time.Second)

	huge := strings.Repeat("{a,b}", 30) + "x"
	assert.ErrorContains(t, checkGlob(huge), "more than 256")
	assert.NoError(t, checkGlob("*.{go,ts,tsx,js}"))
	t0 = time.Now()
	assert.False(t, matchGlob(huge, "nomatch"))
	assert.Less(t, time.Since(t0), time.Second)
}
