package rpctest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/internal/await"
	"github.com/agentd/agentd/rpc"
	"github.com/agentd/agentd/rpc/wire"
	"github.com/agentd/agentd/tools"
)

// Mode says where the daemon runs.
type Mode string

const (
	// InProcess serves over pipes in the test process.
	InProcess Mode = "inproc"
	// Binary runs the built agentd as a child process over its stdio.
	Binary Mode = "binary"
)

// Modes are both, for scenarios that must hold either way.
var Modes = []Mode{InProcess, Binary}

// Config describes a scenario's world.
type Config struct {
	Script          *modeltest.Script
	Files           map[string]string // workspace files, by slash path
	Policy          tools.Mode
	QuestionTimeout time.Duration // 0: the daemon's default
	ConfirmTimeout  time.Duration
	MaxSteps        int
	ToolMode        string
	// Index turns the workspace index on (off by default: most scenarios
	// do not need it and it adds background work).
	Index bool
	// OpenIndex replaces the index in-process (binary mode uses rag).
	OpenIndex rpc.IndexStarter
	// NoModel starts the daemon with no model configured.
	NoModel bool
	// The model client's patience and effort (agent.ModelConfig); zero
	// values are the daemon's defaults.
	StreamIdleTimeout, ModelTimeout, RetryMaxWait time.Duration
	ReasoningEffort                               string
	// UserConfig is the user's config.json (e.g. its mcpServers), read by
	// the daemon in either mode.
	UserConfig string
	// Env adds to (or replaces in) the daemon's environment: settings such
	// as AGENTD_SANDBOX=off in both modes, any variable in binary mode.
	Env map[string]string
	// Language is what the fake editor declares it answers in initialize
	// (capabilities.experimental.agentd.language); its handlers
	// (Editor.Handle) answer.
	Language *wire.LanguageCapabilities
	// Terminal gives the binary a controlling terminal, a pseudo-terminal
	// the test holds (Env.Terminal), as the Neovim client's daemon has one.
	// Binary mode only.
	Terminal bool
}

// Env is a workspace, a state directory and a scripted model.
type Env struct {
	T     testing.TB
	Mode  Mode
	Root  string
	State string
	Model *modeltest.Server
	cfg   Config
	// Terminal is the binary's controlling terminal, with Config.Terminal.
	Terminal *Terminal
}

// NewEnv makes the world for one scenario.
func NewEnv(t testing.TB, mode Mode, cfg Config) *Env {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range cfg.Files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := cfg.Script
	if script == nil {
		script = &modeltest.Script{}
	}
	srv := modeltest.Start(script)
	t.Cleanup(srv.Close)
	env := &Env{T: t, Mode: mode, Root: root, State: t.TempDir(), Model: srv, cfg: cfg}
	if cfg.UserConfig != "" {
		dir := filepath.Join(env.State, "config", "agentd")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg.UserConfig), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return env
}

// Start launches a daemon on the env's state and returns its editor, not
// yet initialized.
func (env *Env) Start() *Editor {
	env.T.Helper()
	if env.Mode == Binary {
		return env.startBinary()
	}
	return env.startInProcess()
}

// StartInitialized launches a daemon and runs the LSP handshake.
func (env *Env) StartInitialized() *Editor {
	env.T.Helper()
	e := env.Start()
	e.MustCall(wire.MethodInitialize, env.InitializeParams(nil), nil)
	e.Notify(wire.MethodInitialized, struct{}{})
	return e
}

// InitializeParams are the handshake's params for this workspace.
func (env *Env) InitializeParams(kinds []string) map[string]any {
	caps := map[string]any{"window": map[string]any{"workDoneProgress": true}}
	agentd := map[string]any{}
	if kinds != nil {
		agentd["promptKinds"] = kinds
	}
	if env.cfg.Language != nil {
		agentd["language"] = env.cfg.Language
	}
	if len(agentd) > 0 {
		caps["experimental"] = map[string]any{"agentd": agentd}
	}
	return map[string]any{"processId": os.Getpid(), "clientInfo": map[string]string{"name": "rpctest", "version": "1"},
		"rootUri": (&url.URL{Scheme: "file", Path: filepath.ToSlash(env.Root)}).String(), "capabilities": caps}
}

