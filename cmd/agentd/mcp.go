package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agentd/agentd/rag"
	"github.com/agentd/agentd/tools"
	"github.com/agentd/agentd/tools/mcp"
)

// runMCP is `agentd mcp [--state-dir D] [dir]`: an MCP server on stdio that
// offers the workspace index (search, a file's outline) to any MCP client,
// Claude Code and Codex among them (docs/extensions.md). Logs go to stderr.
func runMCP(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newCommand("mcp", "agentd mcp [flags] [dir]",
		"An MCP server on stdio offering the index of the workspace dir (default: the current directory): the tools\n"+
			"search and outline, for Claude Code, Codex or any MCP client (docs/extensions.md). Logs go to stderr.")
	stateDir := fs.String("state-dir", "", "index state directory (default: per workspace, as for agentd search)")
	pos, code := fs.parse(args, stdout, stderr)
	if code >= 0 {
		return code
	}
	if len(pos) > 1 {
		return fs.fail(stderr, errors.New("at most one directory"))
	}
	root, dir, err := workspaceDirs(dirArg(pos, 0), *stateDir)
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		fmt.Fprintf(stderr, "agentd mcp: %v\n", err)
		return 1
	}
	idx := &workspaceIndex{root: root, stateDir: dir, log: stderr}
	var srvIdx mcp.Index = idx
	if cfg, _, err := loadConfig(); err == nil && cfg.TeamIndex.URL != "" {
		// A team index: one Team for the server's life, its overlay
		// watched, so each search costs a query, not a walk.
		opts := rag.Options{Root: root, StateDir: dir, Hidden: tools.AgentDirs(dir), Embedder: configuredEmbedder(stderr),
			Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
		if t := startTeam(cfg, opts, rag.Progress{}); t != nil {
			defer t.Close()
			srvIdx = &teamWorkspace{workspaceIndex: idx, team: t}
		}
	}
	err = mcp.Serve(ctx, readCloser{stdin}, writeCloser{stdout}, srvIdx, mcp.ServeOptions{Version: version, Root: root})
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
		fmt.Fprintf(stderr, "agentd mcp: %v\n", err)
		return 1
	}
	return 0
}

// workspaceIndex answers `agentd mcp`'s tools: search as `agentd search`
// does (the memory-mapped snapshot when the workspace has not changed,
// else an incremental update first), outlines from the files themselves.
type workspaceIndex struct {
	root, stateDir string
	log            io.Writer
	mu             sync.Mutex // one update of the index at a time
}

func (w *workspaceIndex) Search(ctx context.Context, query string, limit int) ([]rag.SearchHit, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return searchWorkspace(ctx, w.root, w.stateDir, query, nil, limit, w.log)
}

// teamWorkspace answers `agentd mcp`'s search from the team index.
type teamWorkspace struct {
	*workspaceIndex
	team *teamIndex
}

func (w *teamWorkspace) Search(ctx context.Context, query string, limit int) ([]rag.SearchHit, error) {
	w.team.waitBuilt(ctx)
	hits, partial, err := w.team.Search(ctx, query, limit)
	if partial && err == nil {
		// The team index went away: this machine's index answers, once built.
		w.team.waitBuilt(ctx)
		hits, _, err = w.team.Search(ctx, query, limit)
	}
	return hits, err
}

// SearchRepos implements mcp.RepoIndex.
func (w *teamWorkspace) SearchRepos(ctx context.Context, repos []string, query string, limit int) ([]rag.SearchHit, error) {
	all, err := w.team.Repos(ctx)
	if err != nil {
		return nil, errors.New(teamErr(err) + ": only this workspace can be searched now (leave repos out)")
	}
	names, err := rag.ResolveRepos(all, repos)
	if err != nil {
		return nil, err
	}
	w.team.waitBuilt(ctx)
	hits, _, err := w.team.SearchRepos(ctx, names, query, limit)
	return hits, err
}

// maxOutlined bounds the files outline reads.
const maxOutlined = 8 << 20

// Outline reads a workspace file, confined to the workspace (no .., no
// symlink out), and lists its declarations.
func (w *workspaceIndex) Outline(ctx context.Context, path string) ([]rag.Symbol, error) {
	rel := filepath.ToSlash(filepath.Clean(path))
	if filepath.IsAbs(path) {
		r, err := filepath.Rel(w.root, path)
		if err != nil || r == ".." || strings.HasPrefix(r, "../") {
			return nil, fmt.Errorf("%s is outside the workspace (%s)", path, w.root)
		}
		rel = filepath.ToSlash(r)
	}
	// Beneath the workspace handle, and only a regular file: a named pipe a
	// command left there would hold the call (and its goroutine) for good.
	f, err := tools.OpenWorkspaceFile(w.root, rel)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s does not exist in the workspace", rel)
		}
		if fi, serr := os.Stat(filepath.Join(w.root, filepath.FromSlash(rel))); serr == nil && fi.IsDir() && !strings.HasPrefix(rel, "../") {
			return nil, fmt.Errorf("%s is a directory; give a file", rel)
		}
		return nil, fmt.Errorf("%s cannot be read: %v (paths are relative to the workspace and stay inside it)", rel, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return nil, err
	case fi.IsDir():
		return nil, fmt.Errorf("%s is a directory; give a file", rel)
	case fi.Size() > maxOutlined:
		return nil, fmt.Errorf("%s is too large to outline (%d bytes)", rel, fi.Size())
	}
	src, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	if bytes.IndexByte(src[:min(len(src), 8000)], 0) >= 0 {
		return nil, fmt.Errorf("%s is a binary file", rel)
	}
	return rag.Outline(rel, src), nil
}

// readCloser and writeCloser give stdin and stdout the Close the MCP
// transport wants; closing them is left to the process's end.
type readCloser struct{ io.Reader }

func (readCloser) Close() error { return nil }

type writeCloser struct{ io.Writer }

func (writeCloser) Close() error { return nil }
