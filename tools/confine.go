package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentd/agentd/tools/sandbox"
)

// Every process the tools start (run_cmd, interactive commands, the checks
// after an edit, rg) and every process the daemon starts later for the user
// (hooks, MCP servers) goes through Sandbox.Command: it runs in the kernel
// sandbox's profile the policy (or the user) chose, with the child
// environment, and its id is reported before it can do anything.

// SandboxConfig is the daemon's sandbox setup.
type SandboxConfig struct {
	// Off confines no command: every command asks and, approved, runs with
	// the user's own rights. The status says it was switched off.
	Off bool
	// LandlockOnly confines commands with Landlock alone, without user
	// namespaces (sandbox: landlock): read-only commands stay confined,
	// the others ask and run unconfined.
	LandlockOnly bool
	// EnvAllow are more variable names (path.Match globs, from the user's
	// settings) that commands inherit from the daemon.
	EnvAllow []string
	// CacheDir holds the caches confined commands write, per workspace
	// (caches.go): the user's own would let a command poison what the user
	// later runs unconfined. "" is <user cache dir>/agentd/sandbox.
	CacheDir string
	// Own are agentd's own directories: its state (every workspace's
	// sessions, transcripts, audit log and granted rules) and the user's
	// configuration (config.json, rules.json, AGENTS.md, commands). No
	// confined process may read or write them, wherever the workspace lies
	// (Hidden); missing ones are made, so that a command cannot make them.
	Own []string
	// MaxProcs bounds each command's processes and threads together
	// (sandbox.Spec.MaxProcs); 0 is the sandbox's default.
	MaxProcs int
	// Logger reports what the sandbox could not do (nil: slog's default).
	Logger *slog.Logger
	// status replaces the machine's answer, for tests.
	status *sandbox.Status
}

// Sandbox starts processes in the kernel sandbox. Safe for concurrent use.
type Sandbox struct {
	cfg SandboxConfig

	smu    sync.Mutex // guards status, known
	status sandbox.Status
	known  bool

	base baseEnv  // the child environment without secrets, made once
	made madeDirs // agentd's cache directories made already

	mu     sync.Mutex          // guards nested
	nested map[string][]string // workspace → nested .git entries; absent: to walk again

	hideOnce sync.Once
	hidden   []string
}

// NewSandbox returns a sandbox with cfg. The machine is probed once, at the
// first need.
func NewSandbox(cfg SandboxConfig) *Sandbox {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Sandbox{cfg: cfg, nested: map[string][]string{}}
}

var (
	defaultOnce    sync.Once
	defaultSandbox *Sandbox
)

// DefaultSandbox is the sandbox of an Env that names none: the machine's,
// no extra variables, the default cache directory.
func DefaultSandbox() *Sandbox {
	defaultOnce.Do(func() { defaultSandbox = NewSandbox(SandboxConfig{}) })
	return defaultSandbox
}

func (e *Env) sandbox() *Sandbox {
	if e != nil && e.Sandbox != nil {
		return e.Sandbox
	}
	return DefaultSandbox()
}

func (s *Sandbox) machine() sandbox.Status {
	s.smu.Lock()
	defer s.smu.Unlock()
	if s.known {
		return s.status
	}
	switch {
	case s.cfg.status != nil:
		s.status = *s.cfg.status
	case s.cfg.Off:
		s.status = sandbox.Status{OS: runtime.GOOS, Problems: []string{"switched off in the settings (sandbox: off)"}}
	case s.cfg.LandlockOnly:
		s.status = s.check().WithoutNamespaces()
	default:
		s.status = s.check()
	}
	s.known = true
	return s.status
}

// Supports reports whether commands can run in p here; full always can.
func (s *Sandbox) Supports(p Profile) bool {
	kp, err := sandboxProfile(p)
	return err == nil && s.machine().Supports(kp)
}

// SandboxStatus is what the kernel sandbox offers here, as the editor
// (initialize's capabilities), `agentd doctor` and the logs are told.
type SandboxStatus struct {
	// Active: commands run confined, in the read profile at least. When it
	// is false every command asks, and an approved one runs with the
	// user's own rights.
	Active bool `json:"active"`
	// Profiles lists the profiles commands can run in here; full always.
	Profiles []Profile `json:"profiles"`
	// Landlock is the kernel's Landlock ABI version, 0 when missing.
	Landlock int `json:"landlock"`
	// Off: the user switched the sandbox off in the settings.
	Off bool `json:"off,omitempty"`
	// Summary is one line for a person.
	Summary string `json:"summary"`
	// Problems say, one line each, what is missing and why.
	Problems []string `json:"problems,omitempty"`
}

