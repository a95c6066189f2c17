package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentd/agentd/tools"
)

// A workspace server is the repository's program, configured by the
// repository (or by a command that wrote .mcp.json): the user's approval
// is of what the question shows, not of what a path or a variable would
// open up. So it may ask for no more than a command could get: a read or
// workspace-write profile, network (shown in the question), its own state
// directory, the variables of the child environment; never "full", a path
// or a directory outside the workspace, write paths, variables the sandbox
// takes paths from, or agentd's secrets (${OPENAI_API_KEY}). The user's own
// configuration (~/.config/agentd/config.json) and the editor's servers
// are trusted and keep every key.

// errWorkspace starts every refusal, so the status says whose rule it is.
const errWorkspace = "a workspace server"

// workspaceGrants is what a workspace server's sandbox adds to its
// profile: the directory it starts in and the paths it may read, each
// resolved (no symlink left to swap) and checked.
type workspaceGrants struct {
	dir  string
	read []string
}

// checkWorkspace says what a workspace server asks for beyond what a
// command could get, on its configuration as it will start (${VAR}
// expanded from agentd's environment). A server of another origin passes.
func (s Server) checkWorkspace(root string, childEnv []string) error {
	if s.Origin != OriginWorkspace {
		return nil
	}
	if err := s.checkVariables(childEnv); err != nil {
		return err
	}
	x, _ := s.expanded(os.LookupEnv) // a missing variable fails the start on its own
	_, err := x.workspaceGrants(root)
	return err
}

// commandEnv is the environment a command the model runs starts from
// (without the user's extra names: a workspace server gets no more).
func commandEnv() []string { return tools.ChildEnv(os.Environ(), nil, nil) }

// checkVariables refuses a ${VAR} a command would not be given: the model's
// key, tokens, anything the child environment's allow-list leaves out. The
// question names the variables, but the hasty user approves what is shown,
// and "Authorization: Bearer ${OPENAI_API_KEY}" to the repository's URL
// hands the key to whoever wrote it. A variable agentd does not have is
// left to its default, and a missing one fails the start.
func (s Server) checkVariables(childEnv []string) error {
	given := map[string]bool{}
	for _, kv := range childEnv {
		if k, _, ok := strings.Cut(kv, "="); ok {
			given[k] = true
		}
	}
	var secret []string
	for _, v := range s.Variables() {
		if _, set := os.LookupEnv(v); set && !given[v] {
			secret = append(secret, "$"+v)
		}
	}
	if len(secret) > 0 {
		return fmt.Errorf("%s may not read agentd's %s: commands are not given it either", errWorkspace, strings.Join(secret, ", "))
	}
	return nil
}

// workspaceGrants checks an expanded workspace server and returns its
// grants. The workspace is readable in every profile, so "read" paths and
// a cwd inside it need no grant of their own: the sandbox gets none for
// them, and a directory swapped for a symlink after the check opens
// nothing up. A command outside the workspace is granted as the regular
// file it resolves to, which no sandboxed process can replace.
func (s Server) workspaceGrants(root string) (workspaceGrants, error) {
	var g workspaceGrants
	if s.IsHTTP() {
		return g, nil
	}
	if fmt.Sprint(s.profile()) == "full" {
		return g, fmt.Errorf(`%s may not run unconfined ("sandbox": "full"); configure it in ~/.config/agentd/config.json to trust it`, errWorkspace)
	}
	if len(s.Write) > 0 {
		return g, fmt.Errorf(`%s may not ask for write paths (%s); "sandbox": "workspace-write" lets it write the workspace as an approved command can`,
			errWorkspace, strings.Join(s.Write, ", "))
	}
	var set []string
	for _, k := range tools.SandboxPathVariables() {
		if _, ok := s.Env[k]; ok {
			set = append(set, k)
		}
	}
	if len(set) > 0 {
		return g, fmt.Errorf("%s may not set %s: the sandbox reads paths from them", errWorkspace, strings.Join(set, ", "))
	}
	ws := resolve(root)
	g.dir = ws
	if s.Cwd != "" {
		d := resolve(absPath(s.Cwd, root))
		if !within(ws, d) {
			return g, fmt.Errorf("%s must start in the workspace, not in %s", errWorkspace, s.Cwd)
		}
		g.dir = d
	}
	for _, p := range s.Read {
		if !within(ws, resolve(absPath(p, root))) {
			return g, fmt.Errorf("%s may not read %s, outside the workspace", errWorkspace, p)
		}
	}
	if strings.Contains(s.Command, "/") {
		c := resolve(absPath(s.Command, g.dir))
		fi, err := os.Stat(c)
		switch {
		case within(ws, c):
		case err == nil && fi.Mode().IsRegular():
			g.read = append(g.read, c)
		case err == nil:
			return g, fmt.Errorf("%s's command %s is not a program", errWorkspace, s.Command)
		}
	}
	return g, nil
}

// resolve follows the symlinks of the part of p that exists.
func resolve(p string) string {
	p = filepath.Clean(p)
	rest := ""
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		} else if !errors.Is(err, os.ErrNotExist) {
			return filepath.Join(p, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// within reports whether p is dir or lies beneath it.
func within(dir, p string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// stateDirOf is a server's state directory. A workspace server's lies
// apart, under a name no other server's can take (".workspace"), and
// with a hash after a name that is not plain: a workspace server
// "my.tools" once shared "my_tools" with the user's server of that name,
// so the repository's server, confined as it is, read the user's server's
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

// readRegular reads a file the workspace holds (.mcp.json), a regular one
// only: a named pipe a command left there would hang the daemon's start.
func readRegular(path string, limit int64) ([]byte, error) { return tools.ReadRegularFile(path, limit) }
