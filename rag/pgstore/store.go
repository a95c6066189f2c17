package pgstore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentd/agentd/rag"
)

// Options tunes a connection.
type Options struct {
	// MaxConns bounds the pool (default 4: a daemon's queries are short).
	MaxConns int32
	// ConnectTimeout bounds a connection attempt when the URL sets none
	// (default 5 s): an unreachable database must not hold a search up.
	ConnectTimeout time.Duration
}

// Store is the team index as a reader sees it: a rag.Store over a pool of
// read-only connections.
type Store struct {
	pool *pgxpool.Pool
}

var (
	_ rag.Store          = (*Store)(nil)
	_ rag.SegmentsReader = (*Store)(nil)
)

// Open returns a store reading the team index at url. It does not connect
// until the first query, so a database that is down makes queries fail
// (with rag.ErrUnreachable), not Open. Every connection is read-only
// (default_transaction_read_only), whatever the role may do. The password
// comes from the URL, $PGPASSWORD or a password file ($PGPASSFILE,
// ~/.pgpass), as with libpq.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	cfg, err := poolConfig(url, opts)
	if err != nil {
		return nil, err
	}
	cfg.ConnConfig.RuntimeParams["default_transaction_read_only"] = "on"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("team index: %w", err)
	}
	return &Store{pool: pool}, nil
}

func poolConfig(rawURL string, opts Options) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		// pgx's message may quote the URL, password included.
		return nil, errors.New("team index: the URL is not a PostgreSQL connection string (postgres://user@host:port/db)")
	}
	cfg.MaxConns = opts.MaxConns
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = 4
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = opts.ConnectTimeout
		if cfg.ConnConfig.ConnectTimeout <= 0 {
			cfg.ConnConfig.ConnectTimeout = 5 * time.Second
		}
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = "agentd"
	return cfg, nil
}

// Describe names the database of a URL for a person: user@host:port/db,
// never the password.
func Describe(rawURL string) string {
	cfg, err := pgconn.ParseConfig(rawURL)
	if err != nil {
		if u, err := url.Parse(rawURL); err == nil {
			u.User = nil
			u.RawQuery = ""
			return u.Redacted()
		}
		return "(an unreadable URL)"
	}
	return fmt.Sprintf("%s@%s:%d/%s", cfg.User, cfg.Host, cfg.Port, cfg.Database)
}

// Close closes the pool.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// headsSQL lists the heads of some repositories (all when $1 is NULL)
// with their parts, in order.
const headsSQL = `
SELECT r.name, c.commit, p.segment, p.dead
FROM agentd.repos r
JOIN agentd.commits c ON c.id = r.head
JOIN agentd.parts p ON p.commit = c.id
WHERE $1::text[] IS NULL OR r.name = ANY ($1)
ORDER BY r.name, p.seq`

// postingsSQL reads terms' postings in some segments.
const postingsSQL = `
SELECT segment, term, df, data FROM agentd.postings
WHERE term = ANY ($1) AND segment = ANY ($2)`

// existsSQL says which segments still exist. It runs after postingsSQL:
// a segment present now was present then (segments are deleted for good,
// ids never reused), so its postings were complete.
const existsSQL = `SELECT id FROM agentd.segments WHERE id = ANY ($1)`

// Fetch implements rag.Store: one round trip.
func (s *Store) Fetch(ctx context.Context, req rag.FetchRequest) (*rag.FetchResult, error) {
	var repos []string
	if len(req.Repos) > 0 {
		repos = req.Repos
	}
	b := &pgx.Batch{}
	b.Queue(headsSQL, repos)
	if len(req.Segments) > 0 {
		b.Queue(postingsSQL, req.Terms, req.Segments)
		b.Queue(existsSQL, req.Segments)
	}
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	res := &rag.FetchResult{}
	rows, err := br.Query()
	if err != nil {
		return nil, classify(err)
	}
	for rows.Next() {
		var repo, commit string
		var seg int64
		var dead []int32
		if err := rows.Scan(&repo, &commit, &seg, &dead); err != nil {
			return nil, classify(err)
		}
		if n := len(res.Heads); n == 0 || res.Heads[n-1].Repo != repo {
			res.Heads = append(res.Heads, rag.Head{Repo: repo, Commit: commit})
		}
		h := &res.Heads[len(res.Heads)-1]
		h.Parts = append(h.Parts, rag.Part{Segment: seg, Dead: dead})
	}
	if err := rows.Err(); err != nil {
		return nil, classify(err)
	}
	if len(req.Segments) == 0 {
		return res, nil
	}
	rows, err = br.Query()
	if err != nil {
		return nil, classify(err)
	}
	for rows.Next() {
		var tp rag.TermPostings
		if err := rows.Scan(&tp.Segment, &tp.Term, &tp.DF, &tp.Data); err != nil {
			return nil, classify(err)
		}
		res.Postings = append(res.Postings, tp)
	}
	if err := rows.Err(); err != nil {
		return nil, classify(err)
	}
	rows, err = br.Query()
	if err != nil {
		return nil, classify(err)
	}
	present := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, classify(err)
		}
		present[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, classify(err)
	}
	for _, id := range req.Segments {
		if !present[id] {
			res.Gone = append(res.Gone, id)
		}
	}
	return res, nil
}

