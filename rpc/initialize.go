package rpc

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"

	"go.lsp.dev/protocol"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/rpc/wire"
	"github.com/agentd/agentd/tools"
)

// initializeParams is the part of LSP's InitializeParams agentd reads.
type initializeParams struct {
	ClientInfo *struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"clientInfo"`
	RootURI          string `json:"rootUri"`
	RootPath         string `json:"rootPath"`
	WorkspaceFolders []struct {
		URI string `json:"uri"`
	} `json:"workspaceFolders"`
	Capabilities struct {
		Window struct {
			WorkDoneProgress bool `json:"workDoneProgress"`
		} `json:"window"`
		Experimental struct {
			Agentd *wire.ClientAgentCapabilities `json:"agentd"`
		} `json:"experimental"`
	} `json:"capabilities"`
	InitializationOptions *wire.InitializeOptions `json:"initializationOptions"`
}

type initializeResult struct {
	Capabilities    serverCapabilities  `json:"capabilities"`
	ServerInfo      protocol.ServerInfo `json:"serverInfo"`
	ProtocolVersion int                 `json:"protocolVersion"`
}

type serverCapabilities struct {
	TextDocumentSync map[string]any `json:"textDocumentSync"`
	Experimental     struct {
		Agentd wire.ServerAgentCapabilities `json:"agentd"`
	} `json:"experimental"`
}

func initialize(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p initializeParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	root, err := workspaceRoot(p)
	if err != nil {
		return nil, err
	}
	cfg, err := s.agentConfig(root, p)
	if err != nil {
		return nil, err
	}
	a, err := agent.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: starting the agent: %v", errInternal, err)
	}
	s.mu.Lock()
	s.agent, s.root, s.state = a, root, stateInitialized
	s.progress = p.Capabilities.Window.WorkDoneProgress
	s.mu.Unlock()
	client := "unknown"
	if p.ClientInfo != nil {
		client = p.ClientInfo.Name + " " + p.ClientInfo.Version
	}
	s.log.Info("initialized", "client", client, "root", root, "model", a.ModelConfig().String())
	return s.initializeResult(a), nil
}

func (s *Server) initializeResult(a *agent.Agent) initializeResult {
	var res initializeResult
	res.ServerInfo = protocol.ServerInfo{Name: "agentd", Version: s.opts.Version}
	res.ProtocolVersion = wire.ProtocolVersion
	res.Capabilities.TextDocumentSync = map[string]any{"openClose": true, "change": 1, "save": map[string]bool{"includeText": false}}
	res.Capabilities.Experimental.Agentd = wire.ServerAgentCapabilities{
		PromptKinds: strs(agent.RequestKinds),
		Decisions:   strs(tools.Decisions),
		Policies:    strs(tools.Modes),
		Tools:       a.ToolNames(),
		Index:       s.opts.OpenIndex != nil,
	}
	return res
}

// agentConfig merges the initialize options over the daemon's defaults.
func (s *Server) agentConfig(root string, p initializeParams) (agent.Config, error) {
	o := s.opts
	state, cache, err := o.StateDirs(root)
	if err != nil {
		return agent.Config{}, fmt.Errorf("%w: state directory: %v", errInternal, err)
	}
	s.mu.Lock()
	s.cacheDir = cache
	s.mu.Unlock()
	model, policy := o.Model, o.Policy
	if io := p.InitializationOptions; io != nil {
		if m := io.Model; m != nil {
			model.BaseURL = firstNonEmpty(m.BaseURL, model.BaseURL)
			model.APIKey = firstNonEmpty(m.APIKey, model.APIKey)
			model.Name = firstNonEmpty(m.Name, model.Name)
			model.ToolMode = firstNonEmpty(m.ToolMode, model.ToolMode)
		}
		policy = firstNonEmpty(tools.Mode(io.ApprovalPolicy), policy)
	}
	if policy != "" && !slices.Contains(tools.Modes, policy) {
		return agent.Config{}, fmt.Errorf("%w: initializationOptions.approvalPolicy %q is not a mode", errInvalidParams, policy)
	}
	var kinds []agent.RequestKind
	if c := p.Capabilities.Experimental.Agentd; c != nil && c.PromptKinds != nil {
		kinds = typed[agent.RequestKind](c.PromptKinds)
	}
	return agent.Config{Root: root, StateDir: state, UserConfigDir: o.UserConfigDir, Model: model, NewModel: o.NewModel,
		Policy: policy, RequestKinds: kinds, QuestionTimeout: o.QuestionTimeout, ConfirmTimeout: o.ConfirmTimeout,
		MaxSteps: o.MaxSteps, RetryBase: o.RetryBase, Searcher: s, Listener: s, Logger: s.log}, nil
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

func initialized(ctx context.Context, s *Server, params json.RawMessage) error {
	s.startIndexing()
	return nil
}

func firstNonEmpty[T ~string](v ...T) T {
	for _, s := range v {
		if s != "" {
			return s
		}
	}
	return ""
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
