package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

func byName(cmds []Command) map[string][]Command {
	out := map[string][]Command{}
	for _, c := range cmds {
		out[c.Name] = append(out[c.Name], c)
	}
	return out
}

func TestLoadCommands(t *testing.T) {
	root, user := t.TempDir(), t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret.md")
	require.NoError(t, os.WriteFile(outside, []byte("the user's secret"), 0o600))
	writeFiles(t, filepath.Join(root, ".agentd", "commands"), map[string]string{
		"review.md":         "---\ndescription: Review the diff\nargument-hint: \"[files]\"\n---\nReview $ARGUMENTS carefully.\n",
		"git/commit.md":     "# Write a commit message\n\nFor the staged changes.",
		"deploy.md":         "Deploy from the workspace.",
		"broken.md":         "---\ndescription: never closed\nReview it.",
		"empty.md":          "---\ndescription: nothing below\n---\n\n",
		"bad name!.md":      "A name with a bang.",
		"notes.txt":         "not a command",
		".hidden/x.md":      "hidden directory",
		"a/b/c/d/e/deep.md": "too deep",
		"folded.md":         "---\ndescription: >\n  Folded over\n  two lines\nallowed-tools: Bash(rm:*)\nmodel: opus\n---\nBody.",
		"crlf.md":           "---\r\ndescription: Windows lines\r\n---\r\nBody.\r\n",
		"huge.md":           strings.Repeat("x", maxCommandFile+1),
		"latin1.md":         "caf\xe9",
	})
	require.NoError(t, os.Symlink(outside, filepath.Join(root, ".agentd", "commands", "escape.md")))
	writeFiles(t, filepath.Join(user, "commands"), map[string]string{
		"deploy.md": "---\ndescription: My deploy\n---\nDeploy my way.",
		"mine.md":   "Mine: $1 then $2.",
	})

	cmds := LoadCommands(root, user)
	got := byName(cmds)
	for i := 1; i < len(cmds); i++ {
		assert.LessOrEqual(t, cmds[i-1].Name, cmds[i].Name, "sorted by name")
	}

	review := got["review"][0]
	assert.Equal(t, "Review the diff", review.Description)
	assert.Equal(t, "[files]", review.ArgumentHint)
	assert.Equal(t, CommandsOfWorkspace, review.Source)
	assert.Equal(t, filepath.Join(root, ".agentd", "commands", "review.md"), review.Path)
	assert.True(t, review.Runnable())
	assert.Equal(t, "/review [files]", review.Usage())

	commit := got["git:commit"][0]
	assert.Equal(t, "Write a commit message", commit.Description, "the first line, when there is no description")

	require.Len(t, got["deploy"], 2)
	assert.Equal(t, CommandsOfUser, got["deploy"][0].Source, "the user's command comes first and wins")
	assert.False(t, got["deploy"][0].Shadowed)
	assert.True(t, got["deploy"][1].Shadowed)
	assert.False(t, got["deploy"][1].Runnable())

	assert.Contains(t, got["broken"][0].Error, "no closing ---")
	assert.Contains(t, got["empty"][0].Error, "empty")
	assert.Contains(t, got["bad name!"][0].Error, "not a command name")
	assert.Contains(t, got["huge"][0].Error, "too large")
	assert.Contains(t, got["latin1"][0].Error, "UTF-8")
	assert.Contains(t, got["escape"][0].Error, "cannot be read", "a link out of the workspace's directory is not followed")
	assert.NotContains(t, got["escape"][0].body, "secret")
	assert.Equal(t, "Folded over two lines", got["folded"][0].Description)
	assert.Equal(t, "Body.", got["folded"][0].body, "allowed-tools and model are read and ignored")
	assert.Equal(t, "Windows lines", got["crlf"][0].Description)
	for _, absent := range []string{"notes", ".hidden:x", "a:b:c:d:e:deep"} {
		assert.NotContains(t, got, absent)
	}
	assert.Empty(t, LoadCommands(filepath.Join(root, "missing"), ""), "no directories, no commands")
}

func TestCommandExpand(t *testing.T) {
	c := Command{body: "Fix $1 in $2. All: $ARGUMENTS. Missing: [$3]."}
	assert.Equal(t, `Fix the login bug in auth.go. All: "the login bug" auth.go. Missing: [].`, c.Expand(`"the login bug" auth.go`))
	c = Command{body: "Review $ARGUMENTS"}
	assert.Equal(t, "Review $1 and $ARGUMENTS", c.Expand("$1 and $ARGUMENTS"), "arguments are not expanded again")
	c = Command{body: "Summarize the repository."}
	assert.Equal(t, "Summarize the repository.", c.Expand(""))
	assert.Equal(t, "Summarize the repository.\n\nArguments: briefly", c.Expand("briefly"), "arguments are never lost")
}

func TestSlashName(t *testing.T) {
	for prompt, want := range map[string][2]string{
		"/review":              {"review", ""},
		"  /review a.go b.go ": {"review", "a.go b.go"},
		"/git:commit\nmore":    {"git:commit", "more"},
		"/usr/lib is missing":  {"usr/lib", "is missing"},
	} {
		name, args, ok := slashName(prompt)
		assert.True(t, ok, prompt)
		assert.Equal(t, want, [2]string{name, args}, prompt)
	}
	for _, prompt := range []string{"review this", "/", "/ x", "a /review"} {
		_, _, ok := slashName(prompt)
		assert.False(t, ok, prompt)
	}
}

func TestExpandPrompt(t *testing.T) {
	root, user := t.TempDir(), t.TempDir()
	writeFiles(t, filepath.Join(root, ".agentd", "commands"), map[string]string{
		"review.md": "Review $ARGUMENTS.",
		"broken.md": "---\nnot closed",
	})
	a := &Agent{cfg: Config{Root: root, UserConfigDir: user}}
	got, err := a.expandPrompt("/review cart.go")
	require.NoError(t, err)
	assert.Equal(t, "Review cart.go.", got)
	got, err = a.expandPrompt("/usr/lib is missing, why?")
	require.NoError(t, err)
	assert.Equal(t, "/usr/lib is missing, why?", got, "a slash that names no command is the prompt")
	_, err = a.expandPrompt("/broken now")
	require.ErrorIs(t, err, ErrInvalid)
	assert.Contains(t, err.Error(), "no closing ---")
	assert.Contains(t, err.Error(), "broken.md")
}
