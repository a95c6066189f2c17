package lsp

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentd/agentd/tools"
)

// Config sets up a Manager.
type Config struct {
	// Root is the workspace, absolute with symlinks resolved.
	Root string
	// Sandbox starts the servers (read profile, no network).
	Sandbox  *tools.Sandbox
	Settings Settings
	// CacheDir is where the servers keep their caches (one directory per
	// language, the only one they may write); "" is <user cache>/agentd/lsp.
	CacheDir string
	// Idle stops a server unused this long; 0 is ten minutes.
	Idle   time.Duration
	Logger *slog.Logger
}

// Manager runs the workspace's language servers, one per language,
// started when first needed and stopped when idle; it is tools.Language
// over them. Safe for concurrent use.
type Manager struct {
	cfg  Config
	stop chan struct{}

	mu      sync.Mutex // guards the fields below
	servers map[string]*slot
	closed  bool
	langs   map[string]bool // languages with files in the workspace; nil: not looked yet
}

// slot is one language's server and its history.
type slot struct {
	srv      *server
	failures []time.Time // recent failures to start or crashes
	lastErr  error
}

// Restarts: a server that failed this many times within failWindow is not
// started again until the window has passed.
const (
	maxFailures = 3
	failWindow  = 5 * time.Minute
)

// New returns a manager; no server starts until one is needed.
func New(cfg Config) *Manager {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Idle <= 0 {
		cfg.Idle = 10 * time.Minute
	}
	if cfg.CacheDir == "" {
		if base, err := os.UserCacheDir(); err == nil {
			cfg.CacheDir = filepath.Join(base, "agentd", "lsp")
		} else {
			cfg.CacheDir = filepath.Join(os.TempDir(), "agentd-lsp")
		}
	}
	if cfg.Sandbox == nil {
		cfg.Sandbox = tools.DefaultSandbox()
	}
	m := &Manager{cfg: cfg, stop: make(chan struct{}), servers: map[string]*slot{}}
	go m.reapIdle()
	return m
}

// Close stops every server.
func (m *Manager) Close() {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.closed = true
	close(m.stop)
	var running []*server
	for _, sl := range m.servers {
		if sl.srv != nil {
			running = append(running, sl.srv)
		}
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range running {
		wg.Add(1)
		go func() { defer wg.Done(); s.stop() }()
	}
	wg.Wait()
}

// reapIdle stops the servers nobody used for cfg.Idle.
func (m *Manager) reapIdle() {
	tick := time.NewTicker(min(m.cfg.Idle/4, time.Minute))
	defer tick.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-tick.C:
		}
		m.mu.Lock()
		var idle []*server
		for _, sl := range m.servers {
			if s := sl.srv; s != nil {
				s.mu.Lock()
				unused := s.busy == 0 && time.Since(s.lastUsed) > m.cfg.Idle
				s.mu.Unlock()
				if unused {
					idle = append(idle, s)
					sl.srv = nil
				}
			}
		}
		m.mu.Unlock()
		for _, s := range idle {
			m.cfg.Logger.Info("language server idle: stopped", "server", s.name)
			s.stop()
		}
	}
}

// program is the command line of lang's server with its program found, or
// an error wrapping ErrNoLanguageServer when it is off or not installed.
func (m *Manager) program(lang language) ([]string, error) {
	argv := m.cfg.Settings.command(lang)
	if len(argv) == 0 {
		return nil, fmt.Errorf("%w: agentd's %s language server is off (languageServers)", tools.ErrNoLanguageServer, lang.Name)
	}
	prog := argv[0]
	if !strings.Contains(prog, "/") {
		found, err := exec.LookPath(prog)
		if err != nil {
			return nil, fmt.Errorf("%w: %s is not installed (not on the PATH)", tools.ErrNoLanguageServer, prog)
		}
		prog = found
	} else {
		if !filepath.IsAbs(prog) {
			prog = filepath.Join(m.cfg.Root, prog)
		}
		if _, err := os.Stat(prog); err != nil {
			return nil, fmt.Errorf("%w: %s is not installed (%v)", tools.ErrNoLanguageServer, argv[0], err)
		}
	}
	if abs, err := filepath.Abs(prog); err == nil {
		prog = abs
	}
	return append([]string{prog}, argv[1:]...), nil
}

