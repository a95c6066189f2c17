package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/tools"
)

// State is where a server is.
type State string

// Server states.
const (
	// StateIdle: configured, not started (yet).
	StateIdle State = "idle"
	// StateStarting: the process is starting or the MCP handshake is on.
	StateStarting State = "starting"
	// StateConnected: it answers; its tools are listed.
	StateConnected State = "connected"
	// StateFailed: it did not start, or it stopped; Error says why. The
	// next call or run start tries again.
	StateFailed State = "failed"
	// StateNeedsApproval: a workspace server the user has not approved
	// yet; the next session's first run asks.
	StateNeedsApproval State = "needs_approval"
	// StateRejected: a workspace server the user rejected for good.
	StateRejected State = "rejected"
	// StateDisabled: "disabled": true in its configuration.
	StateDisabled State = "disabled"
)

// States lists every server state.
var States = []State{StateIdle, StateStarting, StateConnected, StateFailed, StateNeedsApproval, StateRejected, StateDisabled}

// retryAfter is how long a server that failed to start is left alone at
// run start (a call to one of its tools still tries at once).
const retryAfter = 30 * time.Second

// conn is one server's connection, restarted on demand.
type conn struct {
	m   *Manager
	srv Server

	mu        sync.Mutex // guards the fields below
	state     State
	err       string
	failedAt  time.Time
	startedAt time.Time
	starts    int
	gen       int           // which connection attempt is current
	ready     chan struct{} // closed when the current attempt ends
	session   *mcpsdk.ClientSession
	proc      *process
	stopCtx   context.CancelFunc
	tools     []*mcpsdk.Tool
	stale     bool      // the server said its tools changed
	callers   []*caller // calls in flight, the latest last: who a question goes to
	overflow  *overflow // the current connection's answer that was too large (HTTP)
}

// caller is a call in flight that a server's question may go to. Its
// timeout stops while the user is being asked.
type caller struct {
	ctx   context.Context
	asker tools.Asker
	tool  string
	clock *deadline
}

func newConn(m *Manager, s Server) *conn {
	return &conn{m: m, srv: s, state: StateIdle}
}

// start begins connecting unless the server is connected or starting
// already; it returns the channel closed when that attempt ends. force
// ignores the wait after a failed start.
func (c *conn) start(force bool) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.state == StateConnected || c.state == StateStarting:
		return c.ready
	case c.state == StateFailed && !force && time.Since(c.failedAt) < retryAfter:
		return closed
	}
	if !c.m.starting() {
		return closed // the manager was closed
	}
	c.gen++
	c.state, c.err, c.starts = StateStarting, "", c.starts+1
	c.ready = make(chan struct{})
	go func(gen int, ready chan struct{}) {
		defer c.m.starts.Done()
		c.connect(gen, ready)
	}(c.gen, c.ready)
	c.m.changed(c.srv.Name, StateStarting)
	return c.ready
}

var closed = func() chan struct{} { ch := make(chan struct{}); close(ch); return ch }()

