package mcptest

import (
	"os"
	"testing"
)

// TestNPMPackages installs the published packages into the test cache
// (.ci/test runs it first, with AGENTD_TEST_REQUIRE_NPM=1, so that a
// machine that cannot install them fails instead of skipping their tests).
func TestNPMPackages(t *testing.T) {
	for _, p := range []string{EverythingScript(t), InspectorCLI(t)} {
		if _, err := os.Stat(p); err != nil {
			t.Fatal(err)
		}
	}
	if !installed(NPM(t)) {
		t.Fatal("the packages are not at their versions")
	}
}
