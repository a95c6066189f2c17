package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// The schema lives in its own schema, agentd. Migrations are numbered;
// each runs once, in order, in the transaction that records it, under an
// advisory lock, so publishers starting together apply each exactly once.
// Readers never migrate: they need a schema at least as new as their
// queries (minSchema) and say so when it is older.
var migrations = []string{
	1: `
CREATE TABLE agentd.repos (
	id   serial PRIMARY KEY,
	name text NOT NULL UNIQUE,
	head bigint
);
-- Every publish, for the record; only heads have parts.
CREATE TABLE agentd.commits (
	id        bigserial PRIMARY KEY,
	repo      int NOT NULL REFERENCES agentd.repos (id),
	commit    text NOT NULL,
	chunks    bigint NOT NULL,
	published timestamptz NOT NULL DEFAULT now()
);
-- A head's segments, in order, with the files of each that are dead.
CREATE TABLE agentd.parts (
	commit  bigint NOT NULL REFERENCES agentd.commits (id),
	seq     int NOT NULL,
	segment bigint NOT NULL,
	dead    int[] NOT NULL,
	PRIMARY KEY (commit, seq)
);
-- Immutable: written once by a publish, deleted when no head uses it.
CREATE TABLE agentd.segments (
	id      bigserial PRIMARY KEY,
	repo    int NOT NULL REFERENCES agentd.repos (id),
	docs    int NOT NULL,
	created timestamptz NOT NULL DEFAULT now(),
	meta    bytea NOT NULL -- rag's encoding: files, and each chunk's length, first line and flags
);
CREATE TABLE agentd.chunks (
	segment  bigint NOT NULL,
	doc      int NOT NULL,
	end_line int NOT NULL,
	symbol   text NOT NULL,
	text     text NOT NULL,
	PRIMARY KEY (segment, doc)
);
-- One row per term and segment: the term's postings in rag's encoding.
CREATE TABLE agentd.postings (
	term    text NOT NULL,
	segment bigint NOT NULL,
	df      int NOT NULL,
	data    bytea NOT NULL,
	PRIMARY KEY (term, segment)
);
CREATE INDEX postings_segment ON agentd.postings (segment);
-- Postings are already compact: stored out of line uncompressed, read
-- without decompressing.
ALTER TABLE agentd.postings ALTER COLUMN data SET STORAGE EXTERNAL;
-- Each chunk's embedding when the publisher has an embeddings endpoint
-- (float32, little-endian). See docs/index.md for pgvector.
CREATE TABLE agentd.vectors (
	segment bigint NOT NULL,
	doc     int NOT NULL,
	model   text NOT NULL,
	v       bytea NOT NULL,
	PRIMARY KEY (segment, doc)
);
`,
}

// minSchema is the oldest schema this agentd reads.
const minSchema = 1

// ReaderRole is the role a migration grants read access to: give each
// developer's login role (or one shared by the daemons) membership in it.
const ReaderRole = "agentd_reader"

// migrate applies the migrations the database lacks and grants ReaderRole
// read access. It returns the schema version.
func migrate(ctx context.Context, conn *pgx.Conn) (int, error) {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback(ctx)
	// One migrating publisher at a time, whatever the database's other
	// users do.
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('agentd: migrations'))`); err != nil {
		return 0, err
	}
	if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS agentd;
		CREATE TABLE IF NOT EXISTS agentd.migrations (version int PRIMARY KEY, applied timestamptz NOT NULL DEFAULT now())`); err != nil {
		return 0, err
	}
	var have int
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM agentd.migrations`).Scan(&have); err != nil {
		return 0, err
	}
	if have >= len(migrations)-1 {
		return have, tx.Commit(ctx)
	}
	for v := have + 1; v < len(migrations); v++ {
		if _, err := tx.Exec(ctx, migrations[v]); err != nil {
			return 0, fmt.Errorf("schema migration %d: %w", v, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO agentd.migrations (version) VALUES ($1)`, v); err != nil {
			return 0, err
		}
	}
	// The readers' role: made when the publisher may make roles, and
	// granted what exists now and what later migrations create.
	if _, err := tx.Exec(ctx, `DO $$
BEGIN
	IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '`+ReaderRole+`') THEN
		BEGIN
			CREATE ROLE `+ReaderRole+` NOLOGIN;
		EXCEPTION WHEN insufficient_privilege THEN
			RAISE NOTICE 'cannot create role `+ReaderRole+`: ask an administrator';
		END;
	END IF;
	IF EXISTS (SELECT FROM pg_roles WHERE rolname = '`+ReaderRole+`') THEN
		GRANT USAGE ON SCHEMA agentd TO `+ReaderRole+`;
		GRANT SELECT ON ALL TABLES IN SCHEMA agentd TO `+ReaderRole+`;
	END IF;
END $$`); err != nil {
		return 0, fmt.Errorf("grant %s: %w", ReaderRole, err)
	}
	return len(migrations) - 1, tx.Commit(ctx)
}

// schemaVersion is the database's schema version (0 when there is none).
func schemaVersion(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) (int, error) {
	var v int
	err := q.QueryRow(ctx, `SELECT coalesce((SELECT max(version) FROM agentd.migrations), 0)`).Scan(&v)
	if isUndefined(err) {
		return 0, nil
	}
	return v, err
}
