package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/internal/proctest"
)

// TestSessionsAndEarlierRuns: `agentd run --session` prints the session's
// earlier runs before the new one, and `agentd sessions` lists the
// workspace's sessions, over the real binary.
func TestSessionsAndEarlierRuns(t *testing.T) {
	srv := modeltest.StartT(t, &modeltest.Script{Turns: []modeltest.Turn{
		{Match: modeltest.Match{LastUser: "explain the cart"}, Reply: modeltest.Reply{Text: "The cart sums prices.\nIt lives in cart.go."}},
		{Match: modeltest.Match{LastUser: "and the tests"}, Reply: modeltest.Reply{Text: "They are in cart_test.go."}},
		{Match: modeltest.Match{LastUser: "other topic"}, Reply: modeltest.Reply{Text: "Sure."}},
	}})
	root, state := t.TempDir(), t.TempDir()
	agentd := func(args ...string) (string, string) {
		t.Helper()
		cmd := exec.Command(proctest.Agentd(t), args...)
		cmd.Env = append(os.Environ(), "OPENAI_BASE_URL="+srv.URL, "OPENAI_API_KEY=k", "AGENTD_MODEL=fake",
			"AGENTD_STATE_DIR="+state, "HOME="+state, "XDG_CONFIG_HOME="+state, "AGENTD_RETRY_BASE=10ms", "TZ=UTC")
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		require.NoError(t, cmd.Run(), "agentd %v: %s", args, stderr.String())
		return stdout.String(), stderr.String()
	}
	out, errOut := agentd("run", "--dir", root, "explain the cart\nin detail")
	assert.Contains(t, out, "The cart sums prices.")
	id := regexp.MustCompile(`session (s_[0-9a-f]+)`).FindStringSubmatch(errOut)
	require.Len(t, id, 2, errOut)
	agentd("run", "--dir", root, "other topic")

	out, _ = agentd("run", "--dir", root, "--session", id[1], "and the tests")
	earlier, now, ok := strings.Cut(out, "They are in cart_test.go.")
	require.True(t, ok, out)
	assert.Equal(t, "Session "+id[1]+": explain the cart (1 run, fake)\n\n> explain the cart\n  The cart sums prices.\n  It lives in cart.go.\n\n", earlier)
	assert.NotContains(t, now, "explain the cart")

	out, _ = agentd("sessions", "--dir", root)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 3, out)
	assert.Regexp(t, `^UPDATED\s+STATE\s+RUNS\s+TITLE\s+SESSION$`, lines[0])
	assert.Regexp(t, `^\d{4}-\d\d-\d\d \d\d:\d\d\s+completed\s+2\s+explain the cart\s+`+id[1]+`$`, lines[1], "the newest first")
	assert.Regexp(t, `completed\s+1\s+other topic\s+s_`, lines[2])

	out, _ = agentd("sessions", "--dir", root, "--json")
	var first agent.SessionInfo
	require.NoError(t, json.Unmarshal([]byte(strings.Split(out, "\n")[0]), &first))
	assert.Equal(t, id[1], first.SessionID)
	assert.Equal(t, 2, first.RunCount)
	assert.WithinDuration(t, time.Now(), first.UpdatedAt, time.Minute)

	_, errOut = agentd("sessions", "--dir", t.TempDir())
	assert.Contains(t, errOut, "no sessions in")
}

func TestPrintSessionsAlignsColumns(t *testing.T) {
	at := time.Date(2026, 11, 22, 10, 1, 2, 345, time.UTC)
	var b strings.Builder
	printSessions(&b, []agent.SessionInfo{
		{SessionID: "s_1", Title: "Rename Total to Sum", UpdatedAt: at, State: agent.StateCompleted, RunCount: 12},
		{SessionID: "s_2", Title: strings.Repeat("long ", 20), UpdatedAt: at, State: agent.StateRequiresAction, RunCount: 1},
	}, time.UTC)
	assert.Equal(t, "UPDATED           STATE            RUNS  TITLE                                                         SESSION\n"+
		"2026-11-22 10:01  completed        12    Rename Total to Sum                                           s_1\n"+
		"2026-11-22 10:01  requires_action  1     long long long long long long long long long long long long…  s_2\n", b.String())
}
