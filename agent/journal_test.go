package agent

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testRun is a run with its files open under a fresh state directory,
// outside any loop, whose notifications a seqs listener records.
func testRun(t *testing.T) (*run, *seqs) {
	t.Helper()
	st, err := openStore(t.TempDir())
	require.NoError(t, err)
	l := &seqs{}
	a := &Agent{store: st, log: slog.New(slog.DiscardHandler), listener: l}
	r := a.newRunForTest(&runRecord{ID: "r_1", SessionID: "s_1", State: StateRunning})
	t.Cleanup(func() { r.closeLogLocked() })
	return r, l
}

// seqs records the seq of every notification it hears.
type seqs struct {
	nobody
	mu  sync.Mutex
	got []int64
}

func (l *seqs) Update(p UpdateParams) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, p.Seq)
}

func (l *seqs) all() []int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]int64(nil), l.got...)
}

func loggedSeqs(t *testing.T, r *run) []int64 {
	t.Helper()
	evs, err := r.a.store.readEvents(r.rec.ID, 0)
	require.NoError(t, err)
	var out []int64
	for _, ev := range evs {
		out = append(out, ev.Seq)
	}
	return out
}

func TestJournalCutsATornLine(t *testing.T) {
	r, _ := testRun(t)
	r.rec.Messages = []Message{{Role: RoleUser, Content: "one"}}
	require.NoError(t, r.persistLocked(false))
	r.rec.Messages = append(r.rec.Messages, Message{Role: RoleAssistant, Content: "two"})
	r.rec.Step = 1
	require.NoError(t, r.persistLocked(true))
	// A crash in the middle of the next checkpoint's write.
	path := r.a.store.journalPath("r_1")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"run":{"id":"r_1","step":2,"messageCount":3},"messages":[{"role":"us`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	rec := &runRecord{ID: "r_1"}
	fresh, err := r.a.store.restoreRun(rec)
	require.NoError(t, err)
	assert.False(t, fresh)
	assert.Equal(t, 1, rec.Step, "the last whole checkpoint")
	assert.Equal(t, []Message{{Role: RoleUser, Content: "one"}, {Role: RoleAssistant, Content: "two"}}, rec.Messages, "nothing lost, nothing twice")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(string(data), "}\n"), "the torn line is cut off")
	assert.Equal(t, 2, strings.Count(string(data), "\n"))
}

// TestJournalWritesOnlyWhatIsNew: each checkpoint is one line holding the
// messages added since the one before, so a checkpoint does not grow with
// the conversation.
func TestJournalWritesOnlyWhatIsNew(t *testing.T) {
	r, _ := testRun(t)
	var sizes []int64
	for i := range 50 {
		r.rec.Messages = append(r.rec.Messages, Message{Role: RoleTool, Content: strings.Repeat("x", 1000) + fmt.Sprint(i)})
		before := r.journal.good
		require.NoError(t, r.persistLocked(false))
		sizes = append(sizes, r.journal.good-before)
	}
	assert.InDelta(t, sizes[1], sizes[49], 64, "the 50th checkpoint costs what the 2nd does")
	rec := &runRecord{ID: "r_1"}
	_, err := r.a.store.restoreRun(rec)
	require.NoError(t, err)
	assert.Equal(t, r.rec.Messages, rec.Messages)
}

// TestSeqGaplessWhenANotificationCannotBeEncoded: the seq is taken only
// once the notification is encoded, so one that cannot be leaves no gap,
// neither in what the editor hears nor in the event log.
func TestSeqGaplessWhenANotificationCannotBeEncoded(t *testing.T) {
	r, l := testRun(t)
	r.update(Update{Kind: UpdateMessageChunk, Text: "one"})
	r.update(Update{Kind: UpdateToolCall, ToolCallID: "c1", Input: json.RawMessage(`{"not json`)})
	r.update(Update{Kind: UpdateMessageChunk, Text: "two"})
	assert.Equal(t, []int64{1, 2}, l.all())
	assert.Equal(t, []int64{1, 2}, loggedSeqs(t, r))
	assert.Equal(t, int64(2), r.rec.Seq)
}

// TestEventsTheLogCannotTakeWaitInOrder: a notification the event log
// cannot take is still sent with the next seq, waits in order, and reaches
// the log with the next write that can; until then a checkpoint fails,
// naming the file and the cause.
func TestEventsTheLogCannotTakeWaitInOrder(t *testing.T) {
	r, l := testRun(t)
	r.update(Update{Kind: UpdateMessageChunk, Text: "one"})
	thaw := freeze(t, r.a.store.eventsPath("r_1"))
	r.update(Update{Kind: UpdateMessageChunk, Text: "two"})
	r.update(Update{Kind: UpdateMessageChunk, Text: "three"})
	assert.Equal(t, []int64{1, 2, 3}, l.all(), "the editor hears every one, in order")
	assert.Equal(t, []int64{1}, loggedSeqs(t, r))
	err := r.persistLocked(false)
	require.ErrorIs(t, err, ErrNotSaved)
	assert.Contains(t, err.Error(), r.a.store.eventsPath("r_1"))
	assert.Contains(t, err.Error(), "operation not permitted")

	thaw()
	r.update(Update{Kind: UpdateMessageChunk, Text: "four"})
	assert.Equal(t, []int64{1, 2, 3, 4}, loggedSeqs(t, r), "the log caught up, gapless")
	require.NoError(t, r.persistLocked(false))
}

// TestFailedCheckpointLeavesTheJournalWhole: a checkpoint the journal
// cannot take leaves nothing of itself; the next one writes everything it
// would have, once.
func TestFailedCheckpointLeavesTheJournalWhole(t *testing.T) {
	r, _ := testRun(t)
	r.rec.Messages = []Message{{Role: RoleUser, Content: "one"}}
	require.NoError(t, r.persistLocked(false))
	thaw := freeze(t, r.a.store.journalPath("r_1"))
	r.rec.Messages = append(r.rec.Messages, Message{Role: RoleAssistant, Content: "two"})
	err := r.persistLocked(true)
	require.ErrorIs(t, err, ErrNotSaved)
	assert.Contains(t, err.Error(), r.a.store.journalPath("r_1"))
	thaw()
	r.rec.Messages = append(r.rec.Messages, Message{Role: RoleUser, Content: "three"})
	require.NoError(t, r.persistLocked(false))
	rec := &runRecord{ID: "r_1"}
	_, err = r.a.store.restoreRun(rec)
	require.NoError(t, err)
	assert.Equal(t, r.rec.Messages, rec.Messages)
}

// freeze makes paths immutable (chattr +i), which stops writes even by
// root and even through files already open, on file systems that honour
// it (ext4 does; tmpfs lets open files be written). The returned func
// undoes it; so does the test's cleanup.
func freeze(t *testing.T, paths ...string) func() {
	t.Helper()
	probe := filepath.Join(t.TempDir(), "probe")
	require.NoError(t, os.WriteFile(probe, nil, 0o600))
	f, err := os.OpenFile(probe, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	defer f.Close()
	if out, err := exec.Command("chattr", "+i", probe).CombinedOutput(); err != nil {
		t.Skipf("chattr +i is not available here: %v %s", err, out)
	}
	_, werr := f.WriteString("x")
	_ = exec.Command("chattr", "-i", probe).Run()
	if werr == nil {
		t.Skip("chattr +i does not stop writes to open files on this file system")
	}
	var once sync.Once
	thaw := func() {
		once.Do(func() {
			if out, err := exec.Command("chattr", append([]string{"-i"}, paths...)...).CombinedOutput(); err != nil {
				t.Errorf("chattr -i: %v %s", err, out)
			}
		})
	}
	out, err := exec.Command("chattr", append([]string{"+i"}, paths...)...).CombinedOutput()
	require.NoError(t, err, "chattr +i: %s", out)
	t.Cleanup(thaw)
	return thaw
}
