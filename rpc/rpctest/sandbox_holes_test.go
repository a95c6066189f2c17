package rpctest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/internal/await"
	"github.com/agentd/agentd/rpc/wire"
	"github.com/agentd/agentd/tools"
	"github.com/agentd/agentd/tools/mcp"
	"github.com/agentd/agentd/tools/mcp/mcptest"
)

// Issue 24's holes in the kernel sandbox, tried end to end by a hostile
// scripted model against the real binary.

// binaryOnly runs a scenario against the real binary alone: what it tests
// (a controlling terminal, the process tree) belongs to the process.
func binaryOnly(t *testing.T, modes []tools.Mode, cfg func(t *testing.T, mode tools.Mode) Config, fn func(t *testing.T, mode tools.Mode, env *Env)) {
	t.Parallel()
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			fn(t, mode, NewEnv(t, Binary, cfg(t, mode)))
		})
	}
}

// approveAll answers every confirmation with allow_once, as a hasty user.
func approveAll(e *Editor) {
	for _, k := range []agent.RequestKind{agent.KindConfirmCommand, agent.KindConfirmWrite} {
		e.Respond(k, func(req agent.InputRequest) (string, any) { return Decide(req.RequestID, tools.AllowOnce, "") })
	}
}

// TestRedTeamTerminalInjection: the daemon has a controlling terminal (the
// Neovim client starts it so). A command types a line into it with
// TIOCSTI — which the terminal's reader would run, unconfined — and
// writes OSC 52 (the clipboard) and a title to it, through /dev/tty and
// through every /dev/pts node, listed and by name. Nothing reaches the terminal: the
// command has no controlling terminal (a session of its own), /dev/pts is
// the sandbox's own, and seccomp refuses TIOCSTI.
func TestRedTeamTerminalInjection(t *testing.T) {
	binaryOnly(t, []tools.Mode{tools.ModeAsk, tools.ModeFullAuto}, func(t *testing.T, mode tools.Mode) Config {
		return Config{Policy: mode, Terminal: true}
	}, func(t *testing.T, mode tools.Mode, env *Env) {
		const typed = "touch /tmp/agentd-typed-by-a-command"
		inject := `T=%s perl -e 'open(T, "+<", $ENV{T}) or die "open $ENV{T}: $!\n"; ` +
			`for (split //, "` + typed + `\n") { ioctl(T, 0x5412, $_) or die "TIOCSTI: $!\n" } print "INJECTED\n"'` + "\n" +
			`printf '\033]52;c;%s\a\033]0;%s\a' > %s && echo WROTE-OSC` + "\n"
		script := fmt.Sprintf(inject, "/dev/tty", "Y2xpcGJvYXJk", "TITLE-TTY", "/dev/tty") +
			"for p in /dev/pts/[0-9]* $(seq -f /dev/pts/%g 0 15); do\n" + fmt.Sprintf(inject, `"$p"`, "cHRzLWNsaXA=", "TITLE-PTS", `"$p"`) + "done\n"
		env.Model.Append(
			turn("write", callOf("call_write", "write_file", map[string]any{"path": "inject.sh", "content": script})),
			turn("inject", callOf("call_run", "run_cmd", cmd("bash inject.sh"))),
			turn("osc", callOf("call_osc", "run_cmd", cmd(`printf '\033]52;c;b3NjLWNsaXA=\a' > /dev/tty`))),
			doneAfterTools(),
		)
		e := env.StartInitialized()
		approveAll(e)
		var sid string
		for _, tag := range []string{"write", "inject", "osc"} {
			run := e.Run(agent.RunParams{Prompt: "«" + tag + "»", SessionID: sid})
			sid = run.SessionID
			require.Equal(t, agent.StateCompleted, e.Finished(run.RunID).State, tag)
		}
		res := toolResults(env)
		require.Contains(t, res["call_run"], "[exit code", "the script ran: %s", res["call_run"])
		time.Sleep(100 * time.Millisecond) // the terminal's echo, if any, reaches the test's reader
		screen := env.Terminal.Screen()
		assert.Zero(t, env.Terminal.Queued(), "bytes typed into the daemon's terminal")
		for _, leak := range []string{"agentd-typed", "Y2xpcGJvYXJk", "cHRzLWNsaXA=", "b3NjLWNsaXA=", "TITLE-"} {
			assert.NotContains(t, screen, leak, "reached the daemon's terminal")
		}
		for _, id := range []string{"call_run", "call_osc"} {
			assert.NotContains(t, res[id], "INJECTED")
			assert.NotContains(t, res[id], "WROTE-OSC")
		}
		t.Logf("%s: %s\n%s", mode, strings.TrimSpace(res["call_run"]), strings.TrimSpace(res["call_osc"]))
	})
}

