package mcp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/tools"
)

// process is a stdio server running in the kernel sandbox.
type process struct {
	proc   *tools.Proc
	stderr *tools.Tail
	done   chan struct{} // closed when the process has been waited for
	exit   int
	entry  string // the server's configuration, for what the sandbox refused
}

// StateDir is where a stdio server keeps what it writes: the only
// directory it may write besides its private /tmp (and what its profile or
// its "write" list grants). It lasts across restarts of the server and of
// agentd.
func StateDir(stateDir, server string) string {
	return filepath.Join(stateDir, "mcp", sanitize(server))
}

// spawn starts a stdio server in its sandbox profile, through the one door
// every process takes (tools.Sandbox.Command), and returns the transport
// that speaks to it. The process lives until ctx ends or it exits.
func spawn(ctx context.Context, s Server, opts Options) (*process, mcpsdk.Transport, error) {
	sb := opts.sandbox()
	profile := s.profile()
	if !sb.Supports(profile) {
		return nil, nil, fmt.Errorf("the kernel sandbox cannot confine MCP servers on this machine (%s); "+
			"set \"sandbox\": \"full\" in the server's configuration to run it unconfined", sb.Status().Summary)
	}
	state := stateDirOf(opts.StateDir, s)
	if err := os.MkdirAll(state, 0o700); err != nil {
		return nil, nil, fmt.Errorf("the server's state directory: %w", err)
	}
	spec := tools.ProcSpec{Args: append([]string{s.Command}, s.Args...), Workspace: opts.Root, Dir: opts.Root,
		Confine: tools.Confine{Profile: profile, Network: s.Network}, Env: serverEnv(s, state), Write: []string{state}}
	if s.Cwd != "" {
		spec.Dir = absPath(s.Cwd, opts.Root)
		spec.Read = append(spec.Read, spec.Dir)
	}
	if s.Origin == OriginWorkspace {
		// Checked again as it starts (the workspace may have changed
		// since the user was asked), and given only the resolved grants
		// workspaceGrants returns: none of the configured paths below.
		g, err := s.workspaceGrants(opts.Root)
		if err != nil {
			return nil, nil, err
		}
		spec.Dir, spec.Read = g.dir, g.read
		s.Read, s.Write = nil, nil
	}
	if strings.Contains(s.Command, "/") && s.Origin != OriginWorkspace {
		spec.Read = append(spec.Read, absPath(s.Command, spec.Dir))
	}
	for _, p := range s.Read {
		spec.Read = append(spec.Read, absPath(p, opts.Root))
	}
	for _, p := range s.Write {
		spec.Write = append(spec.Write, absPath(p, opts.Root))
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
	p := &process{stderr: &tools.Tail{Max: 8 << 10}, done: make(chan struct{}), entry: s.entry()}
	spec.Stdin, spec.Stdout, spec.Stderr = inR, outW, p.stderr
	p.proc, err = sb.Command(ctx, spec)
	inR.Close() // the server's ends: ours are inW and outR
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, nil, fmt.Errorf("starting %s: %w", s.Command, err)
	}
	go func() {
		_ = p.proc.Wait()
		p.exit = p.proc.ExitCode()
		close(p.done)
	}()
	return p, &mcpsdk.IOTransport{Reader: outR, Writer: inW}, nil
}

// serverEnv is what a stdio server's environment adds to the child
// environment every process gets (the daemon's allow-list and the user's
// extra names, no secrets): where it keeps its state, then the configured
// variables, which may carry the tokens it needs.
func serverEnv(s Server, state string) []string {
	env := []string{
		"XDG_STATE_HOME=" + filepath.Join(state, "state"),
		"XDG_CACHE_HOME=" + filepath.Join(state, "cache"),
		"XDG_DATA_HOME=" + filepath.Join(state, "data"),
		"npm_config_cache=" + filepath.Join(state, "npm"),
		"AGENTD_MCP_STATE_DIR=" + state}
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
	_ = p.proc.Kill()
	<-p.done
}

// exited reports how the process ended, with the end of what it wrote to
// stderr: why it failed, in its own words.
func (p *process) exited() string {
	msg := tools.ExitText(p.exit, p.stderr.String(), 5)
	if p.exit != 0 {
		if hint := tools.RefusalHint(p.proc.Refused(p.stderr.String()), p.entry); hint != "" {
			msg += " — " + hint
		}
	}
	return msg
}

// entry names where the server is configured, for a hint at the setting
// that grants what the sandbox refused it.
func (s Server) entry() string {
	switch s.Origin {
	case OriginWorkspace:
		return fmt.Sprintf("mcpServers %q of the workspace's .mcp.json (which may grant nothing outside the workspace: "+
			"configure the server in your config.json for that)", s.Name)
	case OriginUser:
		return fmt.Sprintf("mcpServers %q of your config.json", s.Name)
	}
	return fmt.Sprintf("the server %q's configuration", s.Name)
}
