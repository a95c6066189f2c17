package rpctest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/tools"
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
	binaryOnly(t, []tools.Mode{tools.ModeAsk, tools.ModeFullAuto}, func(t *testing.T, _ tools.Mode) Config {
		return Config{Terminal: true}
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
	binaryOnly(t, []tools.Mode{tools.ModeAsk}, func(t *testing.T, _ tools.Mode) Config {
		return Config{Env: secrets}
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