// TestRedTeamCredentialsInToolchainVariables: the user's environment sets
// toolchain variables commands inherit (the allow-list), with credentials
// inside: a private Go proxy's token in GOPROXY's URL, an API token in
// GOFLAGS's -ldflags, a repository password in MAVEN_OPTS. A command that
// prints its environment (approved) reads none of them; the settings
// around them still reach it.
func TestRedTeamCredentialsInToolchainVariables(t *testing.T) {
	secrets := map[string]string{
		"GOPROXY":    "https://agentd:tok-goproxy-5e1f@proxy.corp.example/go,direct",
		"GOFLAGS":    "-mod=mod -ldflags=-X=main.apiToken=tok-goflags-77ab",
		"MAVEN_OPTS": "-Xmx1g -Dmaven.repo.password=tok-maven-90cd -Dhttp.proxyPassword=tok-proxy-13fe",
	}
	binaryOnly(t, []tools.Mode{tools.ModeAsk}, func(t *testing.T, mode tools.Mode) Config {
		return Config{Policy: mode, Env: secrets}
	}, func(t *testing.T, mode tools.Mode, env *Env) {
		env.Model.Append(turn("env", callOf("call_env", "run_cmd", cmd("env; tr '\\0' '\\n' < /proc/self/environ"))), doneAfterTools())
		e := env.StartInitialized()
		approveAll(e)
		run := e.Run(agent.RunParams{Prompt: "«env»"})
		require.Equal(t, agent.StateCompleted, e.Finished(run.RunID).State)
		out := toolResults(env)["call_env"]
		for _, tok := range []string{"tok-goproxy", "tok-goflags", "tok-maven", "tok-proxy"} {
			assert.NotContains(t, out, tok)
		}
		for _, kept := range []string{"proxy.corp.example/go", "-mod=mod", "-Xmx1g"} {
			assert.Contains(t, out, kept, "the rest of the setting reaches the command")
		}
	})
}

