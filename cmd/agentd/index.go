package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentd/agentd/rag"
	"github.com/agentd/agentd/rpc/term"
	"github.com/agentd/agentd/tools"
)

// runIndex is `agentd index [--state-dir D] [dir]`: build or refresh the
// workspace index; with --publish URL, publish the repository to a team
// index instead.
func runIndex(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newCommand("index", "agentd index [flags] [dir]",
		"Build or bring up to date the index of the workspace dir (default: the current directory).\n"+
			"With --publish URL, index the repository dir (its top level, a clean checkout) at its commit into the team\n"+
			"index at URL instead: the first time every file, then only what changed since the published commit\n"+
			"(docs/index.md). The password comes from PGPASSWORD or ~/.pgpass rather than the URL.")
	stateDir := fs.String("state-dir", "", "index state directory (default: per workspace, under $AGENTD_STATE_DIR or the user cache dir)")
	publish := fs.String("publish", "", "publish to the team index at this PostgreSQL URL (postgres://user@host:5432/db)")
	name := fs.String("name", "", "with --publish: the repository's name (default: its upstream or origin remote as host/path, else the directory's name)")
	commit := fs.String("commit", "", "with --publish: the commit published (default: the checked-out one; needed outside git)")
	full := fs.Bool("full", false, "with --publish: index every file again rather than what changed since the published commit")
	pos, code := fs.parse(args, stdout, stderr)
	if code >= 0 {
		return code
	}
	if len(pos) > 1 {
		return fs.fail(stderr, errors.New("one workspace at most"))
	}
	publishing := false
	fs.Visit(func(f *flag.Flag) { publishing = publishing || f.Name == "publish" })
	if publishing {
		return runPublish(ctx, *publish, dirArg(pos, 0), *name, *commit, *full, stderr)
	}
	start := time.Now()
	root, dir, err := workspaceDirs(dirArg(pos, 0), *stateDir)
	var ix *rag.Index
	if err == nil {
		ix, err = openIndex(ctx, root, dir, configuredEmbedder(stderr), stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "agentd index: %v\n", err)
		return 1
	}
	defer ix.Close()
	if err := buildWithProgress(ctx, ix, stderr); err != nil {
		fmt.Fprintf(stderr, "agentd index: %v\n", err)
		return 1
	}
	st := ix.Status()
	how := "keyword search"
	if st.Embedder != "" {
		how = "vectors from " + st.Embedder
	}
	fmt.Fprintf(stderr, "indexed %d files, %d chunks in %v (%s)\n", st.Files, st.Chunks,
		time.Since(start).Round(time.Millisecond), how)
	return 0
}

// runSearch is `agentd search [--json] [--limit N] [--state-dir D] "query"
// [dir]`: answer from the saved index when the workspace has not changed
// since (the snapshot, memory-mapped: no loading, no walk), otherwise index
// (incrementally) and answer; one JSON object a line with --json. It exits
// 1 when nothing matches, like grep.
func runSearch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newCommand("search", `agentd search [flags] "query" [dir]`,
		"Search the workspace dir (default: the current directory) for the code a question is about; exit 1 when\nnothing matches.")
	asJSON := fs.Bool("json", false, "print one JSON object per file: path, kind, score, match, chunks (startLine, endLine, symbol, cover, lines with marks, text; repo for another repository's)")
	limit := fs.Int("limit", 10, "maximum number of files")
	stateDir := fs.String("state-dir", "", "index state directory (default: per workspace, under $AGENTD_STATE_DIR or the user cache dir)")
	var repos repoFlag
	fs.Var(&repos, "repo", "with a team index (index.url): search these repositories instead of this workspace alone — names, their last path elements, or all (repeat or separate with commas)")
	pos, code := fs.parse(args, stdout, stderr)
	if code >= 0 {
		return code
	}
	var err error
	if len(pos) < 1 || len(pos) > 2 || strings.TrimSpace(pos[0]) == "" {
		err = errors.New("a query is required")
	}
	if err == nil && *limit < 1 {
		err = errors.New("--limit must be positive")
	}
	if err != nil {
		return fs.fail(stderr, err)
	}
	hits, err := searchWorkspace(ctx, dirArg(pos, 1), *stateDir, pos[0], repos, *limit, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "agentd search: %v\n", err)
		return 1
	}
	if len(hits) == 0 {
		if !*asJSON {
			fmt.Fprintln(stderr, "nothing matched: no chunk has two of the query's words or half of its weight")
		}
		return 1
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		for _, h := range hits {
			if err := enc.Encode(h); err != nil {
				return 1
			}
		}
		return 0
	}
	// A person reads files, each with its matching chunks and lines; the
	// query's words are marked in colour on a terminal.
	var o rag.FormatOptions
	if term.IsTerminal(stdout) {
		o = rag.TerminalMarks
	}
	rag.WriteHits(stdout, hits, o)
	return 0
}

