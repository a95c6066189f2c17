package mcp

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentd/agentd/internal/lazy"
	"github.com/agentd/agentd/tools"
)

// Origin says where a server's configuration came from, which decides
// whether it may start unasked.
type Origin string

// Origins, from the most trusted.
const (
	// OriginUser is ~/.config/agentd/config.json: the user wrote it.
	OriginUser Origin = "user"
	// OriginSession is a server the editor passed for one session (ACP's
	// session/new): the editor speaks for the user.
	OriginSession Origin = "session"
	// OriginWorkspace is the workspace's .mcp.json: anyone who wrote the
	// repository wrote it, so a server starts only once the user approved
	// it.
	OriginWorkspace Origin = "workspace"
)

// Server is one MCP server as users configure it, in the shape Claude
// Code, Cursor and others read (`command`, `args`, `env`, `cwd` for a
// process on stdio; `url`, `headers` for streamable HTTP), plus agentd's
// own keys: how the process is confined and the timeouts.
type Server struct {
	Name   string `json:"-"`
	Origin Origin `json:"-"`

	// Type is "stdio" or "http" ("streamable-http"); empty means what the
	// other keys say. "sse" is refused: agentd speaks streamable HTTP.
	Type    string            `json:"type,omitempty"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	// Cwd is the server's working directory: absolute, ~/…, or relative
	// to the workspace root (the default).
	Cwd     string            `json:"cwd,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`

	// Sandbox is the profile a stdio server runs in: read (default),
	// workspace-write or full (unconfined).
	Sandbox string `json:"sandbox,omitempty"`
	// Network lets a stdio server open sockets (off by default).
	Network bool `json:"network,omitempty"`
	// Read and Write list more paths the server may read (and execute) or
	// write, beyond what its profile allows.
	Read  []string `json:"read,omitempty"`
	Write []string `json:"write,omitempty"`
	// StartupTimeout bounds connecting (start-up and MCP initialization);
	// CallTimeout bounds one tool call, time spent waiting for the user
	// on a server's question included.
	StartupTimeout Duration `json:"startupTimeout,omitempty"`
	CallTimeout    Duration `json:"callTimeout,omitempty"`
	// Disabled keeps a configured server from starting.
	Disabled bool `json:"disabled,omitempty"`
}

// Defaults for servers that do not set their own.
const (
	DefaultStartupTimeout = 30 * time.Second
	DefaultCallTimeout    = 2 * time.Minute
)

// Duration is a timeout written as a Go duration ("30s") or a number of
// seconds.
type Duration time.Duration

// UnmarshalJSON takes "30s", "2m" or 30.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil || v < 0 {
			return fmt.Errorf("%q is not a duration such as 30s or 2m", s)
		}
		*d = Duration(v)
		return nil
	}
	var n float64
	if err := json.Unmarshal(b, &n); err != nil || n < 0 {
		return fmt.Errorf("%s is not a duration such as \"30s\" or a number of seconds", b)
	}
	*d = Duration(n * float64(time.Second))
	return nil
}

// MarshalJSON writes the duration as Go does ("30s").
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// IsHTTP reports whether the server is reached over streamable HTTP.
func (s Server) IsHTTP() bool { return s.URL != "" }

// Transport names how the server is reached: "stdio" or "http".
func (s Server) Transport() string {
	if s.IsHTTP() {
		return "http"
	}
	return "stdio"
}

func (s Server) startupTimeout() time.Duration {
	if s.StartupTimeout > 0 {
		return time.Duration(s.StartupTimeout)
	}
	return DefaultStartupTimeout
}

func (s Server) callTimeout() time.Duration {
	if s.CallTimeout > 0 {
		return time.Duration(s.CallTimeout)
	}
	return DefaultCallTimeout
}

// profile is the sandbox profile of a stdio server.
func (s Server) profile() tools.Profile {
	p, err := tools.ParseProfile(s.Sandbox)
	if err != nil {
		return tools.ProfileRead
	}
	return p
}

// CommandLine is the server's command line as a shell would read it, or
// its URL: what the user approves.
func (s Server) CommandLine() string {
	if s.IsHTTP() {
		return s.URL
	}
	words := make([]string, 0, len(s.Args)+1)
	for _, w := range append([]string{s.Command}, s.Args...) {
		words = append(words, shellQuote(w))
	}
	return strings.Join(words, " ")
}

