package mcp

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/rag"
)

// Index is the workspace index as `agentd mcp` offers it: cmd implements
// it with the memory-mapped snapshot when it is fresh, the index
// otherwise, so the ranking is the one of `agentd search`.
type Index interface {
	Search(ctx context.Context, query string, limit int) ([]rag.SearchHit, error)
	// Outline lists the declarations of a workspace file (a path relative
	// to the root); an error says why it cannot (outside the workspace,
	// missing, a directory, binary).
	Outline(ctx context.Context, path string) ([]rag.Symbol, error)
}

// RepoIndex is an Index that can search other repositories too: a team
// index (docs/index.md).
type RepoIndex interface {
	// SearchRepos searches the repositories the patterns name (names,
	// their last path elements, or "all"), the workspace's own overlaid
	// with its changes when among them.
	SearchRepos(ctx context.Context, repos []string, query string, limit int) ([]rag.SearchHit, error)
}

// ServeOptions configures Serve.
type ServeOptions struct {
	Version string
	// Root is the workspace, named in the server's instructions.
	Root   string
	Logger *slog.Logger
}

// SearchArgs are the search tool's arguments.
type SearchArgs struct {
	Query string   `json:"query" jsonschema:"What you are looking for: words, identifiers, an error message, a question about where something is done."`
	Limit int      `json:"limit,omitempty" jsonschema:"The most hits to return: 1 to 50, default 10."`
	Repos []string `json:"repos,omitempty" jsonschema:"Where a team index is configured: the repositories to search instead of this workspace alone, by name or its last path element (\"api\" for github.com/acme/api), or [\"all\"]. Hits from another repository name it."`
}

// SearchResult is the search tool's structured result.
type SearchResult struct {
	Hits []rag.SearchHit `json:"hits"`
}

// OutlineArgs are the outline tool's arguments.
type OutlineArgs struct {
	Path string `json:"path" jsonschema:"A file, relative to the workspace root."`
}

// OutlineResult is the outline tool's structured result.
type OutlineResult struct {
	Path    string       `json:"path"`
	Symbols []rag.Symbol `json:"symbols"`
}

const searchDescription = `Search the workspace's code offline, by meaning of the words: where is X done, which file defines Y, what handles Z. Ranks files the way a person looking for where to change something would (code before tests and docs unless asked), and says how well each hit matches; a query nothing answers gets no hits. Returns each hit's file, lines, enclosing declaration and text. Cheaper than grepping and reading whole files: use it first, then read what it points at.`

const outlineDescription = `List a file's declarations with their line ranges (Go: functions, methods as Type.Method, types, vars, consts; Markdown: headings; other languages: blocks that start with a definition). Use it to find where to read in a large file.`

// Serve answers one MCP client on in and out (stdio) until it goes away
// or ctx ends, with the tools search and outline.
func Serve(ctx context.Context, in io.ReadCloser, out io.WriteCloser, idx Index, opts ServeOptions) error {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "agentd", Title: "agentd workspace index", Version: opts.Version},
		&mcpsdk.ServerOptions{Logger: opts.Logger, Capabilities: &mcpsdk.ServerCapabilities{},
			Instructions: "agentd's offline index of the workspace " + opts.Root + ": search finds the code a question is about; outline lists a file's declarations."})
	readOnly := &mcpsdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(bool)}
	mcpsdk.AddTool(s, &mcpsdk.Tool{Name: "search", Title: "Search the workspace", Description: searchDescription, Annotations: readOnly},
		func(ctx context.Context, _ *mcpsdk.CallToolRequest, a SearchArgs) (*mcpsdk.CallToolResult, SearchResult, error) {
			return search(ctx, idx, a)
		})
	mcpsdk.AddTool(s, &mcpsdk.Tool{Name: "outline", Title: "Outline a file", Description: outlineDescription, Annotations: readOnly},
		func(ctx context.Context, _ *mcpsdk.CallToolRequest, a OutlineArgs) (*mcpsdk.CallToolResult, OutlineResult, error) {
			return outline(ctx, idx, a)
		})
	return s.Run(ctx, &mcpsdk.IOTransport{Reader: in, Writer: out})
}

func search(ctx context.Context, idx Index, a SearchArgs) (*mcpsdk.CallToolResult, SearchResult, error) {
	if strings.TrimSpace(a.Query) == "" {
		return nil, SearchResult{}, fmt.Errorf("query is empty: say what you are looking for")
	}
	limit := a.Limit
	if limit <= 0 {
		limit = 10
	}
	limit = min(limit, 50)
	var hits []rag.SearchHit
	var err error
	if len(a.Repos) > 0 {
		ri, ok := idx.(RepoIndex)
		if !ok {
			return nil, SearchResult{}, fmt.Errorf("no team index is configured: only this workspace can be searched (leave repos out)")
		}
		hits, err = ri.SearchRepos(ctx, a.Repos, a.Query, limit)
	} else {
		hits, err = idx.Search(ctx, a.Query, limit)
	}
	if err != nil {
		return nil, SearchResult{}, fmt.Errorf("searching the workspace: %w", err)
	}
	if hits == nil {
		hits = []rag.SearchHit{}
	}
	return text(formatHits(hits)), SearchResult{Hits: hits}, nil
}

func formatHits(hits []rag.SearchHit) string {
	if len(hits) == 0 {
		return "Nothing matched: no part of the workspace has two of the query's words or half of its weight. Try other words, or identifiers."
	}
	var b strings.Builder
	o := rag.ModelMarks
	o.ReadHint = ""
	rag.WriteHits(&b, hits, o)
	return b.String()
}

func outline(ctx context.Context, idx Index, a OutlineArgs) (*mcpsdk.CallToolResult, OutlineResult, error) {
	if strings.TrimSpace(a.Path) == "" {
		return nil, OutlineResult{}, fmt.Errorf("path is empty: give a file relative to the workspace root")
	}
	syms, err := idx.Outline(ctx, a.Path)
	if err != nil {
		return nil, OutlineResult{}, err
	}
	if syms == nil {
		syms = []rag.Symbol{}
	}
	var b strings.Builder
	if len(syms) == 0 {
		fmt.Fprintf(&b, "%s has no declarations agentd recognises; read it instead.", a.Path)
	}
	for _, s := range syms {
		kind := s.Kind
		if kind != "" {
			kind += " "
		}
		fmt.Fprintf(&b, "%d-%d  %s%s\n", s.StartLine, s.EndLine, kind, s.Name)
	}
	return text(b.String()), OutlineResult{Path: a.Path, Symbols: syms}, nil
}

func text(s string) *mcpsdk.CallToolResult {
	return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: s}}}
}
