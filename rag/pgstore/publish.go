package pgstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentd/agentd/rag"
)

// Publisher writes to the team index: `agentd index --publish`.
type Publisher struct {
	pool   *pgxpool.Pool
	schema int
}

var _ rag.Publisher = (*Publisher)(nil)

// OpenPublisher connects to the team index at url with a role that may
// write, and brings its schema up to date (the migrations it lacks).
func OpenPublisher(ctx context.Context, url string) (*Publisher, error) {
	cfg, err := poolConfig(url, Options{MaxConns: 4})
	if err != nil {
		return nil, err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("team index: %w", err)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		pool.Close()
		return nil, classify(err)
	}
	v, err := migrate(ctx, conn.Conn())
	conn.Release()
	if err != nil {
		pool.Close()
		return nil, classify(err)
	}
	return &Publisher{pool: pool, schema: v}, nil
}

// Schema is the schema version after the migrations.
func (p *Publisher) Schema() int { return p.schema }

// Close closes the pool.
func (p *Publisher) Close() error {
	p.pool.Close()
	return nil
}

// BeginPublish implements rag.Publisher. The repository's row is locked
// for the whole publish: a second publisher of the same repository waits,
// then publishes on top of the first's commit; publishers of other
// repositories do not wait. Everything the publish writes becomes visible
// at Commit, in one transaction.
func (p *Publisher) BeginPublish(ctx context.Context, repo string) (rag.PublishTx, error) {
	tx, err := p.pool.Begin(ctx)
	if err != nil {
		return nil, classify(err)
	}
	t := &publishTx{tx: tx}
	if err := t.begin(ctx, repo); err != nil {
		tx.Rollback(context.WithoutCancel(ctx))
		return nil, classify(err)
	}
	return t, nil
}

type publishTx struct {
	tx     pgx.Tx
	repoID int32
	head   *rag.Head
	chunks int64
}

func (t *publishTx) begin(ctx context.Context, repo string) error {
	if _, err := t.tx.Exec(ctx, `INSERT INTO agentd.repos (name) VALUES ($1) ON CONFLICT (name) DO NOTHING`, repo); err != nil {
		return err
	}
	var head *int64
	if err := t.tx.QueryRow(ctx, `SELECT id, head FROM agentd.repos WHERE name = $1 FOR UPDATE`, repo).Scan(&t.repoID, &head); err != nil {
		return err
	}
	if head == nil {
		return nil
	}
	h := &rag.Head{Repo: repo}
	if err := t.tx.QueryRow(ctx, `SELECT commit FROM agentd.commits WHERE id = $1`, *head).Scan(&h.Commit); err != nil {
		return err
	}
	rows, err := t.tx.Query(ctx, `SELECT segment, dead FROM agentd.parts WHERE commit = $1 ORDER BY seq`, *head)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var part rag.Part
		if err := rows.Scan(&part.Segment, &part.Dead); err != nil {
			return err
		}
		h.Parts = append(h.Parts, part)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	t.head = h
	return nil
}

func (t *publishTx) Head() *rag.Head { return t.head }

func (t *publishTx) Segment(ctx context.Context, id int64) (*rag.Segment, error) {
	return readSegment(ctx, t.tx, id)
}

// AddSegment implements rag.PublishTx: the segment's row, then its
// chunks, postings and vectors by COPY.
func (t *publishTx) AddSegment(ctx context.Context, seg *rag.SegmentData) (int64, error) {
	meta, err := seg.Segment.MarshalBinary()
	if err != nil {
		return 0, err
	}
	var id int64
	if err := t.tx.QueryRow(ctx, `INSERT INTO agentd.segments (repo, docs, meta) VALUES ($1, $2, $3) RETURNING id`,
		t.repoID, seg.Docs(), meta).Scan(&id); err != nil {
		return 0, classify(err)
	}
	i := 0
	if _, err := t.tx.CopyFrom(ctx, pgx.Identifier{"agentd", "chunks"}, []string{"segment", "doc", "end_line", "symbol", "text"},
		pgx.CopyFromFunc(func() ([]any, error) {
			if i >= len(seg.Chunks) {
				return nil, nil
			}
			c := &seg.Chunks[i]
			i++
			return []any{id, c.Doc, c.End, noNUL(c.Symbol), noNUL(c.Text)}, nil
		})); err != nil {
		return 0, fmt.Errorf("copy chunks: %w", classify(err))
	}
	i = 0
	if _, err := t.tx.CopyFrom(ctx, pgx.Identifier{"agentd", "postings"}, []string{"term", "segment", "df", "data"},
		pgx.CopyFromFunc(func() ([]any, error) {
			if i >= len(seg.Postings) {
				return nil, nil
			}
			p := &seg.Postings[i]
			i++
			return []any{p.Term, id, p.DF, p.Data}, nil
		})); err != nil {
		return 0, fmt.Errorf("copy postings: %w", classify(err))
	}
	if len(seg.Vectors) > 0 {
		i = 0
		if _, err := t.tx.CopyFrom(ctx, pgx.Identifier{"agentd", "vectors"}, []string{"segment", "doc", "model", "v"},
			pgx.CopyFromFunc(func() ([]any, error) {
				for i < len(seg.Vectors) && seg.Vectors[i] == nil {
					i++
				}
				if i >= len(seg.Vectors) {
					return nil, nil
				}
				row := []any{id, int32(i), seg.EmbedModel, floats(seg.Vectors[i])}
				i++
				return row, nil
			})); err != nil {
			return 0, fmt.Errorf("copy vectors: %w", classify(err))
		}
	}
	return id, nil
}