// Status reports what the sandbox offers.
func (s *Sandbox) Status() SandboxStatus {
	m := s.machine()
	st := SandboxStatus{Landlock: m.Landlock, Off: s.cfg.Off, Problems: m.Problems}
	for _, p := range Profiles {
		if s.Supports(p) {
			st.Profiles = append(st.Profiles, p)
		}
	}
	st.Active = s.Supports(ProfileRead)
	switch {
	case st.Active && s.Supports(ProfileWorkspaceWrite):
		st.Summary = fmt.Sprintf("commands run in the kernel sandbox (Landlock ABI %d)", m.Landlock)
	case st.Active:
		st.Summary = fmt.Sprintf("read-only commands run in the kernel sandbox (Landlock ABI %d); other commands cannot be confined here, so each asks and runs with your full rights", m.Landlock)
	case s.cfg.Off:
		st.Summary = "the kernel sandbox is switched off: every command asks, and runs with your full rights"
	default:
		st.Summary = "the kernel sandbox is not available: every command asks, and runs with your full rights"
	}
	return st
}

// ParseProfile reads a profile a user wrote (a hook's or an MCP server's
// "sandbox"); "" is the read profile.
func ParseProfile(s string) (Profile, error) {
	if s == "" {
		return ProfileRead, nil
	}
	if p := Profile(s); slices.Contains(Profiles, p) {
		return p, nil
	}
	return "", fmt.Errorf("unknown sandbox profile %q (want read, workspace-write or full)", s)
}

func sandboxProfile(p Profile) (sandbox.Profile, error) {
	switch p {
	case ProfileRead, "":
		return sandbox.Read, nil
	case ProfileWorkspaceWrite:
		return sandbox.WorkspaceWrite, nil
	case ProfileFull:
		return sandbox.Full, nil
	}
	return 0, fmt.Errorf("unknown sandbox profile %q", p)
}

// ProcSpec is a process the daemon starts: a command the model runs, a
// check after an edit, a hook, an MCP server.
type ProcSpec struct {
	// Args is the program and its arguments; a name without a slash is
	// looked up in the child environment's PATH.
	Args []string
	// Workspace is the workspace root (absolute); Dir the working
	// directory, absolute and inside it ("" is the root).
	Workspace, Dir string
	// Confine is the profile and the network; the zero value is the read
	// profile without network.
	Confine Confine
	// NoCaches: the process uses no toolchain (rg, ctags): it gets none of
	// the build caches, and starts without their overlays' mounts.
	NoCaches bool
	// Session is the key of the session the process belongs to (a run's
	// Env.SessionID). A confined process without the network joins its
	// session's network namespace: only the loopback, shared by the
	// session's processes (a server one of them listens with on
	// 127.0.0.1 is reachable from the others, nothing else is). A
	// long-lived process passes its session's key to be reachable from the
	// session's commands. "" leaves a process without the network no
	// socket but local ones.
	Session string
	// Env adds variables (NAME=value) over the child environment
	// (ChildEnv: the allow-list and the user's extra names).
	Env []string
	// Read and Write are more absolute paths a confined process may read,
	// or write: its own program, state or configuration (a hook's, an MCP
	// server's), as the user configured them.
	Read, Write []string
	// Secrets are given to this process only, by name.
	Secrets map[string]string
	// The standard streams, as exec.Cmd's (nil stdin reads /dev/null), or
	// TTY, the follower end of a pseudo-terminal, for all three.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	TTY            *os.File
	// WaitDelay bounds the wait for the output after the process ended.
	WaitDelay time.Duration
	// Started is told the process's id as soon as it started.
	Started func(ProcID)
}

// Proc is a process started by Sandbox.Command.
type Proc struct {
	c       *sandbox.Cmd
	confine Confine
	ended   func()
}