// connect starts the server and does the MCP handshake, within the
// start-up timeout.
func (c *conn) connect(gen int, ready chan struct{}) {
	defer close(ready)
	log := c.m.log.With("mcp_server", c.srv.Name)
	t0 := time.Now()
	life, stop := context.WithCancel(c.m.ctx)
	ctx, cancel := context.WithTimeout(life, c.srv.startupTimeout())
	defer cancel()
	cs, proc, tls, err := c.dial(ctx, life)
	if err != nil && ctx.Err() == context.DeadlineExceeded && c.m.ctx.Err() == nil {
		err = fmt.Errorf("did not start within %s: %w", c.srv.startupTimeout(), err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen || c.m.ctx.Err() != nil {
		err = errors.Join(err, errors.New("superseded"))
	}
	if err != nil {
		stop()
		if cs != nil {
			_ = cs.Close()
		}
		if proc != nil {
			go proc.stop()
		}
		if gen == c.gen {
			c.state, c.err, c.failedAt = StateFailed, err.Error(), time.Now()
			c.m.changed(c.srv.Name, StateFailed)
		}
		log.Warn("MCP server did not start", "err", err)
		return
	}
	c.session, c.proc, c.stopCtx, c.tools, c.stale = cs, proc, stop, tls, false
	c.state, c.startedAt = StateConnected, time.Now()
	c.m.changed(c.srv.Name, StateConnected)
	log.Info("MCP server connected", "tools", len(tls), "startup", time.Since(t0).Round(time.Millisecond))
	go c.watch(gen, cs, proc)
}

// dial starts the process (or reaches the URL), connects and lists the
// tools. life bounds the process; ctx the start-up.
func (c *conn) dial(ctx, life context.Context) (*mcpsdk.ClientSession, *process, []*mcpsdk.Tool, error) {
	// Checked again at every start: the workspace or the environment may
	// have changed since the user was asked.
	if err := c.m.Refusal(c.srv); err != nil {
		return nil, nil, nil, err
	}
	s, err := c.srv.expanded(os.LookupEnv)
	if err != nil {
		return nil, nil, nil, err
	}
	var transport mcpsdk.Transport
	var proc *process
	ov := &overflow{}
	c.mu.Lock()
	c.overflow = ov
	c.mu.Unlock()
	if s.IsHTTP() {
		transport = &mcpsdk.StreamableClientTransport{Endpoint: s.URL, MaxRetries: 2,
			HTTPClient: &http.Client{Transport: headers{h: s.Headers, next: limitResponses{http.DefaultTransport, ov}}}}
	} else {
		proc, transport, err = spawn(life, s, c.m.opts)
		if err != nil {
			return nil, nil, nil, err
		}
	}
	cs, err := c.client().Connect(ctx, transport, nil)
	if err != nil {
		return nil, proc, nil, c.explain(proc, err)
	}
	tls, err := listTools(ctx, cs, c.m.log.With("mcp_server", c.srv.Name))
	if err != nil {
		return cs, proc, nil, c.explain(proc, fmt.Errorf("listing tools: %w", err))
	}
	return cs, proc, tls, nil
}

// explain adds how a stdio process ended to an error it caused.
func (c *conn) explain(proc *process, err error) error {
	if proc == nil {
		return err
	}
	select {
	case <-proc.done:
		return fmt.Errorf("the server %s (%w)", proc.exited(), err)
	case <-time.After(time.Second):
		return err
	}
}

func (c *conn) client() *mcpsdk.Client {
	cl := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "agentd", Version: c.m.opts.Version}, &mcpsdk.ClientOptions{
		Logger:                 c.m.log.With("mcp_server", c.srv.Name),
		ElicitationHandler:     c.elicit,
		ToolListChangedHandler: func(context.Context, *mcpsdk.ToolListChangedRequest) { c.listChanged() },
		Capabilities: &mcpsdk.ClientCapabilities{
			Elicitation: &mcpsdk.ElicitationCapabilities{Form: &mcpsdk.FormElicitationCapabilities{}},
			RootsV2:     &mcpsdk.RootCapabilities{},
		},
	})
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(c.m.opts.Root)}
	cl.AddRoots(&mcpsdk.Root{URI: u.String(), Name: filepath.Base(c.m.opts.Root)})
	return cl
}

// Bounds on what one server adds to every request to the model: a server
// that lists thousands of tools (or pages forever), or a tool with a
// schema of megabytes, would make every run fail or cost a fortune.
// OpenAI's endpoint takes at most 128 tools in all.
const (
	maxServerTools = 100
	maxSchema      = 64 << 10
)