// searchWorkspace answers from the team index when one is configured
// (searchTeam); else from the memory-mapped snapshot (and its delta) when
// it is fresh or a few files changed (and no embedder needs the query
// embedded), else opens, updates and saves the index.
func searchWorkspace(ctx context.Context, dir, stateDir, query string, repos []string, limit int, stderr io.Writer) ([]rag.SearchHit, error) {
	root, stateDir, err := workspaceDirs(dir, stateDir)
	if err != nil {
		return nil, err
	}
	cfg, _, cerr := loadConfig()
	if cerr == nil && cfg.TeamIndex.URL != "" {
		st, err := openTeam(ctx, cfg)
		if err != nil {
			return nil, err
		}
		defer st.Close()
		return searchTeam(ctx, cfg, st, root, stateDir, query, repos, limit, stderr)
	}
	if len(repos) > 0 {
		return nil, errors.New("--repo searches a team index: set index.url (or AGENTD_INDEX_URL) first")
	}
	emb := configuredEmbedder(stderr)
	if emb == nil {
		if v, err := rag.OpenView(root, stateDir); err == nil {
			defer v.Close()
			// A few changed files go into a delta beside the snapshot, in
			// milliseconds; a directory added or removed, or many files,
			// take the full update below.
			err := v.Update(ctx, tools.AgentDirs(stateDir)...)
			if err == nil {
				return v.Search(ctx, query, limit)
			}
			if !errors.Is(err, rag.ErrTooManyChanges) {
				fmt.Fprintf(stderr, "agentd: index delta: %v (updating the whole index)\n", err)
			}
		}
	}
	ix, err := openIndex(ctx, root, stateDir, emb, stderr)
	if err != nil {
		return nil, err
	}
	defer ix.Close()
	if err := buildWithProgress(ctx, ix, stderr); err != nil {
		return nil, err
	}
	hits, _, err := ix.Search(ctx, query, limit)
	return hits, err
}

func dirArg(pos []string, i int) string {
	if len(pos) > i {
		return pos[i]
	}
	return "."
}

// workspaceDirs resolves the workspace root and its state directory.
func workspaceDirs(dir, stateDir string) (string, string, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return "", "", err
	}
	if stateDir == "" {
		if stateDir, err = rag.StateDirFor(root); err != nil {
			return "", "", err
		}
	}
	return root, stateDir, nil
}

// configuredEmbedder is the embedding endpoint of the user's config, or
// nil (keyword search, the default).
func configuredEmbedder(stderr io.Writer) rag.Embedder {
	cfg, _, err := loadConfig()
	if err != nil {
		fmt.Fprintf(stderr, "agentd: settings: %v (searching without an embedding endpoint)\n", err)
		return nil
	}
	if e := cfg.Embeddings; e.BaseURL != "" && e.Model != "" {
		return rag.NewOpenAIEmbedder(e.BaseURL, cfg.EmbeddingsKey(), e.Model)
	}
	return nil
}

// openIndex opens the index of root; warnings go to stderr.
func openIndex(ctx context.Context, root, stateDir string, emb rag.Embedder, stderr io.Writer) (*rag.Index, error) {
	return rag.Open(ctx, rag.Options{
		Root:     root,
		StateDir: stateDir,
		Hidden:   tools.AgentDirs(stateDir),
		Embedder: emb,
		Logger:   slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
}

// buildWithProgress runs Build, drawing a bar on stderr when it is a
// terminal; pipes and logs get nothing but the summary.
func buildWithProgress(ctx context.Context, ix *rag.Index, stderr io.Writer) error {
	if !term.IsTerminal(stderr) {
		return ix.Build(ctx, nil)
	}
	var last time.Time
	drawn := false
	err := ix.Build(ctx, func(done, total int) {
		if total <= 1 || (time.Since(last) < 100*time.Millisecond && done < total) {
			return
		}
		last = time.Now()
		drawn = true
		const width = 30
		n := width * done / total
		fmt.Fprintf(stderr, "\rindexing [%s%s] %d/%d files", strings.Repeat("#", n), strings.Repeat(".", width-n), min(done, total-1), total-1)
	})
	if drawn {
		fmt.Fprint(stderr, "\r\033[K")
	}
	return err
}