// Command starts spec's process. Cancelling ctx kills it and everything it
// started. A profile the machine cannot confine is refused (an error
// wrapping ErrNotConfined), never run unconfined: only ProfileFull runs
// without the sandbox.
func (s *Sandbox) Command(ctx context.Context, spec ProcSpec) (*Proc, error) {
	kp, err := sandboxProfile(spec.Confine.Profile)
	if err != nil {
		return nil, err
	}
	if !s.Supports(spec.Confine.Profile) {
		return nil, fmt.Errorf("%w: the %s profile: %s", ErrNotConfined, profileName(spec.Confine.Profile), strings.Join(s.machine().Problems, "; "))
	}
	ws := spec.Workspace
	if !filepath.IsAbs(ws) {
		return nil, fmt.Errorf("sandbox: workspace %q is not absolute", ws)
	}
	ss := sandbox.Spec{Profile: kp, Workspace: ws, Network: spec.Confine.Network || kp == sandbox.Full, Git: spec.Confine.Git, Session: spec.Session,
		Args: spec.Args, Dir: spec.Dir, Env: s.childEnv(spec), LandlockOnly: s.cfg.LandlockOnly, Read: slices.Clone(spec.Read), Write: slices.Clone(spec.Write),
		MaxProcs: s.cfg.MaxProcs}
	if kp != sandbox.Full && !spec.NoCaches {
		s.caches(ws, kp, ss.Network, ss.Env).apply(&ss, spec.Env)
	}
	if kp == sandbox.WorkspaceWrite {
		ss.Protect = s.nestedGit(ctx, ws)
	}
	if kp != sandbox.Full {
		ss.Hide = s.Hidden()
	}
	c, err := sandbox.Command(ctx, ss)
	if err != nil {
		return nil, err
	}
	c.Stdin, c.Stdout, c.Stderr, c.WaitDelay = spec.Stdin, spec.Stdout, spec.Stderr, spec.WaitDelay
	if spec.TTY != nil {
		c.SetTerminal(spec.TTY)
	}
	if err := c.Start(); err != nil {
		if errors.Is(err, sandbox.ErrUnavailable) {
			return nil, fmt.Errorf("%w: %v", ErrNotConfined, err)
		}
		return nil, err
	}
	proc := &Proc{c: c, confine: spec.Confine}
	if kp != sandbox.Read {
		// It may make a nested repository while it runs: the next
		// workspace-write command walks the tree again.
		s.treeMayChange(ws)
		proc.ended = func() { s.treeMayChange(ws) }
	}
	if spec.Started != nil {
		spec.Started(c.ID())
	}
	return proc, nil
}

// ErrNotConfined means the kernel cannot confine a process in the profile
// asked for here. Nothing ran.
var ErrNotConfined = errors.New("the kernel sandbox cannot confine this command here")

func profileName(p Profile) string {
	if p == "" {
		return string(ProfileRead)
	}
	return string(p)
}

// Wait waits for the process to end and for its output (at most WaitDelay),
// and kills whatever it left running.
func (p *Proc) Wait() error {
	err := p.c.Wait()
	if p.ended != nil {
		p.ended()
	}
	if r := p.c.Removed(); len(r) > 0 {
		slog.Warn("sandbox: a git command created what decides what git runs; removed", "paths", r)
	}
	return err
}

// ExitCode is the status as a shell shows it (128 + signal when killed);
// -1 before Wait.
func (p *Proc) ExitCode() int { return p.c.ExitCode() }

// Kill kills the process and everything it started.
func (p *Proc) Kill() error { return p.c.Kill() }

// Signal sends sig to the process's whole group.
func (p *Proc) Signal(sig syscall.Signal) error { return p.c.Signal(sig) }

// ID names the process for Reap.
func (p *Proc) ID() ProcID { return p.c.ID() }

// Confine is the profile and network the process runs with.
func (p *Proc) Confine() Confine { return p.confine }

// sessionNetwork reports whether the process is in its session's network
// namespace (loopback only).
func (p *Proc) sessionNetwork() bool { return p.c.Confinement().SessionNetwork }

// Describe says what the kernel applied, for logs and tests: the profile,
// the Landlock ABI, the namespaces and the network.
func (p *Proc) Describe() string {
	c := p.c.Confinement()
	if c.Profile == sandbox.Full {
		return "full (no sandbox)"
	}
	s := fmt.Sprintf("%s, Landlock ABI %d", c.Profile, c.Landlock)
	if c.Namespaces {
		s += ", namespaces"
	}
	switch {
	case c.Network:
		return s + ", network"
	case c.SessionNetwork:
		return s + ", the session's network (loopback only)"
	}
	return s + ", no network"
}

