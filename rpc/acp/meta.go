package acp

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agentd/agentd/tools"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// sessionMeta is what ACP knows of a session that agentd does not: the id
// the client was given before the first run created the agent session, and
// the settings chosen before it (the first run takes them; after it, the
// agent session keeps them).
type sessionMeta struct {
	AgentID string     `json:"agentId,omitempty"`
	Mode    tools.Mode `json:"mode,omitempty"`
	Model   string     `json:"model,omitempty"`
	Effort  string     `json:"reasoningEffort,omitempty"`
}

// metaStore persists sessionMeta by ACP session id in the workspace's state
// directory, so a restarted agentd loads sessions by the ids editors kept.
type metaStore struct {
	path string
	log  *slog.Logger

	mu   sync.Mutex // guards byID
	byID map[string]sessionMeta
}

func openMetaStore(dir string, log *slog.Logger) *metaStore {
	m := &metaStore{path: filepath.Join(dir, "acp-sessions.json"), log: log, byID: map[string]sessionMeta{}}
	data, err := os.ReadFile(m.path)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			log.Warn("reading acp sessions", "err", err)
		}
		return m
	}
	if err := json.Unmarshal(data, &m.byID); err != nil {
		log.Warn("parsing acp sessions", "path", m.path, "err", err)
	}
	return m
}

func (m *metaStore) get(id string) (sessionMeta, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.byID[id]
	return v, ok
}

// acpID returns the ACP id under which an agent session is known.
func (m *metaStore) acpID(agentID string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, v := range m.byID {
		if v.AgentID == agentID {
			return id
		}
	}
	return agentID
}

func (m *metaStore) set(id string, v sessionMeta) {
	m.mu.Lock()
	defer m.mu.Unlock() // held while writing, so writes land in order
	m.byID[id] = v
	data, err := json.MarshalIndent(m.byID, "", "  ")
	if err == nil {
		err = writeFileAtomic(m.path, data)
	}
	if err != nil {
		m.log.Warn("persisting acp sessions", "err", err)
	}
}

func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("creating state directory: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("renaming %s: %w", tmp, err)
	}
	return nil
}

// newSessionID makes an id for a session that has no agent session yet.
func newSessionID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("s_%x%s", time.Now().UnixMilli(), hex.EncodeToString(b[:]))
}
