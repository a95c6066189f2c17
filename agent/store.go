package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// store keeps sessions and runs under the state directory:
//
//	sessions/<id>.json       a session and its conversation
//	runs/<id>.json           a run's header: who it is, and its final state once over
//	runs/<id>.journal.jsonl  the run's checkpoints, appended one line each
//	runs/<id>.events.jsonl   every notification of the run, one per line
//
// Records are written whole and atomically (temp file, fsync, rename), so a
// crash leaves either the old or the new version. A run changes at every
// step, so it is not rewritten: each checkpoint is one line appended to its
// journal with a single write (synced when a person is about to be asked or
// a command is about to start), holding the messages and baseline files
// added since the line before and the rest of the run's state. A
// checkpoint costs what changed, not the whole history; the last whole line
// is the run's state, and a torn last line is cut off on load. The event
// log is appended the same way, one line per notification.
type store struct {
	dir string
}

func openStore(dir string) (*store, error) {
	for _, sub := range []string{"sessions", "runs"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			return nil, fmt.Errorf("creating state dir: %w", err)
		}
	}
	return &store{dir: dir}, nil
}

func (s *store) runPath(id string) string     { return filepath.Join(s.dir, "runs", id+".json") }
func (s *store) eventsPath(id string) string  { return filepath.Join(s.dir, "runs", id+".events.jsonl") }
func (s *store) sessionPath(id string) string { return filepath.Join(s.dir, "sessions", id+".json") }
func (s *store) journalPath(id string) string {
	return filepath.Join(s.dir, "runs", id+".journal.jsonl")
}

// messagesPath is where runs checkpointed before the journal kept their
// messages (the record, runs/<id>.json, held the rest).
func (s *store) messagesPath(id string) string {
	return filepath.Join(s.dir, "runs", id+".messages.jsonl")
}

// saveRun writes a run's header: written when the run starts, so that it
// is found again, and when it ends, for those who read a finished run's
// state; the journal holds everything in between.
func (s *store) saveRun(rec *runRecord, durable bool) error {
	return writeJSONAtomic(s.runPath(rec.ID), rec, durable)
}

func (s *store) saveSession(rec *sessionRecord, durable bool) error {
	return writeJSONAtomic(s.sessionPath(rec.ID), rec, durable)
}

func (s *store) loadRuns() ([]*runRecord, error) {
	var out []*runRecord
	err := loadAll(filepath.Join(s.dir, "runs"), func(data []byte) error {
		rec := &runRecord{}
		if err := json.Unmarshal(data, rec); err != nil {
			return err
		}
		out = append(out, rec)
		return nil
	})
	return out, err
}

func (s *store) loadSessions() ([]*sessionRecord, error) {
	var out []*sessionRecord
	err := loadAll(filepath.Join(s.dir, "sessions"), func(data []byte) error {
		rec := &sessionRecord{}
		if err := json.Unmarshal(data, rec); err != nil {
			return err
		}
		out = append(out, rec)
		return nil
	})
	return out, err
}

// loadAll decodes every *.json record in dir. A record that does not decode
// is skipped, never fatal: one corrupt file must not lose the others.
func loadAll(dir string, decode func([]byte) error) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("reading %s: %w", dir, err)
	}
	var bad []string
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err == nil {
			err = decode(data)
		}
		if err != nil {
			bad = append(bad, e.Name())
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("skipped unreadable records: %s", strings.Join(bad, ", "))
	}
	return nil
}

// openEventLog opens a run's event log for appending. A torn last line (a
// crash in the middle of a write) is ended, so that it stays one line the
// reader skips rather than swallowing the next.
func (s *store) openEventLog(id string) (*os.File, error) {
	f, err := os.OpenFile(s.eventsPath(id), os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening event log: %w", err)
	}
	if err := endTornLine(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("opening event log: %w", err)
	}
	return f, nil
}