// childEnv is the process's environment: the allow-list of the daemon's
// variables and the user's extra names, the forced non-interactive
// settings, the process's own secrets and variables. A confined process's
// caches come on top (caches.go).
func (s *Sandbox) childEnv(spec ProcSpec) []string {
	env := s.base.get(s.cfg.EnvAllow)
	for k, v := range spec.Secrets {
		env = setEnv(env, k, v)
	}
	if spec.Confine.Profile != ProfileFull {
		env = withGitIdentity(env)
	}
	for _, kv := range spec.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env = setEnv(env, k, v)
		}
	}
	return env
}

func setEnv(env []string, k, v string) []string {
	out := slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, k+"=") })
	return append(out, k+"="+v)
}

// cacheDir is where the caches confined commands write live.
func (s *Sandbox) cacheDir() string {
	if s.cfg.CacheDir != "" {
		return s.cfg.CacheDir
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(base, "agentd", "sandbox")
}

func envValue(env []string, k string) string {
	v := ""
	for _, kv := range env {
		if name, val, ok := strings.Cut(kv, "="); ok && name == k {
			v = val
		}
	}
	return v
}

// nestedWalkBudget bounds the walk for nested repositories before a
// workspace-write command; a tree too large to walk in time keeps what was
// found (auto-allowed git runs with safe settings anyway).
const nestedWalkBudget = 5 * time.Second

// nestedGit lists the repositories nested in the workspace, whose
// configuration a workspace-write command must not rewrite. The list is
// kept until a command that could write has run, or a file tool wrote
// under a .git component (treeMayChange).
func (s *Sandbox) nestedGit(ctx context.Context, ws string) []string {
	s.mu.Lock()
	list, ok := s.nested[ws]
	s.mu.Unlock()
	if ok {
		return list
	}
	wctx, cancel := context.WithTimeout(ctx, nestedWalkBudget)
	defer cancel()
	list, err := sandbox.NestedGitDirs(wctx, ws)
	if err != nil {
		s.cfg.Logger.Warn("sandbox: listing nested repositories", "workspace", ws, "found", len(list), "err", err)
		return list
	}
	s.mu.Lock()
	s.nested[ws] = list
	s.mu.Unlock()
	return list
}

// treeMayChange forgets the nested repositories of ws: a process that
// could write there ran, so the next workspace-write command walks again.
func (s *Sandbox) treeMayChange(ws string) {
	s.mu.Lock()
	delete(s.nested, ws)
	s.mu.Unlock()
}

// Output runs args in the read profile without network, in dir (inside
// the workspace root), with stdin (nil: /dev/null), and returns its
// standard output; a status other than 0 is an error carrying its standard
// error. For the daemon's own helpers (the repo map's ctags).
func (s *Sandbox) Output(ctx context.Context, root, dir string, stdin io.Reader, args ...string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	p, err := s.Command(ctx, ProcSpec{Args: args, Workspace: root, Dir: dir, Confine: Confine{Profile: ProfileRead},
		NoCaches: true, Stdin: stdin, Stdout: &stdout, Stderr: &stderr, WaitDelay: time.Second})
	if err != nil {
		return nil, err
	}
	if err := p.Wait(); err != nil {
		return stdout.Bytes(), err
	}
	if code := p.ExitCode(); code != 0 {
		return stdout.Bytes(), fmt.Errorf("%s: exit status %d: %s", args[0], code, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// Hidden lists agentd's own files, which no confined process may read or
// write wherever the workspace lies (a workspace that is HOME, or holds
// them): the directories of SandboxConfig.Own and agentd's cache directory
// (the workspaces' indexes, the sandbox's status), except the caches
// confined commands share. The file tools keep out of them too.
func (s *Sandbox) Hidden() []string {
	s.hideOnce.Do(func() {
		for _, d := range s.cfg.Own {
			if d == "" || !filepath.IsAbs(d) {
				continue
			}
			if err := os.MkdirAll(d, 0o700); err != nil {
				s.cfg.Logger.Warn("sandbox: agentd's own directory", "dir", d, "err", err)
			}
			s.hidden = append(s.hidden, filepath.Clean(d))
		}
		if c := s.cacheDir(); c != "" {
			s.hidden = append(s.hidden, filepath.Dir(c))
		}
	})
	return s.hidden
}
