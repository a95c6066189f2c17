package policy

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentd/agentd/tools"
)

// A line that is git alone, with subcommands git carries out itself, may
// write the repository (Confine.Git) and runs with git's safe settings;
// anything else in the line, an option that runs a program or writes a
// file git's caller names, a global option that moves git's directories,
// an environment or a word not known before the line runs makes it an
// ordinary command, for which the git directory is read-only.
func TestGitOnly(t *testing.T) {
	env := newEnv(t)
	p, _ := newPolicy(t, env, tools.ModeFullAuto)
	for _, line := range []string{
		"git add -A && git commit -m 'the change'",
		"git add a.go b.go; git commit -qm x && git log --oneline -1",
		"git checkout -b topic && git stash && git stash pop",
		"git -C sub commit --allow-empty -m x",
		"cd sub && git add . && git commit -m x",
		"git merge --no-edit topic",
		"git rebase main",
		"git tag v1.0 && git branch -d old",
		"git restore --staged a.go && git reset --hard HEAD~1",
		"git --no-pager log -1 && git cherry-pick abc123",
	} {
		cls := p.Classify(&tools.Command{Line: line, Cwd: "."})
		assert.True(t, cls.Git, "%s: %+v", line, cls)
		assert.True(t, strings.HasPrefix(cls.Exec, "export GIT_CONFIG_COUNT="), "%s runs with git's safe settings: %q", line, cls.Exec)
		d := p.Decide("s", "", cmdCall(line))
		assert.True(t, d.Confine.Git, "%s: %+v", line, d)
	}
	for _, line := range []string{
		"git add -A && make",                       // another program
		"git commit -m x > out.txt",                // a redirect
		"git -c core.hooksPath=x commit -m x",      // configuration on the command line
		"git --git-dir=/tmp/x commit -m x",         // another git directory
		"git --work-tree=.git checkout HEAD -- x",  // the worktree moved into .git
		"git diff --output=.git/commondir",         // a file git writes where it is told
		"git format-patch -o .git HEAD~1",          // not a subcommand of the list
		"git merge -s ours topic",                  // a strategy is a program in PATH
		"git rebase --exec 'touch x' main",         // runs a program
		"git rebase -x 'touch x' main",             // the same
		"GIT_DIR=/tmp/x git commit -m x",           // environment
		"git add $FILES",                           // not known before it runs
		"git add *.go",                             // file names as arguments
		"git config core.fsmonitor x",              // not a subcommand of the list
		"git worktree add ../x",                    // the same
		"git init sub",                             // the same
		"git submodule update --init",              // the same
		"./git commit -m x",                        // not git by its name
		"git commit -m \"$(cat msg)\"",             // a substitution
		"git fetch --upload-pack='touch x' origin", // runs a program
		"git commit -m x && bash -c 'git commit'",  // another program
	} {
		cls := p.Classify(&tools.Command{Line: line, Cwd: "."})
		assert.False(t, cls.Git, "%s", line)
		assert.False(t, p.Decide("s", "", cmdCall(line)).Confine.Git, "%s", line)
	}
	// Fetching keeps the protocols git allows; the rest of the settings hold.
	fetch := p.Classify(&tools.Command{Line: "git pull --ff-only", Cwd: "."})
	assert.True(t, fetch.Git)
	assert.NotContains(t, fetch.Exec, "protocol.allow")
	assert.Contains(t, fetch.Exec, "core.hooksPath")
	// Read-only mode runs nothing that writes.
	ro, _ := newPolicy(t, env, tools.ModeReadOnly)
	assert.False(t, ro.Decide("s", "", cmdCall("git status")).Confine.Git, "the read profile has nothing to write")
}