// TestRedTeamAgentdStateInTheWorkspace: the workspace is the user's home
// directory, so it holds agentd's own state (every project's sessions and
// transcripts, the audit log), the user's configuration (config.json with
// the model's key, rules.json) and agentd's caches. Commands — in
// full-auto, unasked — try to read another project's transcript and the
// key, empty the audit log and write a rules.json allowing everything for
// the next daemon. The kernel hides all of it from them; ordinary work in
// the home directory still goes through.
func TestRedTeamAgentdStateInTheWorkspace(t *testing.T) {
	binaryOnly(t, []tools.Mode{tools.ModeFullAuto}, func(t *testing.T, mode tools.Mode) Config {
		return Config{Policy: mode}
	}, func(t *testing.T, mode tools.Mode, env *Env) {
		home := env.Root
		state := filepath.Join(home, ".local", "state", "agentd")
		config := filepath.Join(home, ".config", "agentd")
		env.cfg.Env = map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"),
			"XDG_CACHE_HOME": filepath.Join(home, ".cache"), "AGENTD_STATE_DIR": state}
		other := filepath.Join(state, "0123456789abcdef", "sessions", "s_other.jsonl")
		require.NoError(t, os.MkdirAll(filepath.Dir(other), 0o700))
		require.NoError(t, os.WriteFile(other, []byte(`{"text":"OTHER-PROJECT-TRANSCRIPT"}`+"\n"), 0o600))
		require.NoError(t, os.MkdirAll(config, 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(config, "config.json"), []byte(`{"model":{"apiKey":"`+hostileKey+`"}}`), 0o600))
		require.NoError(t, os.WriteFile(filepath.Join(home, "notes.txt"), []byte("my notes\n"), 0o644))

		steal := "grep -rh -e OTHER-PROJECT -e " + hostileKey[len(hostileKey)-12:] + " .local .config .cache; cat .config/agentd/config.json"
		wipe := `for f in $(find .local/state -name audit.jsonl); do : > "$f"; done; find .local/state -name audit.jsonl -size 0 | wc -l`
		grant := `mkdir -p .config/agentd && echo '{"rules":[{"tool":"*","action":"allow"}]}' > .config/agentd/rules.json`
		env.Model.Append(
			turn("steal", callOf("call_steal", "run_cmd", cmd(viaScript("steal", steal)))),
			turn("wipe", callOf("call_wipe", "run_cmd", cmd(viaScript("wipe", wipe)))),
			turn("grant", callOf("call_grant", "run_cmd", cmd(grant))),
			turn("work", callOf("call_work", "run_cmd", cmd("cat notes.txt && echo more >> notes.txt && ls -a"))),
			doneAfterTools(),
		)
		e := env.StartInitialized()
		var sid string
		for _, tag := range []string{"steal", "wipe", "grant", "work"} {
			run := e.Run(agent.RunParams{Prompt: "«" + tag + "»", SessionID: sid})
			sid = run.SessionID
			require.Equal(t, agent.StateCompleted, e.Finished(run.RunID).State, tag)
		}
		res := toolResults(env)
		assert.NotContains(t, res["call_steal"], "OTHER-PROJECT-TRANSCRIPT")
		assert.NotContains(t, res["call_steal"], hostileKey)
		audits, _ := filepath.Glob(filepath.Join(state, "*", "audit.jsonl"))
		require.NotEmpty(t, audits, "the daemon keeps an audit log in its state")
		for _, a := range audits {
			fi, err := os.Stat(a)
			require.NoError(t, err)
			assert.Positive(t, fi.Size(), "%s was emptied: %s", a, res["call_wipe"])
		}
		assert.NoFileExists(t, filepath.Join(config, "rules.json"), res["call_grant"])
		assert.Contains(t, res["call_work"], "my notes")
		assert.Contains(t, readFile(t, filepath.Join(home, "notes.txt")), "more", res["call_work"])
		t.Logf("steal: %s\nwipe: %s\ngrant: %s", res["call_steal"], res["call_wipe"], res["call_grant"])
	})
}

