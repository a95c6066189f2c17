package mcp

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
)

// The user's controls over the servers (issue 31): disable a server (it
// stops and stays stopped, after a restart too), enable it again, restart
// it. A disable or enable overrides the configuration's "disabled" both
// ways and is remembered for the workspace in <state>/mcp-servers.json.

// ErrUnknownServer: no server of that name is configured for the session.
var ErrUnknownServer = errors.New("unknown MCP server")

// ErrNotStartable: the server cannot be (re)started as it is (disabled, or
// not approved yet); the error says what to do.
var ErrNotStartable = errors.New("MCP server cannot start")

// toggles remembers which servers the user disabled or enabled, by name.
type toggles struct {
	path string
	log  *slog.Logger

	mu       sync.Mutex
	disabled map[string]bool // name → disabled (true) or enabled (false) by the user
}

type togglesFile struct {
	Disabled map[string]bool `json:"disabled"`
}

func loadToggles(stateDir string, log *slog.Logger) *toggles {
	t := &toggles{log: log, disabled: map[string]bool{}}
	if stateDir == "" {
		return t
	}
	t.path = filepath.Join(stateDir, "mcp-servers.json")
	var f togglesFile
	if err := loadStateFile(t.path, &f); err != nil {
		log.Warn("MCP server switches unreadable; the configuration decides which servers start", "file", t.path, "err", err)
		return t
	}
	if f.Disabled != nil {
		t.disabled = f.Disabled
	}
	return t
}

// apply sets s.Disabled as the user last switched it.
func (t *toggles) apply(s Server) Server {
	t.mu.Lock()
	defer t.mu.Unlock()
	if d, ok := t.disabled[s.Name]; ok {
		s.Disabled = d
	}
	return s
}

func (t *toggles) set(name string, disabled bool) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.disabled[name] = disabled
	if t.path == "" {
		return nil
	}
	if err := saveStateFile(t.path, togglesFile{Disabled: t.disabled}); err != nil {
		return fmt.Errorf("saving MCP server switches: %w", err)
	}
	return nil
}

// server finds a server the session sees by name.
func (m *Manager) server(sessionID, name string) (Server, error) {
	for _, s := range m.Servers(sessionID) {
		if s.Name == name {
			return s, nil
		}
	}
	return Server{}, fmt.Errorf("%w: %q", ErrUnknownServer, name)
}

// Disable stops a server and keeps it stopped: runs leave its tools out
// until it is enabled again.
func (m *Manager) Disable(sessionID, name string) (Status, error) {
	s, err := m.server(sessionID, name)
	if err != nil {
		return Status{}, err
	}
	if err := m.toggles.set(name, true); err != nil {
		return Status{}, err
	}
	if c := m.existing(s); c != nil {
		c.stop()
	}
	m.changed(name, StateDisabled)
	return m.statusOf(sessionID, name), nil
}

// Enable lets a disabled server start again, and starts it when it may. A
// workspace server the user rejected for good is asked about again (at the
// next session's first run).
func (m *Manager) Enable(sessionID, name string) (Status, error) {
	s, err := m.server(sessionID, name)
	if err != nil {
		return Status{}, err
	}
	if err := m.toggles.set(name, false); err != nil {
		return Status{}, err
	}
	s.Disabled = false
	if m.Approval(sessionID, s) == Rejected {
		if err := m.store.forget(s); err != nil {
			return Status{}, err
		}
	}
	if m.Approval(sessionID, s) == Approved {
		m.conn(s).start(true)
	} else {
		m.changed(name, StateIdle)
	}
	return m.statusOf(sessionID, name), nil
}

// Restart stops a server and starts it again at once (a server that failed
// is tried again without waiting). It answers as the start begins.
func (m *Manager) Restart(sessionID, name string) (Status, error) {
	s, err := m.server(sessionID, name)
	if err != nil {
		return Status{}, err
	}
	switch {
	case s.Disabled:
		return Status{}, fmt.Errorf("%w: %s is disabled; enable it to start it", ErrNotStartable, name)
	case m.Approval(sessionID, s) == Refused:
		return Status{}, fmt.Errorf("%w: %s: %w", ErrNotStartable, name, m.Refusal(s))
	case m.Approval(sessionID, s) != Approved:
		return Status{}, fmt.Errorf("%w: %s is a workspace server you have not approved; agentd asks at the next session's first run", ErrNotStartable, name)
	}
	c := m.conn(s)
	c.stop()
	c.start(true)
	return m.statusOf(sessionID, name), nil
}

func (m *Manager) statusOf(sessionID, name string) Status {
	for _, st := range m.Status(sessionID) {
		if st.Name == name {
			return st
		}
	}
	return Status{Name: name, State: StateIdle}
}

// changed tells the owner a server's state changed (Options.OnChange),
// never with a lock of the manager held and never blocking it.
func (m *Manager) changed(name string, st State) {
	if f := m.opts.OnChange; f != nil {
		go f(name, st)
	}
}
