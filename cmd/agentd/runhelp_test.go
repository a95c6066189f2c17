package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// agentd run /help lists the custom commands without a model: runnable
// ones as they are typed, broken ones with why.
func TestRunHelpListsCustomCommands(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, ".agentd", "commands")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "review.md"),
		[]byte("---\ndescription: Review a file for bugs\nargument-hint: <file>\n---\nReview $ARGUMENTS.\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.md"), []byte("---\nno end"), 0o644))
	t.Setenv("AGENTD_STATE_DIR", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	for _, k := range []string{"OPENAI_BASE_URL", "OPENAI_API_KEY", "AGENTD_MODEL"} {
		t.Setenv(k, "")
	}
	var out, errOut bytes.Buffer
	code := run([]string{"run", "/help", "--dir", root}, strings.NewReader(""), &out, &errOut)
	assert.Equal(t, 0, code, errOut.String())
	assert.Contains(t, out.String(), "/review <file>")
	assert.Contains(t, out.String(), "Review a file for bugs (workspace)")
	assert.Regexp(t, `/bad +broken: `, out.String())
}