// Segment implements rag.Store.
func (s *Store) Segment(ctx context.Context, id int64) (*rag.Segment, error) {
	return readSegment(ctx, s.pool, id)
}

func readSegment(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, id int64) (*rag.Segment, error) {
	var meta []byte
	err := q.QueryRow(ctx, `SELECT meta FROM agentd.segments WHERE id = $1`, id).Scan(&meta)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("segment %d: %w", id, rag.ErrSegmentGone)
	}
	if err != nil {
		return nil, classify(err)
	}
	return rag.UnmarshalSegment(id, meta)
}

// Segments implements rag.SegmentsReader: one round trip.
func (s *Store) Segments(ctx context.Context, ids []int64) ([]*rag.Segment, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, meta FROM agentd.segments WHERE id = ANY ($1)`, ids)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	var out []*rag.Segment
	for rows.Next() {
		var id int64
		var meta []byte
		if err := rows.Scan(&id, &meta); err != nil {
			return nil, classify(err)
		}
		seg, err := rag.UnmarshalSegment(id, meta)
		if err != nil {
			return nil, err
		}
		out = append(out, seg)
	}
	return out, classify(rows.Err())
}

// Chunks implements rag.Store.
func (s *Store) Chunks(ctx context.Context, refs []rag.ChunkRef) ([]rag.ChunkText, error) {
	segs := make([]int64, len(refs))
	docs := make([]int32, len(refs))
	for i, r := range refs {
		segs[i], docs[i] = r.Segment, r.Doc
	}
	rows, err := s.pool.Query(ctx, `
SELECT c.segment, c.doc, c.end_line, c.symbol, c.text
FROM unnest($1::bigint[], $2::int[]) AS r (segment, doc)
JOIN agentd.chunks c ON c.segment = r.segment AND c.doc = r.doc`, segs, docs)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	var out []rag.ChunkText
	for rows.Next() {
		var c rag.ChunkText
		if err := rows.Scan(&c.Segment, &c.Doc, &c.End, &c.Symbol, &c.Text); err != nil {
			return nil, classify(err)
		}
		out = append(out, c)
	}
	return out, classify(rows.Err())
}

// Repos lists the published repositories: name, commit and chunks.
func (s *Store) Repos(ctx context.Context) ([]RepoInfo, error) {
	rows, err := s.pool.Query(ctx, `
SELECT r.name, c.commit, c.chunks, c.published FROM agentd.repos r JOIN agentd.commits c ON c.id = r.head ORDER BY r.name`)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	var out []RepoInfo
	for rows.Next() {
		var r RepoInfo
		if err := rows.Scan(&r.Name, &r.Commit, &r.Chunks, &r.Published); err != nil {
			return nil, classify(err)
		}
		out = append(out, r)
	}
	return out, classify(rows.Err())
}

// RepoInfo is a published repository.
type RepoInfo struct {
	Name, Commit string
	Chunks       int64
	Published    time.Time
}

// ErrNoSchema means nothing was ever published to the database.
var ErrNoSchema = errors.New("the team index is empty: nothing was published to this database (agentd index --publish)")

// classify wraps the errors of a database that cannot be reached with
// rag.ErrUnreachable and names a missing schema; server errors (a query
// refused) stay as they are.
func classify(err error) error {
	if err == nil {
		return nil
	}
	if isUndefined(err) {
		return ErrNoSchema
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case strings.HasPrefix(pe.Code, "08"), // connection exception
			pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03", // shutdown, cannot connect now
			pe.Code == "53300": // too many connections
			return fmt.Errorf("%w: %s", rag.ErrUnreachable, pe.Message)
		}
		return fmt.Errorf("team index: %s (%s)", pe.Message, pe.Code)
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	// Anything else is the connection: refused, reset, timed out, closed.
	return fmt.Errorf("%w: %v", rag.ErrUnreachable, err)
}

// isUndefined reports a missing table or schema: nothing was published.
func isUndefined(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "42P01" || pe.Code == "3F000")
}