// listTools lists a server's tools, sorted by name: the first
// maxServerTools it lists whose schema is within maxSchema.
func listTools(ctx context.Context, cs *mcpsdk.ClientSession, log *slog.Logger) ([]*mcpsdk.Tool, error) {
	var out []*mcpsdk.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		if data, _ := json.Marshal(t.InputSchema); len(data) > maxSchema {
			log.Warn("MCP tool left out: its input schema is too large", "tool", t.Name, "bytes", len(data), "max", maxSchema)
			continue
		}
		if len(out) == maxServerTools {
			log.Warn("MCP server offers more tools than agentd takes; the rest are left out", "max", maxServerTools)
			break
		}
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b *mcpsdk.Tool) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// watch marks the server failed when its connection ends: it crashed or
// the HTTP session broke. The next call starts it again.
func (c *conn) watch(gen int, cs *mcpsdk.ClientSession, proc *process) {
	_ = cs.Wait()
	why := "the connection closed"
	if proc != nil {
		<-proc.done
		why = "the server " + proc.exited()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen || c.state != StateConnected {
		return
	}
	c.dropLocked(why)
	c.m.log.Warn("MCP server stopped", "mcp_server", c.srv.Name, "why", why)
}

// dropLocked forgets the connection after a failure.
func (c *conn) dropLocked(why string) {
	c.state, c.err, c.failedAt = StateFailed, why, time.Time{} // a crash restarts at once
	c.gen++
	c.m.changed(c.srv.Name, StateFailed)
	if c.stopCtx != nil {
		c.stopCtx()
	}
	cs, proc := c.session, c.proc
	c.session, c.proc, c.stopCtx = nil, nil, nil
	go func() {
		if cs != nil {
			_ = cs.Close()
		}
		if proc != nil {
			proc.stop()
		}
	}()
}

func (c *conn) listChanged() {
	c.mu.Lock()
	c.stale = true
	c.mu.Unlock()
	c.m.log.Info("MCP server's tools changed; new sessions offer them", "mcp_server", c.srv.Name)
}

// refresh lists the tools again if the server said they changed.
func (c *conn) refresh(ctx context.Context) {
	c.mu.Lock()
	cs, stale := c.session, c.stale
	c.mu.Unlock()
	if !stale || cs == nil {
		return
	}
	tls, err := listTools(ctx, cs, c.m.log.With("mcp_server", c.srv.Name))
	if err != nil {
		c.m.log.Warn("MCP server: listing changed tools", "mcp_server", c.srv.Name, "err", err)
		return
	}
	c.mu.Lock()
	if c.session == cs {
		c.tools, c.stale = tls, false
	}
	c.mu.Unlock()
}

// snapshot returns the server's tools if it is connected.
func (c *conn) snapshot() []*mcpsdk.Tool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != StateConnected {
		return nil
	}
	return c.tools
}

// session returns a connected session, starting the server if need be and
// waiting for it within its start-up timeout.
func (c *conn) connected(ctx context.Context) (*mcpsdk.ClientSession, error) {
	ready := c.start(true)
	select {
	case <-ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != StateConnected {
		return nil, errors.New(c.err)
	}
	return c.session, nil
}

// call calls one of the server's tools. Every failure is a result the
// model reads: the server refused, timed out, or stopped (it is started
// again at the next call).
func (c *conn) call(ctx context.Context, tool string, args json.RawMessage, asker tools.Asker) tools.Result {
	name := c.srv.Name
	cs, err := c.connected(ctx)
	if err != nil {
		return failure("MCP server %s is not available: %v. Tell the user, or do without it.", name, err)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	clock := startDeadline(c.srv.callTimeout(), func() { cancel(errCallTimeout) })
	defer clock.stop()
	cl := &caller{ctx: ctx, asker: asker, tool: tool, clock: clock}
	c.mu.Lock()
	c.callers = append(c.callers, cl)
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.callers = slices.DeleteFunc(c.callers, func(x *caller) bool { return x == cl })
		c.mu.Unlock()
	}()
	res, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: tool, Arguments: args})
	switch {
	case err == nil:
		return resultOf(res)
	case errors.Is(context.Cause(ctx), errCallTimeout):
		return failure("The call to %s of MCP server %s timed out after %s; it was cancelled.", tool, name, c.srv.callTimeout())
	case ctx.Err() != nil:
		return failure("The call to %s of MCP server %s was cancelled.", tool, name)
	case c.gone(cs, err):
		return failure("MCP server %s stopped during the call (%s). It will be started again at the next call; "+
			"the call may or may not have taken effect.", name, c.whyGone())
	}
	if werr := (*jsonrpc.Error)(nil); errors.As(err, &werr) {
		return failure("MCP server %s refused the call to %s: %s", name, tool, werr.Message)
	}
	return failure("Calling %s of MCP server %s failed: %v", tool, name, err)
}

