package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRulesGlobsAreBounded: a rules file's pattern with more {a,b}
// alternatives than a glob may have is refused when the file loads
// (tools.CheckGlob), not expanded to a billion patterns per call.
func TestRulesGlobsAreBounded(t *testing.T) {
	huge := strings.Repeat("{a,b}", 30) + "x"
	rules := filepath.Join(t.TempDir(), "rules.json")
	require.NoError(t, os.WriteFile(rules, []byte(`{"rules":[{"tool":"write","pattern":"`+huge+`","action":"deny"}]}`), 0o600))
	_, err := loadRules(rules, ScopeUser)
	assert.ErrorContains(t, err, "rule 1: the pattern")
}
