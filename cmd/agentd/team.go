package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/rag"
	"github.com/agentd/agentd/rag/pgstore"
	"github.com/agentd/agentd/tools"
)

// The team index (docs/index.md): CI publishes repositories to PostgreSQL
// with `agentd index --publish URL`; with index.url set, the daemon,
// `agentd search` and `agentd mcp` search the workspace's repository there,
// overlaid with the workspace's own changes. The URL is never printed nor
// logged (pgstore.Describe names the database without its password), and
// never reaches the model: search results carry paths and text only.

// runPublish is `agentd index --publish URL [dir]`.
func runPublish(ctx context.Context, url, dir, name, commit string, full bool, stderr io.Writer) int {
	if strings.TrimSpace(url) == "" {
		fmt.Fprintln(stderr, "agentd index: --publish needs the team index's URL (postgres://user@host:5432/db; the password from PGPASSWORD or ~/.pgpass)")
		return 2
	}
	start := time.Now()
	pub, err := pgstore.OpenPublisher(ctx, url)
	if err != nil {
		fmt.Fprintf(stderr, "agentd index: the team index at %s: %v\n", pgstore.Describe(url), err)
		return 1
	}
	defer pub.Close()
	root, stateDir, err := workspaceDirs(dir, "")
	if err != nil {
		fmt.Fprintf(stderr, "agentd index: %v\n", err)
		return 1
	}
	res, err := rag.Publish(ctx, pub, rag.PublishOptions{
		Root: root, Repo: name, Commit: commit, Full: full,
		Embedder: configuredEmbedder(stderr),
		Hidden:   tools.AgentDirs(stateDir),
		Logger:   slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		fmt.Fprintf(stderr, "agentd index: %v\n", err)
		return 1
	}
	short := func(c string) string { return c[:min(len(c), 12)] }
	switch {
	case res.Unchanged:
		fmt.Fprintf(stderr, "%s@%s is published already (%s)\n", res.Repo, short(res.Commit), pgstore.Describe(url))
	case res.Incremental:
		fmt.Fprintf(stderr, "published %s@%s to %s: %d changed files read since %s (%d chunks, %d files retired); %d chunks live in %d segments, in %v\n",
			res.Repo, short(res.Commit), pgstore.Describe(url), res.Files, short(res.From), res.Chunks, res.Retired, res.Live, res.Segments,
			time.Since(start).Round(time.Millisecond))
	default:
		fmt.Fprintf(stderr, "published %s@%s to %s: %d files, %d chunks, in %v\n",
			res.Repo, short(res.Commit), pgstore.Describe(url), res.Files, res.Chunks, time.Since(start).Round(time.Millisecond))
	}
	return 0
}

// teamOptions are a Team's options for the workspace root.
func teamOptions(cfg agent.Config, st rag.Store, opts rag.Options) rag.TeamOptions {
	return rag.TeamOptions{Options: opts, Store: st, Repo: cfg.TeamIndex.Repo}
}

// openTeam opens the configured team index for reading; nil when none is
// configured.
func openTeam(ctx context.Context, cfg agent.Config) (*pgstore.Store, error) {
	if cfg.TeamIndex.URL == "" {
		return nil, nil
	}
	return pgstore.Open(ctx, cfg.TeamIndex.URL, pgstore.Options{})
}

// teamIndex is a Team that closes its store when it closes.
type teamIndex struct {
	*rag.Team
	st rag.Store
}

// waitBuilt waits, at most indexWait, for the answering index's first
// build.
func (t *teamIndex) waitBuilt(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, indexWait)
	defer cancel()
	t.WaitBuilt(ctx)
}

func (t *teamIndex) Close() error {
	err := t.Team.Close()
	t.st.Close()
	return err
}

// startTeam starts the daemon's index on the team index, or returns nil
// when none is configured (or its URL is unusable: then said in the log,
// and the local index serves).
func startTeam(cfg agent.Config, opts rag.Options, p rag.Progress) *teamIndex {
	st, err := openTeam(context.Background(), cfg)
	if err != nil && opts.Logger != nil {
		opts.Logger.Warn("team index: not used", "err", err)
	}
	if st == nil {
		return nil
	}
	return &teamIndex{rag.StartTeam(teamOptions(cfg, st, opts), p), st}
}

// searchTeam is `agentd search` with a team index: the workspace's
// repository at its published commit overlaid with the workspace's own
// changes (and other repositories with --repo). A notice on stderr says
// when the local index answers instead.
func searchTeam(ctx context.Context, cfg agent.Config, st rag.Store, root, stateDir, query string, repos []string, limit int, stderr io.Writer) ([]rag.SearchHit, error) {
	opts := rag.Options{Root: root, StateDir: stateDir, Hidden: tools.AgentDirs(stateDir),
		Embedder: configuredEmbedder(stderr), Logger: slog.New(slog.DiscardHandler)}
	to := teamOptions(cfg, st, opts)
	to.NoWatch = true
	tm := rag.StartTeam(to, rag.Progress{})
	defer tm.Close()
	if err := tm.WaitBuilt(ctx); err != nil {
		return nil, err
	}
	var names []string
	if len(repos) > 0 {
		all, err := tm.Repos(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "agentd search: --repo: %s; searching this workspace alone\n", teamErr(err))
			repos = nil
		} else if names, err = rag.ResolveRepos(all, repos); err != nil {
			return nil, err
		}
	}
	search := func() ([]rag.SearchHit, bool, error) {
		if len(repos) == 0 {
			return tm.Search(ctx, query, limit)
		}
		return tm.SearchRepos(ctx, names, query, limit)
	}
	hits, partial, err := search()
	if partial && err == nil {
		// The team index went away meanwhile: this machine's index
		// answers once built.
		if err := tm.WaitBuilt(ctx); err != nil {
			return nil, err
		}
		hits, _, err = search()
	}
	if ts := tm.Status().Team; ts != nil && ts.Notice != "" {
		fmt.Fprintf(stderr, "agentd search: %s (%s)\n", ts.Notice, ts.Reason)
	}
	return hits, err
}

// teamErr words a store error for a person (never with the URL).
func teamErr(err error) string {
	if errors.Is(err, rag.ErrUnreachable) {
		return "the team index is unreachable"
	}
	return err.Error()
}

// repoFlag collects --repo, repeated or comma-separated.
type repoFlag []string

func (r *repoFlag) String() string { return strings.Join(*r, ",") }

func (r *repoFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*r = append(*r, s)
		}
	}
	return nil
}
