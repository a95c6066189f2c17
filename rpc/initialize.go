package rpc

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/rpc/wire"
	"github.com/agentd/agentd/tools"
)

// initializeParams is the part of LSP's InitializeParams agentd reads.
type initializeParams struct {
	ClientInfo *struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"clientInfo,omitempty"`
	// The workspace: the first folder, else rootUri, else rootPath, else
	// the daemon's working directory.
	RootURI          string `json:"rootUri,omitempty"`
	RootPath         string `json:"rootPath,omitempty"`
	WorkspaceFolders []struct {
		URI string `json:"uri"`
	} `json:"workspaceFolders,omitempty"`
	// Capabilities: whether the editor shows LSP progress (the index's
	// build), and agentd's own (omitempty: none of it is required).
	Capabilities struct {
		Window struct {
			WorkDoneProgress bool `json:"workDoneProgress,omitempty"`
		} `json:"window,omitempty"`
		Experimental struct {
			Agentd *wire.ClientAgentCapabilities `json:"agentd,omitempty"`
		} `json:"experimental,omitempty"`
	} `json:"capabilities,omitempty"`
	// InitializationOptions is shaped like config.json (wire.InitializeOptions
	// lists what the editor may set); agent.Config reads it.
	InitializationOptions json.RawMessage `json:"initializationOptions,omitempty" contract:"InitializeOptions"`
}

type initializeResult struct {
	Capabilities    serverCapabilities `json:"capabilities"`
	ServerInfo      serverInfo         `json:"serverInfo"`
	ProtocolVersion int                `json:"protocolVersion"`
}

// serverInfo is LSP's ServerInfo.
type serverInfo struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

type serverCapabilities struct {
	TextDocumentSync map[string]any `json:"textDocumentSync"`
	Experimental     struct {
		Agentd wire.ServerAgentCapabilities `json:"agentd"`
	} `json:"experimental"`
}

func initialize(ctx context.Context, s *Server, p initializeParams) (initializeResult, error) {
	root, err := workspaceRoot(p)
	if err != nil {
		return initializeResult{}, err
	}
	cfg, err := s.agentConfig(root, p)
	if err != nil {
		return initializeResult{}, err
	}
	a, err := agent.New(cfg)
	if err != nil {
		return initializeResult{}, fmt.Errorf("%w: starting the agent: %v", errInternal, err)
	}
	s.mu.Lock()
	s.agent, s.root, s.state = a, root, stateInitialized
	s.progress = p.Capabilities.Window.WorkDoneProgress
	s.mu.Unlock()
	client := "unknown"
	if p.ClientInfo != nil {
		client = p.ClientInfo.Name + " " + p.ClientInfo.Version
	}
	s.log.Info("initialized", "client", client, "root", root, "model", a.ModelConfig().String(), "sandbox", a.SandboxStatus().Summary)
	return s.initializeResult(a), nil
}

func (s *Server) initializeResult(a *agent.Agent) initializeResult {
	var res initializeResult
	res.ServerInfo = serverInfo{Name: "agentd", Version: s.opts.Version}
	res.ProtocolVersion = wire.ProtocolVersion
	res.Capabilities.TextDocumentSync = map[string]any{"openClose": true, "change": 1, "save": map[string]bool{"includeText": false}}
	res.Capabilities.Experimental.Agentd = wire.ServerAgentCapabilities{
		PromptKinds: strs(agent.RequestKinds),
		Decisions:   strs(tools.Decisions),
		Policies:    strs(agent.Modes),
		Tools:       a.ToolNames(),
		Index:       s.opts.OpenIndex != nil,
		Sandbox:     sandboxCapability(a.SandboxStatus()),

		ReasoningEfforts: agent.ReasoningEfforts,
		Undo:             true,
	}
	return res
}

func sandboxCapability(st tools.SandboxStatus) wire.SandboxCapability {
	return wire.SandboxCapability{Active: st.Active, Profiles: strs(st.Profiles), Landlock: st.Landlock, Off: st.Off,
		Summary: st.Summary, Problems: st.Problems}
}

// agentConfig is the daemon's configuration with the initialize options
// over it, and what this front end fills: the workspace, its state, the
// request kinds the editor shows, and the server as listener and searcher.
func (s *Server) agentConfig(root string, p initializeParams) (agent.Config, error) {
	state, cache, err := s.opts.StateDirs(root)
	if err != nil {
		return agent.Config{}, fmt.Errorf("%w: state directory: %v", errInternal, err)
	}
	s.mu.Lock()
	s.cacheDir = cache
	s.mu.Unlock()
	cfg := s.opts.Agent
	warnings, err := cfg.LoadJSON(p.InitializationOptions, "initializationOptions", true)
	if err != nil {
		return agent.Config{}, fmt.Errorf("%w: %v", errInvalidParams, err)
	}
	for _, w := range warnings {
		s.log.Warn(w)
	}
	if c := p.Capabilities.Experimental.Agentd; c != nil && c.PromptKinds != nil {
		cfg.RequestKinds = typed[agent.RequestKind](c.PromptKinds)
	}
	if c := p.Capabilities.Experimental.Agentd; c != nil && c.Language != nil {
		lang := &editorLanguage{s: s, caps: *c.Language}
		cfg.Language = lang
		if c.Language.Buffers {
			cfg.Files = func(string) tools.FileSystem { return editorFiles{lang: lang, root: root} }
		}
		s.mu.Lock()
		s.lang = lang
		s.mu.Unlock()
	}
	if c := p.Capabilities.Experimental.Agentd; c != nil {
		cfg.AnyRequestKind = c.GenericPrompts
	}
	cfg.Root, cfg.StateDir, cfg.FromEditor = root, state, true
	cfg.Listener, cfg.Searcher, cfg.Logger = s, s, s.log
	return cfg, nil
}

// workspaceRoot picks the workspace: the first folder, rootUri, rootPath, or
// the working directory; absolute with symlinks resolved.
func workspaceRoot(p initializeParams) (string, error) {
	var root string
	switch {
	case len(p.WorkspaceFolders) > 0:
		root = uriPath(p.WorkspaceFolders[0].URI)
	case p.RootURI != "":
		root = uriPath(p.RootURI)
	case p.RootPath != "":
		root = p.RootPath
	default:
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("%w: no workspace given and no working directory: %v", errInvalidParams, err)
		}
		root = wd
	}
	if root == "" {
		return "", fmt.Errorf("%w: rootUri must be a file:// URI", errInvalidParams)
	}
	abs, err := filepath.Abs(root)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return "", fmt.Errorf("%w: workspace %s: %v", errInvalidParams, root, err)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%w: workspace %s is not a directory", errInvalidParams, root)
	}
	return abs, nil
}

// uriPath turns a file:// URI into a path; "" for other schemes.
func uriPath(u string) string {
	parsed, err := url.Parse(u)
	if err != nil || parsed.Scheme != "file" {
		return ""
	}
	return filepath.FromSlash(parsed.Path)
}

func initialized(ctx context.Context, s *Server, _ struct{}) error {
	s.startIndexing()
	return nil
}

// strs lists typed words as the strings the wire carries.
func strs[T ~string](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = string(x)
	}
	return out
}

// typed reads strings from the wire as typed words.
func typed[T ~string](xs []string) []T {
	out := make([]T, len(xs))
	for i, x := range xs {
		out[i] = T(x)
	}
	return out
}