// serverFor returns the running server for path's language, starting it
// when needed (it may still be initializing).
func (m *Manager) serverFor(path string) (*server, error) {
	lang, ok := languageOf(path)
	if !ok {
		return nil, fmt.Errorf("%w: agentd has none for %s files", tools.ErrNoLanguageServer, extOrName(path))
	}
	argv, err := m.program(lang)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, fmt.Errorf("%w: agentd is shutting down", tools.ErrNoLanguageServer)
	}
	sl := m.servers[lang.Name]
	if sl == nil {
		sl = &slot{}
		m.servers[lang.Name] = sl
	}
	if s := sl.srv; s != nil {
		if s.alive() && (!isReady(s) || s.initErr == nil) {
			s.touch()
			return s, nil
		}
		sl.noteFailure(errorOf(s))
		sl.srv = nil
		go s.stop()
	}
	if recent := sl.recentFailures(); recent >= maxFailures {
		return nil, fmt.Errorf("%s failed %d times in the last %s, so it is not started again for now: %v", filepath.Base(argv[0]), recent, failWindow, sl.lastErr)
	}
	s, err := start(lang, argv, startOptions{root: m.cfg.Root, sandbox: m.cfg.Sandbox, cacheDir: m.cfg.CacheDir, log: m.cfg.Logger})
	if err != nil {
		sl.noteFailure(err)
		return nil, err
	}
	m.cfg.Logger.Info("language server started", "server", s.name, "language", lang.Name)
	sl.srv = s
	return s, nil
}

func isReady(s *server) bool {
	select {
	case <-s.ready:
		return true
	default:
		return false
	}
}

// errorOf is why a server is no longer usable.
func errorOf(s *server) error {
	if !s.alive() {
		return errors.New(s.exitText())
	}
	return s.initErr
}

func (sl *slot) noteFailure(err error) {
	sl.failures = append(sl.failures, time.Now())
	sl.lastErr = err
}

func (sl *slot) recentFailures() int {
	sl.failures = slices.DeleteFunc(sl.failures, func(t time.Time) bool { return time.Since(t) > failWindow })
	return len(sl.failures)
}

func (s *server) touch() {
	s.mu.Lock()
	s.lastUsed = time.Now()
	s.mu.Unlock()
}

// use marks a request in flight until the returned func is called: the
// server is not stopped as idle meanwhile.
func (s *server) use() func() {
	s.mu.Lock()
	s.busy++
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		s.busy--
		s.lastUsed = time.Now()
		s.mu.Unlock()
	}
}

func extOrName(path string) string {
	if ext := filepath.Ext(path); ext != "" {
		return ext
	}
	return filepath.Base(path)
}

// ready returns path's server once it has answered initialize.
func (m *Manager) ready(ctx context.Context, path string) (*server, error) {
	s, err := m.serverFor(path)
	if err != nil {
		return nil, err
	}
	if err := s.awaitReady(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// Warm starts the servers of files' languages and opens the files, in the
// background, so that their diagnostics are known before they change.
func (m *Manager) Warm(files []string) {
	for _, f := range files {
		if _, ok := languageOf(f); !ok {
			continue
		}
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), initTimeout)
			defer cancel()
			if s, err := m.ready(ctx, f); err == nil {
				defer s.use()()
				if _, err := s.sync(ctx, f); err == nil && s.lang.Ask != nil {
					s.ask(ctx, f) // what it says now, to compare after an edit elsewhere
				}
			}
		}()
	}
}

// Navigates says whether some language of the workspace has its server
// installed. The workspace is looked at once, briefly.
func (m *Manager) Navigates() bool {
	for _, lang := range m.present() {
		if _, err := m.program(lang); err == nil {
			return true
		}
	}
	return false
}

// scanBudget bounds the look for the workspace's languages.
const scanBudget = 5000

// present lists the languages with files in the workspace, looking at the
// first scanBudget entries (hidden directories, node_modules, vendor and
// build output skipped).
func (m *Manager) present() []language {
	m.mu.Lock()
	if m.langs == nil {
		m.langs = map[string]bool{}
		seen := 0
		_ = filepath.WalkDir(m.cfg.Root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if seen++; seen > scanBudget {
				return filepath.SkipAll
			}
			if d.IsDir() {
				if n := d.Name(); p != m.cfg.Root && (strings.HasPrefix(n, ".") || n == "node_modules" || n == "vendor" || n == "target" || n == "build" || n == "dist") {
					return filepath.SkipDir
				}
				return nil
			}
			if l, ok := languageOf(p); ok {
				m.langs[l.Name] = true
			}
			return nil
		})
	}
	var out []language
	for _, l := range languages {
		if m.langs[l.Name] {
			out = append(out, l)
		}
	}
	m.mu.Unlock()
	return out
}
