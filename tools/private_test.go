package tools

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// homeWorkspace is a workspace that is the user's home directory, holding
// agentd's configuration, another project's state and its caches, each
// with a line the model must never read.
func homeWorkspace(t *testing.T) *Env {
	env := newEnv(t)
	t.Setenv("HOME", env.Root)
	for _, v := range []string{"XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "AGENTD_STATE_DIR"} {
		t.Setenv(v, "")
	}
	writeFile(t, env, ".config/agentd/rules.json", `{"rules":[]} PRIVATE-RULES`+"\n")
	writeFile(t, env, ".config/agentd/config.json", `{"model":"m"} PRIVATE-CONFIG`+"\n")
	writeFile(t, env, ".local/state/agentd/0123456789abcdef/runs/r1/events.jsonl", `{"text":"PRIVATE-TRANSCRIPT"}`+"\n")
	writeFile(t, env, ".local/state/agentd/0123456789abcdef/audit.jsonl", `PRIVATE-AUDIT`+"\n")
	writeFile(t, env, ".cache/agentd/fedcba9876543210/index.txt", "PRIVATE-INDEX\n")
	writeFile(t, env, ".gitignore", "!.cache/\n") // the walk must not depend on ignore rules
	writeFile(t, env, "project/main.go", "package main // PRIVATE? no: the project's own\n")
	env.StateDir = filepath.Join(env.Root, ".local/state/agentd/0123456789abcdef")
	env.Private = AgentDirs(env.StateDir)
	return env
}

// TestAgentDirsAreNeverTouched is issue 24's hole: in a workspace that is
// the home directory, no file tool reads or writes agentd's own state,
// configuration or caches (write_file of rules.json granted every command
// to the next daemon; a read showed another project's transcript), and
// list_dir, glob_file_search and grep (rg and the built-in search) never
// show them.
func TestAgentDirsAreNeverTouched(t *testing.T) {
	env := homeWorkspace(t)
	for _, d := range []string{".local/state/agentd", ".cache/agentd", ".config/agentd"} {
		require.Contains(t, env.Private, filepath.Join(env.Root, d))
	}
	for _, path := range []string{".config/agentd/rules.json", ".config/agentd/config.json",
		".local/state/agentd/0123456789abcdef/runs/r1/events.jsonl", ".local/state/agentd/0123456789abcdef/audit.jsonl",
		".cache/agentd/fedcba9876543210/index.txt", ".config/agentd/new.json", ".local/state/agentd"} {
		r := mustErr(t, call(t, env, ReadFileToolName, ReadFileParams{Path: path}))
		assert.Contains(t, r.Output, "agentd's own state and configuration", path)
		_, refusal := prepare(t, env, WriteFileToolName, WriteFileParams{Path: path, Content: `{"rules":[{"tool":"*","action":"allow"}]}`})
		require.NotNil(t, refusal, path)
		_, refusal = prepare(t, env, EditFileToolName, EditFileParams{Path: path, OldString: "PRIVATE", NewString: "x"})
		require.NotNil(t, refusal, path)
		added, dir := path+".new", filepath.Dir(path)
		if !strings.Contains(filepath.Base(path), ".") { // a directory
			added, dir = path+"/added.txt", path
		}
		_, refusal = prepare(t, env, ApplyPatchToolName, ApplyPatchParams{Patch: "*** Begin Patch\n*** Add File: " + added + "\n+x\n*** End Patch"})
		require.NotNil(t, refusal, path)
		mustErr(t, call(t, env, ListDirToolName, ListDirParams{Path: path}))
		mustErr(t, call(t, env, GrepToolName, GrepParams{Pattern: "PRIVATE", Path: path}))
		mustErr(t, call(t, env, RunCmdToolName, RunCmdParams{Command: "ls", Cwd: dir}))
	}
	// Through a link of the workspace, too.
	require.NoError(t, os.Symlink(filepath.Join(env.Root, ".config/agentd"), filepath.Join(env.Root, "project/cfg")))
	mustErr(t, call(t, env, ReadFileToolName, ReadFileParams{Path: "project/cfg/rules.json"}))

	// The walks skip them: the project's files show, agentd's never.
	ls := mustOK(t, call(t, env, ListDirToolName, ListDirParams{Depth: 5}))
	assert.Contains(t, ls.Output, "main.go")
	glob := mustOK(t, call(t, env, GlobFileSearchToolName, GlobFileSearchParams{Pattern: "**/*.json*"}))
	grep := mustOK(t, call(t, env, GrepToolName, GrepParams{Pattern: "PRIVATE"}))
	assert.Contains(t, grep.Output, "project/main.go")
	for _, out := range []string{ls.Output, glob.Output, grep.Output} {
		for _, leak := range []string{"agentd/", "rules.json", "events.jsonl", "audit.jsonl", "index.txt", "PRIVATE-"} {
			assert.NotContains(t, out, leak)
		}
	}
	fallback := grepGo(t.Context(), env.Root, env.Root, env.hiddenIn(env.Root), regexp.MustCompile("PRIVATE"), "")
	assert.Contains(t, fallback.Output, "project/main.go")
	assert.NotContains(t, fallback.Output, "PRIVATE-")
	if _, err := exec.LookPath("rg"); err != nil {
		t.Log("rg is not installed: grep used the built-in search above")
	}
	b, err := os.ReadFile(filepath.Join(env.Root, ".config/agentd/rules.json"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(b), `{"rules":[]}`), "rules.json unchanged")
}

// TestAgentDirs: the one list follows the settings agentd's own paths
// come from.
func TestAgentDirs(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, v := range []string{"XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "AGENTD_STATE_DIR"} {
		t.Setenv(v, "")
	}
	assert.Equal(t, []string{filepath.Join(home, ".local/state/agentd"), filepath.Join(home, ".cache/agentd"),
		filepath.Join(home, ".config/agentd")}, AgentDirs())
	t.Setenv("AGENTD_STATE_DIR", "/srv/agentd-state")
	t.Setenv("XDG_CONFIG_HOME", "/etc/xdg-config")
	dirs := AgentDirs("/elsewhere/state", "relative/ignored", "")
	assert.Contains(t, dirs, "/srv/agentd-state")
	assert.Contains(t, dirs, "/etc/xdg-config/agentd")
	assert.Contains(t, dirs, "/elsewhere/state")
	assert.Len(t, dirs, 5)
}

// TestAgentDirHoldingTheWorkspace: a workspace opened inside one of
// agentd's directories (its configuration, opened to edit it) is the
// user's project: the tools work there, and still keep out of the other
// directories of the list.
func TestAgentDirHoldingTheWorkspace(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env, "config.json", "{}\n")
	writeFile(t, env, "state/audit.jsonl", "{}\n")
	env.Private = AgentDirs(filepath.Dir(env.Root), filepath.Join(env.Root, "state"))
	mustOK(t, call(t, env, ReadFileToolName, ReadFileParams{Path: "config.json"}))
	mustErr(t, call(t, env, ReadFileToolName, ReadFileParams{Path: "state/audit.jsonl"}))
}
