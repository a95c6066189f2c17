package mcp

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
)

// approvals remembers the user's lasting decisions on the workspace's
// servers, by name, for one exact configuration (its fingerprint): a
// .mcp.json that changes a server's command line, environment or
// confinement is asked about again.
type approvals struct {
	path string
	log  *slog.Logger

	mu      sync.Mutex
	servers map[string]approval
}

type approval struct {
	Fingerprint string `json:"fingerprint"`
	// Command is what was approved, for a person reading the file.
	Command string `json:"command"`
	Allow   bool   `json:"allow"`
}

type approvalFile struct {
	Servers map[string]approval `json:"servers"`
}

func loadApprovals(stateDir string, log *slog.Logger) *approvals {
	a := &approvals{log: log, servers: map[string]approval{}}
	if stateDir == "" {
		return a
	}
	a.path = filepath.Join(stateDir, "mcp-approvals.json")
	var f approvalFile
	if err := loadStateFile(a.path, &f); err != nil {
		// Unreadable approvals approve nothing: every server asks again.
		log.Warn("MCP approvals unreadable; workspace servers will be asked about again", "file", a.path, "err", err)
		return a
	}
	if f.Servers != nil {
		a.servers = f.Servers
	}
	return a
}

// get returns the remembered decision on s, if any.
func (a *approvals) get(s Server) (allow, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	ap, ok := a.servers[s.Name]
	if !ok || ap.Fingerprint != s.Fingerprint() {
		return false, false
	}
	return ap.Allow, true
}

// set remembers a decision and writes the file.
func (a *approvals) set(s Server, allow bool) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.servers[s.Name] = approval{Fingerprint: s.Fingerprint(), Command: s.CommandLine(), Allow: allow}
	return a.saveLocked()
}

// forget drops the decision on s: it is asked about again.
func (a *approvals) forget(s Server) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.servers, s.Name)
	return a.saveLocked()
}

func (a *approvals) saveLocked() error {
	if a.path == "" {
		return nil
	}
	if err := saveStateFile(a.path, approvalFile{Servers: a.servers}); err != nil {
		return fmt.Errorf("saving MCP approvals: %w", err)
	}
	return nil
}
