package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/protocol"

	"github.com/agentd/agentd/tools"
)

// server is one language server process for the workspace, from its start
// to its exit.
type server struct {
	lang    language
	name    string // the program's name, for people: gopls
	root    string
	log     *slog.Logger
	proc    *tools.Proc
	conn    *conn
	stderr  *tools.Tail
	exited  chan struct{} // closed when the process has been waited for
	exit    int
	ready   chan struct{} // closed when initialize has been answered (or failed)
	initErr error
	caps    serverCaps
	syncMu  sync.Mutex // one sync at a time: versions go out in order

	mu       sync.Mutex // guards the fields below
	docs     map[string]*document
	diags    map[string]*published            // by absolute path
	asked    map[string][]protocol.Diagnostic // a language that is asked (Ask): the last answer by file
	seq      int64                            // publishes received
	changed  chan struct{}                    // closed and replaced at each publish
	lastUsed time.Time
	busy     int // requests in flight: an idle server has none
}

// document is a file the server has open: what it was sent.
type document struct {
	version int32
	text    string
	mtime   time.Time
	sentSeq int64 // the publish count when this version was sent
	used    time.Time
}

// published is a file's last diagnostics from the server, and the ones
// before (known: there were some).
type published struct {
	diags     []protocol.Diagnostic
	version   int32 // 0: the server did not say
	seq       int64
	prev      []protocol.Diagnostic
	prevKnown bool
}

// serverCaps is the part of the server's capabilities agentd reads: which
// requests it serves (each may be a bool or an options object).
type serverCaps struct {
	DefinitionProvider      json.RawMessage `json:"definitionProvider"`
	ReferencesProvider      json.RawMessage `json:"referencesProvider"`
	HoverProvider           json.RawMessage `json:"hoverProvider"`
	DocumentSymbolProvider  json.RawMessage `json:"documentSymbolProvider"`
	WorkspaceSymbolProvider json.RawMessage `json:"workspaceSymbolProvider"`
}

func provides(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s != "" && s != "false" && s != "null"
}

// maxOpen bounds the documents a server holds open; the least recently
// used is closed first.
const maxOpen = 64

// startOptions are what a server needs from the manager.
type startOptions struct {
	root     string
	sandbox  *tools.Sandbox
	cacheDir string
	log      *slog.Logger
}

// start starts lang's server (argv, its program already resolved) in the
// read profile and begins initializing it; ready is closed once it
// answered. The process lives until stop or its own exit.
func start(lang language, argv []string, opts startOptions) (*server, error) {
	s := &server{lang: lang, name: filepath.Base(argv[0]), root: opts.root, log: opts.log, stderr: &tools.Tail{Max: 8 << 10},
		exited: make(chan struct{}), ready: make(chan struct{}), docs: map[string]*document{}, diags: map[string]*published{}, asked: map[string][]protocol.Diagnostic{},
		changed: make(chan struct{}), lastUsed: time.Now()}
	cache := filepath.Join(opts.cacheDir, lang.Name)
	if err := os.MkdirAll(cache, 0o700); err != nil {
		return nil, fmt.Errorf("the server's cache directory: %w", err)
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	spec := tools.ProcSpec{Args: argv, Workspace: opts.root, Dir: opts.root, Confine: tools.Confine{Profile: tools.ProfileRead},
		Read: programDirs(argv[0]), Write: []string{cache}, Env: []string{"XDG_CACHE_HOME=" + cache},
		Stdin: inR, Stdout: outW, Stderr: s.stderr, WaitDelay: time.Second}
	s.proc, err = opts.sandbox.Command(context.Background(), spec)
	inR.Close() // the server's ends
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("starting %s: %w", s.name, err)
	}
	s.conn = newConn(outR, inW, s.notified, s.requested)
	go func() {
		_ = s.proc.Wait()
		s.exit = s.proc.ExitCode()
		s.conn.fail(errors.New(s.exitText()))
		outR.Close()
		close(s.exited)
	}()
	go s.initialize()
	return s, nil
}

// programDirs are what a confined server must read besides the system and
// the PATH's directories: its program's directory, or for a program of an
// npm package (node_modules/.bin/x → ../x/…) the node_modules holding it
// and its dependencies.
func programDirs(program string) []string {
	real, err := filepath.EvalSymlinks(program)
	if err != nil {
		return []string{filepath.Dir(program)}
	}
	dirs := []string{filepath.Dir(program)}
	if i := strings.LastIndex(real, string(filepath.Separator)+"node_modules"+string(filepath.Separator)); i >= 0 {
		return append(dirs, real[:i+len("/node_modules")])
	}
	return append(dirs, filepath.Dir(real))
}

// initTimeout bounds the initialize handshake; a server loading a big
// workspace answers it at once and loads afterwards.
const initTimeout = 60 * time.Second