// WorkspaceFile reads a file of the workspace, failing the test if absent.
func (env *Env) WorkspaceFile(name string) string {
	env.T.Helper()
	b, err := os.ReadFile(filepath.Join(env.Root, filepath.FromSlash(name)))
	if err != nil {
		env.T.Fatalf("reading %s: %v", name, err)
	}
	return string(b)
}

func (env *Env) stateDirs(root string) (string, string, error) {
	return filepath.Join(env.State, "state"), filepath.Join(env.State, "cache"), nil
}

// options configures the in-process daemon the way the binary is: through
// the settings table, from the same variables binaryEnv gives the child.
func (env *Env) options() rpc.Options {
	vars := map[string]string{}
	for _, kv := range env.binaryEnv() {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	cfg := agent.DefaultConfig()
	cfg.UserConfigDir = filepath.Join(vars["XDG_CONFIG_HOME"], "agentd")
	if env.cfg.UserConfig != "" {
		if _, err := cfg.LoadJSON([]byte(env.cfg.UserConfig), "config.json", false); err != nil {
			env.T.Fatal(err)
		}
	}
	if err := cfg.LoadEnv(func(k string) (string, bool) { v, ok := vars[k]; return v, ok }); err != nil {
		env.T.Fatal(err)
	}
	return rpc.Options{Version: "test", Agent: cfg, StateDirs: env.stateDirs, OpenIndex: env.cfg.OpenIndex}
}

type rwc struct {
	io.Reader
	io.Writer
	closers []io.Closer
}

func (c rwc) Close() error {
	for _, cl := range c.closers {
		cl.Close()
	}
	return nil
}

type inproc struct {
	conn rwc
	code chan int
	out  *lockedBuffer
	once sync.Once
	exit int
}

// stop closes the connection and waits for Serve to return; like
// proc.stop it may be called again (a test's explicit stop, then the
// cleanup) and returns the same code.
func (d *inproc) stop(kill bool) int {
	d.once.Do(func() {
		d.conn.Close()
		select {
		case d.exit = <-d.code:
		case <-time.After(await.Timeout(DefaultTimeout)):
			d.exit = -1
		}
	})
	return d.exit
}

func (d *inproc) stderr() string { return d.out.String() }

func (d *inproc) pid() int { return os.Getpid() }

func (env *Env) startInProcess() *Editor {
	toServer, fromEditor := io.Pipe()
	toEditor, fromServer := io.Pipe()
	server := rwc{Reader: toServer, Writer: fromServer, closers: []io.Closer{toServer, fromServer}}
	editor := rwc{Reader: toEditor, Writer: fromEditor, closers: []io.Closer{toEditor, fromEditor}}
	d := &inproc{conn: server, code: make(chan int, 1), out: &lockedBuffer{}}
	opts := env.options()
	opts.Logger = newLogger(d.out)
	go func() { d.code <- rpc.Serve(context.Background(), server, opts) }()
	e := newEditor(env.T, editor, d)
	env.T.Cleanup(func() { e.Close(true) })
	return e
}

type proc struct {
	cmd  *exec.Cmd
	out  *lockedBuffer
	once sync.Once
	code int
}

func (p *proc) stop(kill bool) int {
	p.once.Do(func() {
		if kill {
			_ = p.cmd.Process.Kill()
		}
		done := make(chan struct{})
		go func() { _ = p.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(await.Timeout(DefaultTimeout)):
			_ = p.cmd.Process.Kill()
			<-done
		}
		p.code = p.cmd.ProcessState.ExitCode()
	})
	return p.code
}

func (p *proc) stderr() string { return p.out.String() }

func (p *proc) pid() int { return p.cmd.Process.Pid }

func (env *Env) startBinary() *Editor {
	bin := BuildAgentd(env.T)
	args := []string{"serve", "--log-level", "debug"}
	if !env.cfg.Index {
		args = append(args, "--no-index")
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = env.Root
	cmd.Env = append(cleanEnv(), env.binaryEnv()...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		env.T.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		env.T.Fatal(err)
	}
	out := &lockedBuffer{}
	cmd.Stderr = out
	if env.cfg.Terminal {
		env.Terminal = openTerminal(env.T)
		cmd.ExtraFiles = []*os.File{env.Terminal.follower}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 3}
	}
	if err := cmd.Start(); err != nil {
		env.T.Fatal(err)
	}
	p := &proc{cmd: cmd, out: out}
	e := newEditor(env.T, rwc{Reader: stdout, Writer: stdin, closers: []io.Closer{stdin}}, p)
	env.T.Cleanup(func() { e.Close(true) })
	return e
}

// binaryEnv configures the child like options() configures in-process.
func (env *Env) binaryEnv() []string {
	c := env.cfg
	// agentd's own language servers are off unless a scenario turns them
	// on (Env): which are installed differs from machine to machine.
	vars := []string{"AGENTD_STATE_DIR=" + env.State, "AGENTD_RETRY_BASE=10ms", "HOME=" + env.State, "XDG_CONFIG_HOME=" + filepath.Join(env.State, "config"),
		"AGENTD_LANGUAGE_SERVERS=off"}
	set := func(name, v string) {
		if v != "" {
			vars = append(vars, name+"="+v)
		}
	}
	if !c.NoModel {
		vars = append(vars, "OPENAI_BASE_URL="+env.Model.URL, "OPENAI_API_KEY=test-key", "AGENTD_MODEL=fake")
	}
	set("AGENTD_POLICY", string(c.Policy))
	set("AGENTD_TOOL_MODE", c.ToolMode)
	if c.QuestionTimeout != 0 {
		set("AGENTD_QUESTION_TIMEOUT", c.QuestionTimeout.String())
	}
	if c.ConfirmTimeout != 0 {
		set("AGENTD_CONFIRM_TIMEOUT", c.ConfirmTimeout.String())
	}
	if c.MaxSteps != 0 {
		set("AGENTD_MAX_STEPS", fmt.Sprint(c.MaxSteps))
	}
	set("AGENTD_REASONING_EFFORT", c.ReasoningEffort)
	for name, d := range map[string]time.Duration{"AGENTD_STREAM_IDLE_TIMEOUT": c.StreamIdleTimeout, "AGENTD_MODEL_TIMEOUT": c.ModelTimeout, "AGENTD_RETRY_MAX_WAIT": c.RetryMaxWait} {
		if d != 0 {
			set(name, d.String())
		}
	}
	for name, v := range c.Env {
		vars = append(vars, name+"="+v) // after the defaults: the last value wins
	}
	return vars
}

// cleanEnv drops the caller's agentd and model settings so they cannot leak
// into a test.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "AGENTD_") || strings.HasPrefix(kv, "OPENAI_") || strings.HasPrefix(kv, "XDG_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// BuildAgentd builds the agentd binary once per test process. AGENTD_BIN
// names a prebuilt one instead.
func BuildAgentd(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("AGENTD_BIN"); p != "" {
		return p
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "agentd-bin")
		if err != nil {
			buildErr = err
			return
		}
		buildPath = filepath.Join(dir, "agentd")
		cmd := exec.Command("go", "build", "-o", buildPath, "github.com/agentd/agentd/cmd/agentd")
		// Built as the README's install line builds it: static, without
		// cgo (a dynamically linked agentd starts 1–1.5 ms later).
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildPath
}

// lockedBuffer collects a daemon's log.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