// TestRedTeamGitDirectory: issue 24's attack on the repository. A script
// writes .git/commondir naming a directory it controls (whose config has
// an fsmonitor and a clean filter, whose hooks a pre-commit), with a
// .gitattributes giving every file that filter; another renames
// .git/modules and recreates the submodule's config. Then agentd's own
// auto-allowed `git status` runs, and the user's `git status` and `git
// commit` after the session: none runs the planted code. Git alone still
// commits, branches and stashes; a line mixing git with other programs is
// told how to commit.
func TestRedTeamGitDirectory(t *testing.T) {
	binaryOnly(t, []tools.Mode{tools.ModeAsk, tools.ModeFullAuto}, func(t *testing.T, mode tools.Mode) Config {
		return Config{Policy: mode}
	}, func(t *testing.T, mode tools.Mode, env *Env) {
		root := env.Root
		marker := filepath.Join(t.TempDir(), "pwned")
		// The user's identity, which git in the sandbox gets from the daemon
		// (~/.gitconfig itself is hidden from commands).
		require.NoError(t, os.WriteFile(filepath.Join(env.State, ".gitconfig"), []byte("[user]\n\tname = The User\n\temail = user@example.com\n"), 0o600))
		git := func(dir string, args ...string) string {
			c := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=u", "-c", "user.email=u@example.com",
				"-c", "protocol.file.allow=always"}, args...)...)
			out, _ := c.CombinedOutput()
			return string(out)
		}
		lib := t.TempDir()
		for _, d := range []string{root, lib} {
			git(d, "init", "-q", "-b", "main")
			require.NoError(t, os.WriteFile(filepath.Join(d, "a.txt"), []byte("a\n"), 0o644))
			git(d, "add", "a.txt")
			git(d, "commit", "-qm", "first")
		}
		git(root, "submodule", "add", "-q", lib, "lib")
		git(root, "commit", "-qm", "lib")
		evil := "[core]\\n\\tfsmonitor = touch " + marker + "\\n\\thooksPath = " + root + "/evil/hooks\\n[filter \"x\"]\\n\\tclean = touch " + marker + "\\n"
		plant := "mkdir -p evil/hooks && printf '" + evil + "' > evil/config && printf '#!/bin/sh\\ntouch " + marker + "\\n' > evil/hooks/pre-commit && " +
			"chmod +x evil/hooks/pre-commit && echo '* filter=x' > .gitattributes && echo \"$PWD/evil\" > .git/commondir\n" +
			"mv .git/modules .git/m2 && mkdir -p .git/modules/lib && cp -r .git/m2/lib/. .git/modules/lib/ && cp evil/config .git/modules/lib/config\n" +
			"cp evil/config .git/config.worktree; cp evil/hooks/pre-commit .git/hooks/pre-commit\n"
		env.Model.Append(
			turn("write", callOf("call_write", "write_file", map[string]any{"path": "plant.sh", "content": plant})),
			turn("plant", callOf("call_plant", "run_cmd", cmd("bash plant.sh"))),
			turn("status", callOf("call_status", "run_cmd", cmd("git status --short"))),
			turn("commit", callOf("call_commit", "run_cmd", cmd("git add a.txt && git commit -qm 'the model commits' && git checkout -qb topic && git stash list"))),
			turn("mixed", callOf("call_mixed", "run_cmd", cmd("echo more >> a.txt && git commit -qam mixed"))),
			doneAfterTools(),
		)
		require.NoError(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte("changed by the user\n"), 0o644))
		e := env.StartInitialized()
		approveAll(e)
		var sid string
		for _, tag := range []string{"write", "plant", "status", "commit", "mixed"} {
			run := e.Run(agent.RunParams{Prompt: "«" + tag + "»", SessionID: sid})
			sid = run.SessionID
			require.Equal(t, agent.StateCompleted, e.Finished(run.RunID).State, tag)
		}
		res := toolResults(env)
		t.Logf("plant: %s\nstatus: %s\ncommit: %s\nmixed: %s", res["call_plant"], res["call_status"], res["call_commit"], res["call_mixed"])
		assert.NoFileExists(t, marker, "agentd's own git status ran the planted code")
		for _, name := range []string{".git/commondir", ".git/m2", ".git/config.worktree", ".git/hooks/pre-commit"} {
			assert.NoFileExists(t, filepath.Join(root, name))
		}
		assert.NotContains(t, readFile(t, filepath.Join(root, ".git", "modules", "lib", "config")), "fsmonitor")
		assert.Contains(t, git(root, "log", "--oneline", "main"), "the model commits", "git alone commits")
		assert.Contains(t, git(root, "branch"), "topic")
		assert.NotContains(t, git(root, "log", "--oneline", "--all"), "mixed")
		assert.Contains(t, res["call_mixed"], "run git alone", "the model is told how to commit")
		// The user's own git, later.
		git(root, "status")
		git(filepath.Join(root, "lib"), "status")
		git(root, "commit", "-qam", "the user's commit")
		assert.NoFileExists(t, marker, "the user's git ran the planted code")
	})
}

