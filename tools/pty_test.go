package tools

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeAsker answers questions from a script and records them.
type fakeAsker struct {
	mu      sync.Mutex
	asked   []Question
	answers []Answer
}

func (f *fakeAsker) Ask(ctx context.Context, q Question) (Answer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, q)
	if len(f.answers) == 0 {
		return Answer{TimedOut: true}, nil
	}
	a := f.answers[0]
	f.answers = f.answers[1:]
	return a, nil
}

const promptScript = `printf 'Continue? [y/N] '; read ans
if [ "$ans" != y ]; then echo "aborted"; exit 1; fi
read -s -p 'Password: ' pw; echo
echo "password has ${#pw} characters"
echo "done"`

func TestRunCmdInteractivePrompts(t *testing.T) {
	env := newEnv(t)
	fp := &fakeAsker{answers: []Answer{{OptionID: "yes"}, {Text: "hunter2"}}}
	env.Asker = fp
	r := call(t, env, RunCmdToolName, RunCmdParams{Command: promptScript, Interactive: true, Timeout: 20})
	mustOK(t, r)
	assert.Contains(t, r.Output, "password has 7 characters")
	assert.Contains(t, r.Output, "done")
	assert.NotContains(t, r.Output, "hunter2")
	require.Len(t, fp.asked, 2)
	assert.Equal(t, "Continue? [y/N]", fp.asked[0].Message)
	assert.False(t, fp.asked[0].Secret)
	require.Len(t, fp.asked[0].Options, 2)
	assert.Equal(t, "yes", fp.asked[0].Options[0].OptionID)
	assert.Equal(t, "default", fp.asked[0].Options[1].Description)
	assert.True(t, fp.asked[1].Secret, "password prompts are secret questions")
	assert.Empty(t, fp.asked[1].Options)
}

func TestRunCmdInteractiveUserDoesNotAnswer(t *testing.T) {
	env := newEnv(t)
	env.Asker = &fakeAsker{} // times out
	start := time.Now()
	r := call(t, env, RunCmdToolName, RunCmdParams{Command: promptScript, Interactive: true, Timeout: 20})
	mustErr(t, r)
	assert.Contains(t, r.Output, "did not answer the prompt")
	assert.Contains(t, r.Output, "process group was killed")
	assert.Less(t, time.Since(start), 5*time.Second)

	env.Asker = nil
	r = call(t, env, RunCmdToolName, RunCmdParams{Command: promptScript, Interactive: true, Timeout: 20})
	mustErr(t, r)
	assert.Contains(t, r.Output, "no one can answer")
}

func TestRunCmdInteractiveAutoAnswersDefaultYes(t *testing.T) {
	env := newEnv(t)
	fp := &fakeAsker{}
	env.Asker = fp
	r := call(t, env, RunCmdToolName, RunCmdParams{
		Command: `printf 'Do you want to continue? [Y/n] '; read a; echo "answer=$a"`, Interactive: true, Timeout: 20})
	mustOK(t, r)
	assert.Contains(t, r.Output, "answer=y")
	assert.Contains(t, r.Output, "answered \"y\"")
	assert.Empty(t, fp.asked)
}

func TestDetectPrompt(t *testing.T) {
	cases := []struct {
		out, kind, auto string
		options         int
	}{
		{"Continue? [y/N] ", promptConfirm, "", 2},
		{"Proceed (y/n)? ", promptConfirm, "", 2},
		{"Need to install the following packages:\ncreate-app@1.0\nOk to proceed? (y) ", promptConfirm, "y\r", 2},
		{"Do you want to continue? [Y/n] ", promptConfirm, "y\r", 2},
		{"[sudo] password for bob: ", promptSecret, "", 0},
		{"Enter passphrase for key '/h/.ssh/id': ", promptSecret, "", 0},
		{"Project name: ", promptText, "", 0},
		{"? Pick a framework › - Use arrow-keys. Return to submit.\n❯   React\n    Vue\n    Svelte", promptMenu, "", 3},
		{"\x1b[32m?\x1b[0m Which one? (Use arrow keys)\n\x1b[36m❯ alpha\x1b[0m\n  beta", promptMenu, "", 2},
	}
	for _, c := range cases {
		p, ok := detectPrompt(cleanTerminal(c.out))
		require.True(t, ok, c.out)
		assert.Equal(t, c.kind, p.Kind, c.out)
		assert.Equal(t, c.auto, p.auto, c.out)
		assert.Len(t, p.Options, c.options, c.out)
	}
	for _, out := range []string{"building...\n", "compiling 3 files", "", "done: 3 files\n"} {
		_, ok := detectPrompt(cleanTerminal(out))
		assert.False(t, ok, out)
	}
	p, _ := detectPrompt("? Pick › \n  React\n❯ Vue\n  Svelte")
	assert.Equal(t, "\x1b[B\r", p.keysFor(Answer{OptionID: "2"}))
	assert.Equal(t, "\x1b[A\r", p.keysFor(Answer{Text: "React"}))
}
