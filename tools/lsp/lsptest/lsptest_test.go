package lsptest

import (
	"os"
	"path/filepath"
	"testing"
)

// TestServers installs the servers into the test cache (.ci/test runs it
// first, with AGENTD_TEST_REQUIRE_LSP=1, so that a machine that cannot
// install them fails instead of skipping their tests).
func TestServers(t *testing.T) {
	s := Install(t)
	for _, p := range []string{s.GoplsPath(), s.TSServerPath(), s.PyrightPath(), filepath.Join(s.NodeBin, "tsserver")} {
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
	}
}
