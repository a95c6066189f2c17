package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/tools/sandbox"
)

// process is a stdio server running in the kernel sandbox.
type process struct {
	cmd    *sandbox.Cmd
	stderr *tail
	done   chan struct{} // closed when the process has been waited for
	exit   int
}

// StateDir is where a stdio server of the user (or the editor) keeps
// what it writes: the only directory it may write besides its private /tmp
// (and what its profile or its "write" list grants). It lasts across
// restarts of the server and of agentd.
func StateDir(stateDir, server string) string {
	return filepath.Join(stateDir, "mcp", dirName(server))
}

// stateDirOf is a server's state directory. A workspace server's lies
// apart, under a name no other server's can take (".workspace"): two
// names that read alike ("my.tools" and "my_tools") once shared one, and
// the repository's server, confined as it is, read the user's server's
// cached credentials there and wrote its npm cache, which the user's
// server (perhaps unconfined) runs from.
func stateDirOf(stateDir string, s Server) string {
	if s.Origin == OriginWorkspace {
		return filepath.Join(stateDir, "mcp", ".workspace", dirName(s.Name))
	}
	return StateDir(stateDir, s.Name)
}

// dirName is a server's name as a directory: itself when it is plain,
// else its plain form and a hash of the whole, so names stay apart.
func dirName(name string) string {
	d := sanitize(name)
	if d == name {
		return d
	}
	sum := sha256.Sum256([]byte(name))
	return d + "-" + hex.EncodeToString(sum[:4])
}

// spawn starts a stdio server in its sandbox profile and returns the
// transport that speaks to it. The process lives until ctx ends or it
// exits.
func spawn(ctx context.Context, s Server, opts Options) (*process, mcpsdk.Transport, error) {
	profile := s.profile()
	if st := opts.sandboxStatus(); !st.Supports(profile) {
		return nil, nil, fmt.Errorf("the kernel sandbox cannot confine MCP servers on this machine (%s); "+
			"set \"sandbox\": \"full\" in the server's configuration to run it unconfined", strings.Join(st.Problems, "; "))
	}
	state := stateDirOf(opts.StateDir, s)
	if err := os.MkdirAll(state, 0o700); err != nil {
		return nil, nil, fmt.Errorf("the server's state directory: %w", err)
	}
	spec := sandbox.Spec{Profile: profile, Workspace: opts.Root, Network: s.Network,
		Args: append([]string{s.Command}, s.Args...), Dir: opts.Root, Env: serverEnv(s, opts, state),
		Write: []string{state}}
	if s.Origin == OriginWorkspace {
		// Checked again as it starts: the workspace may have changed
		// since the user was asked.
		g, err := s.workspaceGrants(opts.Root)
		if err != nil {
			return nil, nil, err
		}
		spec.Dir, spec.Read = g.dir, g.read
	} else {
		trustedGrants(&spec, s, opts.Root)
	}
	cmd, err := sandbox.Command(ctx, spec)
	if err != nil {
		return nil, nil, err
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, nil, err
	}
	p := &process{cmd: cmd, stderr: &tail{max: 8 << 10}, done: make(chan struct{})}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, p.stderr
	err = cmd.Start()
	inR.Close() // the server's ends: ours are inW and outR
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		var se *sandbox.SetupError
		if errors.As(err, &se) {
			return nil, nil, fmt.Errorf("starting %s: %w", s.Command, err)
		}
		return nil, nil, fmt.Errorf("starting %s: %w", s.CommandLine(), err)
	}
	go func() {
		_ = cmd.Wait()
		p.exit = cmd.ExitCode()
		close(p.done)
	}()
	return p, &mcpsdk.IOTransport{Reader: outR, Writer: inW}, nil
}

// trustedGrants adds what the user's (or the editor's) configuration
// asks for to a server's sandbox.
func trustedGrants(spec *sandbox.Spec, s Server, root string) {
	if s.Cwd != "" {
		spec.Dir = absPath(s.Cwd, root)
		spec.Read = append(spec.Read, spec.Dir)
	}
	if strings.Contains(s.Command, "/") {
		spec.Read = append(spec.Read, absPath(s.Command, spec.Dir))
	}
	for _, p := range s.Read {
		spec.Read = append(spec.Read, absPath(p, root))
	}
	for _, p := range s.Write {
		spec.Write = append(spec.Write, absPath(p, root))
	}
}

// serverEnv is a stdio server's environment: the daemon's, filtered as
// for commands (no secrets), then where it keeps its state, then the
// configured variables, which may carry the tokens it needs.
func serverEnv(s Server, opts Options, state string) []string {
	env := append([]string(nil), opts.childEnv()...)
	env = append(env,
		"XDG_STATE_HOME="+filepath.Join(state, "state"),
		"XDG_CACHE_HOME="+filepath.Join(state, "cache"),
		"XDG_DATA_HOME="+filepath.Join(state, "data"),
		"npm_config_cache="+filepath.Join(state, "npm"),
		"AGENTD_MCP_STATE_DIR="+state)
	keys := make([]string, 0, len(s.Env))
	for k := range s.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		env = append(env, k+"="+s.Env[k])
	}
	return env
}

// stop kills the server and whatever it started, and waits for it.
func (p *process) stop() {
	_ = p.cmd.Kill()
	<-p.done
}

// exited reports how the process ended, with the end of what it wrote to
// stderr: why it failed, in its own words.
func (p *process) exited() string {
	msg := fmt.Sprintf("exited with status %d", p.exit)
	if p.exit > 128 && p.exit < 160 {
		msg = fmt.Sprintf("was killed by signal %d", p.exit-128)
	}
	if t := strings.TrimSpace(p.stderr.String()); t != "" {
		msg += ": " + lastLines(t, 5)
	}
	return msg
}

// tail keeps the last bytes written to it: a server's stderr.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
