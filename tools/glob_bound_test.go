package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

	rules := filepath.Join(t.TempDir(), "rules.json")
	require.NoError(t, os.WriteFile(rules, []byte(`{"rules":[{"tool":"write","pattern":"`+huge+`","action":"deny"}]}`), 0o600))
	_, err := loadRules(rules, ScopeUser)
	assert.ErrorContains(t, err, "rule 1: the pattern")
}