func (s *server) initialize() {
	defer close(s.ready)
	ctx, cancel := context.WithTimeout(context.Background(), initTimeout)
	defer cancel()
	rootURI := fileURI(s.root)
	params := protocol.InitializeParams{
		ClientInfo: &protocol.ClientInfo{Name: "agentd"},
		RootURI:    rootURI,
		RootPath:   s.root,
		Capabilities: protocol.ClientCapabilities{
			Workspace: &protocol.WorkspaceClientCapabilities{Configuration: true, WorkspaceFolders: true,
				Symbol: &protocol.WorkspaceSymbolClientCapabilities{}},
			TextDocument: &protocol.TextDocumentClientCapabilities{
				Synchronization:    &protocol.TextDocumentSyncClientCapabilities{DidSave: true},
				Hover:              &protocol.HoverTextDocumentClientCapabilities{ContentFormat: []protocol.MarkupKind{protocol.Markdown, protocol.PlainText}},
				Definition:         &protocol.DefinitionTextDocumentClientCapabilities{LinkSupport: true},
				References:         &protocol.ReferencesTextDocumentClientCapabilities{},
				DocumentSymbol:     &protocol.DocumentSymbolClientCapabilities{HierarchicalDocumentSymbolSupport: true},
				PublishDiagnostics: &protocol.PublishDiagnosticsClientCapabilities{VersionSupport: true},
			},
			Window: &protocol.WindowClientCapabilities{WorkDoneProgress: true},
		},
		WorkspaceFolders:      []protocol.WorkspaceFolder{{URI: string(rootURI), Name: filepath.Base(s.root)}},
		InitializationOptions: s.lang.Init,
	}
	var res struct {
		Capabilities serverCaps `json:"capabilities"`
	}
	if err := s.conn.call(ctx, "initialize", initializeParams{params, nil}, &res); err != nil {
		s.initErr = s.failure("initializing", err)
		return
	}
	s.caps = res.Capabilities
	if err := s.conn.notify(ctx, "initialized", struct{}{}); err != nil {
		s.initErr = s.failure("initializing", err)
	}
}

// initializeParams sends processId null. The server runs in its own PID
// namespace, where the daemon's pid names no process, and servers built
// on vscode-languageserver exit when the process they are given is gone;
// the sandbox ends them with the daemon anyway.
type initializeParams struct {
	protocol.InitializeParams
	ProcessID *int32 `json:"processId"`
}

// failure describes a failed exchange: the process's end when it died.
func (s *server) failure(doing string, err error) error {
	select {
	case <-s.exited:
		return errors.New(s.exitText())
	case <-time.After(50 * time.Millisecond): // a crash is noticed a moment after the pipe breaks
	}
	select {
	case <-s.exited:
		return errors.New(s.exitText())
	default:
	}
	return fmt.Errorf("%s %s: %w", s.name, doing, err)
}

// exitText says how the process ended, with the end of its stderr.
func (s *server) exitText() string {
	return s.name + " " + tools.ExitText(s.exit, s.stderr.String(), 3)
}

// awaitReady waits for the handshake.
func (s *server) awaitReady(ctx context.Context) error {
	select {
	case <-s.ready:
		return s.initErr
	case <-ctx.Done():
		return fmt.Errorf("%s is still starting: %w", s.name, ctx.Err())
	}
}

// alive says whether the process still runs.
func (s *server) alive() bool {
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// stop asks the server to shut down, then kills what is left.
func (s *server) stop() {
	if s.alive() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		if s.initErr == nil {
			_ = s.conn.call(ctx, "shutdown", nil, nil)
			_ = s.conn.notify(ctx, "exit", nil)
		}
		select {
		case <-s.exited:
		case <-ctx.Done():
		}
		cancel()
	}
	_ = s.proc.Kill()
	s.conn.close()
	<-s.exited
}

// notified takes the server's notifications: diagnostics are kept.
func (s *server) notified(method string, params json.RawMessage) {
	switch method {
	case "textDocument/publishDiagnostics":
		var p protocol.PublishDiagnosticsParams
		if err := json.Unmarshal(params, &p); err != nil {
			return
		}
		path := uriPath(string(p.URI))
		if path == "" {
			return
		}
		s.log.Debug("diagnostics published", "server", s.name, "file", path, "version", p.Version, "count", len(p.Diagnostics))
		s.mu.Lock()
		s.seq++
		pub := &published{diags: p.Diagnostics, version: int32(p.Version), seq: s.seq}
		if old := s.diags[path]; old != nil {
			pub.prev, pub.prevKnown = old.diags, true
		}
		s.diags[path] = pub
		close(s.changed)
		s.changed = make(chan struct{})
		s.mu.Unlock()
	case "window/logMessage", "window/showMessage":
		var p struct {
			Type    int    `json:"type"`
			Message string `json:"message"`
		}
		if json.Unmarshal(params, &p) == nil && p.Type == 1 {
			// An error it logs says why it fails as well as its stderr.
			s.log.Debug("language server", "server", s.name, "error", p.Message)
			fmt.Fprintln(s.stderr, p.Message)
		}
	}
}

// requested answers the server's requests: no configuration (each server's
// defaults), every registration and progress token accepted, the one
// workspace folder.
func (s *server) requested(method string, params json.RawMessage) (any, error) {
	switch method {
	case "workspace/configuration":
		var p struct {
			Items []json.RawMessage `json:"items"`
		}
		_ = json.Unmarshal(params, &p)
		return make([]any, len(p.Items)), nil
	case "client/registerCapability", "client/unregisterCapability", "window/workDoneProgress/create", "window/showMessageRequest":
		return nil, nil
	case "workspace/workspaceFolders":
		return []protocol.WorkspaceFolder{{URI: string(fileURI(s.root)), Name: filepath.Base(s.root)}}, nil
	}
	return nil, &rpcError{Code: codeMethodNotFound, Message: "agentd does not serve " + method}
}

// fileURI is the file:// URI of an absolute path.
func fileURI(path string) protocol.DocumentURI {
	return protocol.DocumentURI((&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String())
}

// uriPath is the path of a file:// URI; "" for another scheme.
func uriPath(u string) string {
	parsed, err := url.Parse(u)
	if err != nil || parsed.Scheme != "file" {
		return ""
	}
	return filepath.FromSlash(parsed.Path)
}