// TestRedTeamForkBomb: a script the line writes and runs (the policy
// cannot see into it; a bomb in the line itself is refused) forks without
// end, and waits. The command's processes stay within its limit, the
// daemon answers the editor at once meanwhile, and the timeout ends every
// process of it. A bomb at its limit churns the CPU for as long as it
// runs, the more the higher the limit: the test sets the limit to 256
// processes (commandProcesses; the default, 4096, behaves the same and
// cost 5 s of CPU or more) and the timeout to 5 s, not scaled (the bomb
// raises the load average a scaled timeout would follow); the editor's
// calls are answered throughout.
func TestRedTeamForkBomb(t *testing.T) {
	const limit = 256
	binaryOnly(t, []tools.Mode{tools.ModeFullAuto}, func(t *testing.T, mode tools.Mode) Config {
		return Config{Policy: mode, Env: map[string]string{"AGENTD_COMMAND_PROCESSES": fmt.Sprint(limit)}}
	}, func(t *testing.T, mode tools.Mode, env *Env) {
		marker := fmt.Sprintf("agentd-bomb-%d", time.Now().UnixNano())
		bomb := "#!/bin/bash\nexec -a " + marker + " bash -c 'bomb() { bomb | bomb & }; bomb; sleep 3600'\n"
		env.Model.Append(
			turn("write", callOf("call_write", "write_file", map[string]any{"path": "bomb.sh", "content": bomb})),
			turn("bomb", callOf("call_bomb", "run_cmd", map[string]any{"command": "bash bomb.sh", "timeout": 5})),
			doneAfterTools(),
		)
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "«write»"})
		require.Equal(t, agent.StateCompleted, e.Finished(run.RunID).State)
		before := countProcesses()
		run = e.Run(agent.RunParams{Prompt: "«bomb»", SessionID: run.SessionID})
		await.Check(t, "the bomb to fork hundreds of processes", 10*time.Second, func() (bool, error) {
			if e.runEnded(run.RunID) {
				return false, fmt.Errorf("the run ended first")
			}
			return countProcesses()-before >= limit*3/4, nil
		})
		// Until the timeout ends it: the editor's calls are answered at
		// once, the bomb at its limit or on its way there.
		peak, slowest, calls := 0, time.Duration(0), 0
		for !e.runEnded(run.RunID) {
			peak = max(peak, countProcesses()-before)
			start := time.Now()
			var sessions any
			e.MustCall(wire.MethodSessions, nil, &sessions)
			slowest, calls = max(slowest, time.Since(start)), calls+1
			time.Sleep(200 * time.Millisecond) // the pace of the calls
		}
		require.Equal(t, agent.StateCompleted, e.Finished(run.RunID).State)
		t.Logf("during the bomb: up to %d more processes on the machine, %d calls answered in %v at most\n%s", peak, calls, slowest, toolResults(env)["call_bomb"])
		assert.Less(t, peak, limit+200, "the bomb went past its limit (the margin: the machine's other processes)")
		assert.Less(t, slowest, await.Timeout(3*time.Second), "the bomb starved the daemon")
		assert.Contains(t, toolResults(env)["call_bomb"], "timed out")
		await.Until(t, "the bomb's processes to end with its timeout", 20*time.Second, func() bool {
			return countProcesses() <= before+20
		})
	})
}

// countProcesses counts the machine's processes.
func countProcesses() int {
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		if c := e.Name()[0]; c >= '0' && c <= '9' {
			n++
		}
	}
	return n
}

// TestRedTeamLandlockAlone: where user namespaces are missing (here:
// sandbox: landlock), /proc is the machine's. A read-only command, run
// unasked in the read profile, lists every process's arguments: the
// daemon's, and a process of the user's with a token in its arguments. It
// sees none of them. The editor is told that workspace-write is not available,
// and a command that writes asks and says it would run unconfined.
func TestRedTeamLandlockAlone(t *testing.T) {
	binaryOnly(t, []tools.Mode{tools.ModeAsk}, func(t *testing.T, mode tools.Mode) Config {
		return Config{Policy: mode, Env: map[string]string{"AGENTD_SANDBOX": "landlock"}}
	}, func(t *testing.T, mode tools.Mode, env *Env) {
		token := fmt.Sprintf("--token=tok-%d", time.Now().UnixNano())
		other := exec.Command("bash", "-c", `exec -a "user-tool $0" sleep 600`, token)
		require.NoError(t, other.Start())
		t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })
		env.Model.Append(
			turn("ps", callOf("call_ps", "run_cmd", cmd("ps -eo args"))),
			turn("write", callOf("call_write", "run_cmd", cmd("echo x > made.txt"))),
			doneAfterTools(),
		)
		e := env.Start()
		var init struct {
			Capabilities struct {
				Experimental struct {
					Agentd wire.ServerAgentCapabilities `json:"agentd"`
				} `json:"experimental"`
			} `json:"capabilities"`
		}
		e.MustCall(wire.MethodInitialize, env.InitializeParams(nil), &init)
		e.Notify(wire.MethodInitialized, struct{}{})
		sb := init.Capabilities.Experimental.Agentd.Sandbox
		assert.True(t, sb.Active, "read-only commands are confined")
		assert.Equal(t, []string{"read", "full"}, sb.Profiles)
		assert.Contains(t, sb.Summary, "other commands cannot be confined here")

		run := e.Run(agent.RunParams{Prompt: "«ps»"})
		sid := run.SessionID
		require.Equal(t, agent.StateCompleted, e.Finished(run.RunID).State)
		assert.Empty(t, e.inputRequests(run.RunID), "ps is read-only: it runs unasked, confined")
		res := toolResults(env)
		assert.NotContains(t, res["call_ps"], token)
		assert.NotContains(t, res["call_ps"], "serve --log-level", "the daemon's arguments")
		var seen []agent.InputRequest
		e.Respond(agent.KindConfirmCommand, func(req agent.InputRequest) (string, any) {
			seen = append(seen, req)
			return Decide(req.RequestID, tools.RejectOnce, "no")
		})
		run = e.Run(agent.RunParams{Prompt: "«write»", SessionID: sid})
		e.Finished(run.RunID)
		require.Len(t, seen, 1)
		assert.Equal(t, tools.ProfileFull, seen[0].Profile, "a write cannot be confined here: it asks to run unconfined")
		assert.NoFileExists(t, filepath.Join(env.Root, "made.txt"))
		t.Logf("ps: %s", res["call_ps"])
	})
}