// Confinement says in words how a stdio server runs, for the approval and
// the status: "sandbox read, no network".
func (s Server) Confinement() string {
	if s.IsHTTP() {
		return "reached by agentd over HTTP"
	}
	net := "no network"
	if s.Network || s.profile() == tools.ProfileFull {
		net = "network"
	}
	return fmt.Sprintf("sandbox %s, %s", s.profile(), net)
}

var plainWord = lazy.Regexp(`^[A-Za-z0-9_@%+=:,./-]+$`)

func shellQuote(w string) string {
	if plainWord().MatchString(w) {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// Fingerprint identifies everything the user approves of a server: its
// command line or URL, environment, headers, directory and confinement. A
// workspace that changes any of them is asked about again.
func (s Server) Fingerprint() string {
	v := s
	v.Name, v.Origin, v.StartupTimeout, v.CallTimeout, v.Disabled = "", "", 0, 0, false
	data, _ := json.Marshal(v) // maps marshal with sorted keys
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// key identifies a running connection: servers with the same name and the
// same fingerprint (the user's and an editor's copy of it) share one.
func (s Server) key() string { return s.Name + "\x00" + s.Fingerprint() }

// knownKeys are the keys a server entry may have; others are reported.
var knownKeys = []string{"type", "command", "args", "env", "cwd", "url", "headers", "sandbox", "network", "read",
	"write", "startupTimeout", "callTimeout", "disabled"}

// ParseServers reads the value of an "mcpServers" key: an object of
// servers by name. It checks each (a command or a URL, not both; a known
// transport and sandbox profile) and returns a warning for each key it
// does not know. An error names the server.
func ParseServers(data []byte, origin Origin) ([]Server, []string, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil || raw == nil {
		return nil, nil, errors.New("mcpServers must be an object of servers by name")
	}
	names := make([]string, 0, len(raw))
	for name := range raw {
		names = append(names, name)
	}
	slices.Sort(names)
	var out []Server
	var warnings []string
	for _, name := range names {
		s, w, err := parseServer(name, raw[name])
		if err != nil {
			return nil, warnings, fmt.Errorf("%s: %w", name, err)
		}
		s.Origin = origin
		warnings = append(warnings, w...)
		out = append(out, s)
	}
	return out, warnings, nil
}

func parseServer(name string, data json.RawMessage) (Server, []string, error) {
	var s Server
	if strings.TrimSpace(name) == "" {
		return s, nil, errors.New("a server needs a name")
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		return s, nil, errors.New("must be an object with a command or a url")
	}
	var warnings []string
	for k := range keys {
		if !slices.Contains(knownKeys, k) {
			warnings = append(warnings, fmt.Sprintf("mcpServers.%s: unknown key %q (ignored)", name, k))
		}
	}
	slices.Sort(warnings)
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&s); err != nil {
		return s, warnings, fmt.Errorf("%w", unwrapJSON(err))
	}
	s.Name = name
	return s, warnings, s.Check()
}

// unwrapJSON says which field a decoding error is about, without Go type
// names.
func unwrapJSON(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("%s must be a %s", te.Field, jsonKind(te.Type.Kind().String()))
	}
	return err
}

func jsonKind(k string) string {
	switch k {
	case "slice":
		return "list of strings"
	case "map":
		return "object of strings"
	case "bool":
		return "boolean"
	}
	return k
}

// Check says what is wrong with a server's configuration.
func (s Server) Check() error {
	switch strings.ToLower(s.Type) {
	case "", "stdio", "http", "streamable-http", "streamablehttp":
	case "sse":
		return errors.New(`the SSE transport is not supported: give the server's streamable HTTP URL (usually ending in /mcp) with "type": "http"`)
	default:
		return fmt.Errorf("type %q is not stdio or http", s.Type)
	}
	switch {
	case s.Command == "" && s.URL == "":
		return errors.New("needs a command (a process on stdio) or a url (streamable HTTP)")
	case s.Command != "" && s.URL != "":
		return errors.New("has both a command and a url; keep one")
	case s.URL != "" && (s.Type == "stdio"):
		return errors.New(`type "stdio" needs a command, not a url`)
	case s.Command != "" && s.Type != "" && s.Type != "stdio":
		return fmt.Errorf("type %q needs a url, not a command", s.Type)
	}
	if s.URL != "" && !strings.Contains(s.URL, "${") {
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("url %q is not an http:// or https:// URL", s.URL)
		}
	}
	if s.Sandbox != "" {
		if _, err := tools.ParseProfile(s.Sandbox); err != nil {
			return err
		}
	}
	return nil
}