func endTornLine(f *os.File) error {
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return err
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, fi.Size()-1); err != nil {
		return err
	}
	if last[0] != '\n' {
		_, err = f.Write([]byte{'\n'})
	}
	return err
}

// loadMessages reads the first n messages of a run's message journal, as
// runs checkpointed before the run journal kept them, and cuts off
// anything after them (written after the last good checkpoint).
func (s *store) loadMessages(id string, n int) ([]Message, error) {
	data, err := os.ReadFile(s.messagesPath(id))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("reading message journal: %w", err)
	}
	msgs := make([]Message, 0, n)
	off := 0
	for len(msgs) < n {
		end := bytes.IndexByte(data[off:], '\n')
		if end < 0 {
			return nil, fmt.Errorf("message journal of %s holds %d of %d messages", id, len(msgs), n)
		}
		var m Message
		if err := json.Unmarshal(data[off:off+end], &m); err != nil {
			return nil, fmt.Errorf("message journal of %s: line %d: %w", id, len(msgs)+1, err)
		}
		msgs = append(msgs, m)
		off += end + 1
	}
	if off < len(data) {
		if err := os.Truncate(s.messagesPath(id), int64(off)); err != nil {
			return nil, fmt.Errorf("trimming message journal: %w", err)
		}
	}
	return msgs, nil
}

// readEvents returns the logged events of a run with seq > after.
func (s *store) readEvents(id string, after int64) ([]Event, error) {
	var out []Event
	err := s.scanEvents(id, after, func(ev Event) bool { out = append(out, ev); return true })
	return out, err
}

// scanEvents calls fn with each logged event of a run with seq > after, in
// order, until fn returns false. It reads line by line, so a page of a long
// log costs what it keeps.
func (s *store) scanEvents(id string, after int64, fn func(Event) bool) error {
	if !validID(id) {
		return fmt.Errorf("%w: %s", ErrUnknownRun, id)
	}
	f, err := os.Open(s.eventsPath(id))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading event log: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 64*1024*1024)
	for sc.Scan() {
		var line eventLine
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue // a torn last line after a crash
		}
		if line.Kind == "" {
			line.Kind = EventKind(strings.TrimPrefix(line.Method, "agent/"))
		}
		if line.Seq > after && !fn(line.Event) {
			return nil
		}
	}
	return sc.Err()
}

// eventLine is a line of an event log. Logs written before the events had
// kinds name the protocol's method instead ("agent/update" for "update").
type eventLine struct {
	Event
	Method string `json:"method,omitempty"`
}

// sentSeqs reads a run's event log once: its highest seq, and the seq each
// input request was sent with, by request id.
func (s *store) sentSeqs(id string) (int64, map[string]int64) {
	var last int64
	sent := map[string]int64{}
	_ = s.scanEvents(id, 0, func(ev Event) bool {
		last = max(last, ev.Seq)
		if ev.Kind == EventInputRequest {
			var p struct {
				RequestID string `json:"requestId"`
			}
			if json.Unmarshal(ev.Params, &p) == nil && p.RequestID != "" {
				sent[p.RequestID] = ev.Seq
			}
		}
		return true
	})
	return last, sent
}

func writeJSONAtomic(path string, v any, durable bool) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", filepath.Base(path), err)
	}
	return writeFileAtomic(path, data, durable)
}

// writeFileAtomic writes data to path through a temporary file and a
// rename, so readers see the old content or the new, never a mix; durable
// syncs the file before the rename so a machine crash keeps it too.
func writeFileAtomic(path string, data []byte, durable bool) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if durable {
		if err := tmp.Sync(); err != nil {
			tmp.Close()
			return fmt.Errorf("syncing %s: %w", path, err)
		}
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("renaming %s: %w", path, err)
	}
	return nil
}

// appendLine writes one JSON line with a single write call.
func appendLine(f *os.File, v any) error {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		return err
	}
	_, err := f.Write(buf.Bytes())
	return err
}