// gone reports whether the call failed because the connection failed
// (any error but the server's own answer), and then forgets the
// connection: the next call starts the server again.
func (c *conn) gone(cs *mcpsdk.ClientSession, err error) bool {
	var werr *jsonrpc.Error
	if errors.As(err, &werr) && !transportCodes[werr.Code] {
		return false
	}
	c.mu.Lock()
	proc, ov := c.proc, c.overflow
	c.mu.Unlock()
	why := "the connection failed: " + err.Error()
	if o := ov.failed(); o != nil {
		why = o.Error()
	}
	if proc != nil {
		select {
		case <-proc.done:
			why = "the server " + proc.exited()
		case <-time.After(time.Second):
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.session == cs && c.state == StateConnected {
		c.dropLocked(why)
	}
	return true
}

func (c *conn) whyGone() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != "" {
		return c.err
	}
	return "the connection closed"
}

// stop ends the connection and the process.
func (c *conn) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	if c.state == StateConnected {
		c.dropLocked("stopped")
	}
	c.state, c.err = StateIdle, ""
	c.m.changed(c.srv.Name, StateIdle)
}

// status is the server's state for the status request.
func (c *conn) status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := Status{State: c.state, Error: c.err, Starts: c.starts, ToolsChanged: c.stale}
	if c.state == StateConnected {
		t := c.startedAt.UTC()
		st.ConnectedAt = &t
		for _, t := range c.tools {
			st.Tools = append(st.Tools, toolInfo(c.srv.Name, t))
		}
	}
	return st
}

// headers adds the configured headers to every request to an HTTP server.
type headers struct {
	h    map[string]string
	next http.RoundTripper
}

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(h.h) == 0 {
		return h.next.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	for k, v := range h.h {
		r.Header.Set(k, v)
	}
	return h.next.RoundTrip(r)
}

func failure(format string, args ...any) tools.Result {
	return tools.Result{Output: fmt.Sprintf(format, args...), IsError: true}
}

var errCallTimeout = errors.New("the call timed out")

// transportCodes are the SDK's own error codes for a request the
// connection could not carry (the client or server closing, an HTTP
// request that failed): not the server's answer.
var transportCodes = map[int64]bool{-32003: true, -32004: true, -32005: true}

// deadline fires after d of running time; the time the user takes to
// answer a server's question does not count (pause, resume).
type deadline struct {
	mu     sync.Mutex
	left   time.Duration
	since  time.Time
	timer  *time.Timer
	paused int
	fire   func()
}

func startDeadline(d time.Duration, fire func()) *deadline {
	dl := &deadline{left: d, since: time.Now(), fire: fire}
	dl.timer = time.AfterFunc(d, fire)
	return dl
}

func (dl *deadline) pause() {
	dl.mu.Lock()
	defer dl.mu.Unlock()
	if dl.paused++; dl.paused == 1 && dl.timer.Stop() {
		dl.left -= time.Since(dl.since)
	}
}

func (dl *deadline) resume() {
	dl.mu.Lock()
	defer dl.mu.Unlock()
	if dl.paused--; dl.paused == 0 {
		dl.since = time.Now()
		dl.timer = time.AfterFunc(max(dl.left, 0), dl.fire)
	}
}

func (dl *deadline) stop() {
	dl.mu.Lock()
	defer dl.mu.Unlock()
	dl.timer.Stop()
}