// expanded returns the server with ${VAR} and ${VAR:-default} replaced
// from lookup in its command, arguments, environment, directory, URL and
// headers, as Claude Code does; a variable that is not set and has no
// default is an error naming it.
func (s Server) expanded(lookup func(string) (string, bool)) (Server, error) {
	var missing []string
	ex := func(v string) string {
		return varRef().ReplaceAllStringFunc(v, func(m string) string {
			sub := varRef().FindStringSubmatch(m)
			if val, ok := lookup(sub[1]); ok {
				return val
			}
			if sub[2] != "" {
				return sub[3]
			}
			if !slices.Contains(missing, sub[1]) {
				missing = append(missing, sub[1])
			}
			return ""
		})
	}
	out := s
	out.Command, out.Cwd, out.URL = ex(s.Command), ex(s.Cwd), ex(s.URL)
	out.Args = make([]string, len(s.Args))
	for i, a := range s.Args {
		out.Args[i] = ex(a)
	}
	out.Env = expandMap(s.Env, ex)
	out.Headers = expandMap(s.Headers, ex)
	if len(missing) > 0 {
		return out, fmt.Errorf("the configuration uses %s, which is not set in agentd's environment", strings.Join(missing, ", "))
	}
	return out, nil
}

var varRef = lazy.Regexp(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

func expandMap(m map[string]string, ex func(string) string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = ex(v)
	}
	return out
}

// Variables lists the environment variables the configuration reads
// (${VAR}), sorted: the approval of a workspace server names them, since
// their values leave agentd.
func (s Server) Variables() []string {
	var out []string
	add := func(v string) {
		for _, m := range varRef().FindAllStringSubmatch(v, -1) {
			if !slices.Contains(out, m[1]) {
				out = append(out, m[1])
			}
		}
	}
	for _, v := range append([]string{s.Command, s.Cwd, s.URL}, s.Args...) {
		add(v)
	}
	for _, m := range []map[string]string{s.Env, s.Headers} {
		for _, v := range m {
			add(v)
		}
	}
	slices.Sort(out)
	return out
}

// absPath resolves a configured path: ~/… against HOME, a relative one
// against the workspace root.
func absPath(p, root string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, strings.TrimPrefix(strings.TrimPrefix(p, "~"), "/"))
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	return filepath.Clean(p)
}

// Describe is the server for a person, in one line: "stdio: npx -y pkg
// (sandbox read, no network)" or "http: https://…".
func (s Server) Describe() string {
	if s.IsHTTP() {
		return "http: " + s.URL
	}
	return fmt.Sprintf("stdio: %s (%s)", s.CommandLine(), s.Confinement())
}

// Summary lists servers for `agentd config`: "github (stdio: …), docs (http: …)".
func Summary(servers []Server) string {
	parts := make([]string, 0, len(servers))
	for _, s := range servers {
		d := s.Describe()
		if s.Disabled {
			d += ", disabled"
		}
		parts = append(parts, s.Name+" ("+d+")")
	}
	return strings.Join(parts, "; ")
}

// ReadWorkspace reads the servers of the workspace's .mcp.json (untrusted:
// each starts only once the user approved it). A missing file is no
// servers; a malformed one is an error naming it.
func ReadWorkspace(root string) ([]Server, []string, error) {
	path := filepath.Join(root, ".mcp.json")
	// Whatever a command left there: a named pipe would hang the daemon's
	// start, so only a regular file is read.
	data, err := readRegular(path, 1<<20)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var f struct {
		MCPServers json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(f.MCPServers) == 0 || string(f.MCPServers) == "null" {
		return nil, nil, nil
	}
	servers, warnings, err := ParseServers(f.MCPServers, OriginWorkspace)
	for i, w := range warnings {
		warnings[i] = path + ": " + w
	}
	if err != nil {
		return nil, warnings, fmt.Errorf("%s: mcpServers: %w", path, err)
	}
	return servers, warnings, nil
}