// Commit implements rag.PublishTx: the new head, then the segments no
// head uses deleted, then the transaction committed — all at once for
// readers.
func (t *publishTx) Commit(ctx context.Context, head rag.Head) error {
	var chunks int64
	for _, p := range head.Parts {
		var docs int64
		if err := t.tx.QueryRow(ctx, `SELECT docs FROM agentd.segments WHERE id = $1`, p.Segment).Scan(&docs); err != nil {
			return classify(err)
		}
		chunks += docs
		if len(p.Dead) > 0 {
			seg, err := t.Segment(ctx, p.Segment)
			if err != nil {
				return err
			}
			for _, f := range p.Dead {
				if f >= 0 && int(f) < len(seg.Files) {
					chunks -= int64(seg.Files[f].Docs)
				}
			}
		}
	}
	var commitID int64
	if err := t.tx.QueryRow(ctx, `INSERT INTO agentd.commits (repo, commit, chunks) VALUES ($1, $2, $3) RETURNING id`,
		t.repoID, head.Commit, chunks).Scan(&commitID); err != nil {
		return classify(err)
	}
	segs := make([]int64, len(head.Parts))
	for i, p := range head.Parts {
		segs[i] = p.Segment
		dead := p.Dead
		if dead == nil {
			dead = []int32{}
		}
		if _, err := t.tx.Exec(ctx, `INSERT INTO agentd.parts (commit, seq, segment, dead) VALUES ($1, $2, $3, $4)`,
			commitID, i, p.Segment, dead); err != nil {
			return classify(err)
		}
	}
	if _, err := t.tx.Exec(ctx, `UPDATE agentd.repos SET head = $1 WHERE id = $2`, commitID, t.repoID); err != nil {
		return classify(err)
	}
	// Only heads keep parts; older commits stay as a record.
	if _, err := t.tx.Exec(ctx, `DELETE FROM agentd.parts WHERE commit IN (SELECT id FROM agentd.commits WHERE repo = $1 AND id <> $2)`,
		t.repoID, commitID); err != nil {
		return classify(err)
	}
	var retired []int64
	rows, err := t.tx.Query(ctx, `SELECT id FROM agentd.segments WHERE repo = $1 AND NOT (id = ANY ($2))`, t.repoID, segs)
	if err != nil {
		return classify(err)
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return classify(err)
		}
		retired = append(retired, id)
	}
	rows.Close()
	if len(retired) > 0 {
		for _, table := range []string{"postings", "chunks", "vectors"} {
			if _, err := t.tx.Exec(ctx, `DELETE FROM agentd.`+table+` WHERE segment = ANY ($1)`, retired); err != nil {
				return classify(err)
			}
		}
		if _, err := t.tx.Exec(ctx, `DELETE FROM agentd.segments WHERE id = ANY ($1)`, retired); err != nil {
			return classify(err)
		}
	}
	return classify(t.tx.Commit(ctx))
}

// Rollback implements rag.PublishTx.
func (t *publishTx) Rollback(ctx context.Context) error {
	return t.tx.Rollback(ctx)
}

// noNUL replaces NUL, which PostgreSQL's text cannot hold (a file may
// have one past the bytes the binary check reads).
func noNUL(s string) string {
	if strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}

// floats encodes a vector as little-endian float32s.
func floats(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}