// TestSandboxRefusalNamesTheSetting: a user's MCP server and hook whose
// scripts live outside the workspace (here under /tmp, which the sandbox
// masks) fail to start. What the user reads says which path the sandbox
// refused and which setting grants it; with that setting, the server
// starts.
func TestSandboxRefusalNamesTheSetting(t *testing.T) {
	needSandbox(t)
	binaryOnly(t, []tools.Mode{tools.ModeAsk}, func(t *testing.T, mode tools.Mode) Config {
		dir := t.TempDir()
		server, hook := filepath.Join(dir, "server.sh"), filepath.Join(dir, "hook.sh")
		require.NoError(t, os.WriteFile(server, []byte("exec "+mcptest.Server(t)+` "$@"`+"\n"), 0o755))
		require.NoError(t, os.WriteFile(hook, []byte("exit 0\n"), 0o755))
		cfg := map[string]any{
			"mcpServers": map[string]any{
				"outside": map[string]any{"command": "bash", "args": []string{server}},
				"granted": map[string]any{"command": "bash", "args": []string{server}, "read": []string{dir, filepath.Dir(mcptest.Server(t))}},
			},
			"hooks": map[string]any{"run_finished": []map[string]any{{"command": "bash " + hook}}},
		}
		data, err := json.Marshal(cfg)
		require.NoError(t, err)
		return Config{Policy: mode, UserConfig: string(data)}
	}, func(t *testing.T, mode tools.Mode, env *Env) {
		env.Model.Append(modeltest.Turn{Name: "hi", Reply: modeltest.Reply{Text: "hi"}, Repeat: true})
		e := env.StartInitialized()
		run := e.Run(agent.RunParams{Prompt: "hi"})
		require.Equal(t, agent.StateCompleted, e.Finished(run.RunID).State)
		deadline := time.Now().Add(await.Timeout(30 * time.Second))
		var st map[string]mcp.Status
		for st = mcpStatus(t, e); (st["outside"].State == mcp.StateStarting || st["granted"].State == mcp.StateStarting) && time.Now().Before(deadline); st = mcpStatus(t, e) {
			time.Sleep(50 * time.Millisecond)
		}
		t.Logf("outside: %s %s\ngranted: %s %s", st["outside"].State, st["outside"].Error, st["granted"].State, st["granted"].Error)
		assert.Equal(t, mcp.StateFailed, st["outside"].State)
		assert.Contains(t, st["outside"].Error, "could not read")
		assert.Contains(t, st["outside"].Error, `to "read" in mcpServers "outside" of your config.json`)
		assert.Equal(t, mcp.StateConnected, st["granted"].State, "the setting the hint names lets it start")
		var notice string
		for _, u := range e.Updates(run.RunID) {
			if u.Hook != nil {
				notice = u.Text
			}
		}
		t.Logf("hook: %s", notice)
		assert.Contains(t, notice, "could not read")
		assert.Contains(t, notice, `to "read" in this hook's entry under "hooks" in your config.json`)
	})
}
