// Package pgstore is the team index in PostgreSQL: rag's Store (what a
// daemon, `agentd search` and `agentd mcp` read) and Publisher (what
// `agentd index --publish` writes), over github.com/jackc/pgx/v5, which no
// other package imports.
//
// The tables (schema.go) hold what rag publishes, in rag's encodings:
// immutable segments (each with its files' and chunks' ranking metadata in
// one row), the chunks' text, one row of postings per term and segment,
// and, for each repository, its published commit as a list of segments
// with their dead files. A query is one round trip for the heads and the
// postings of its terms (Fetch), ranked in the reader's process by rag's
// own ranking, then one for its hits' text (Chunks); docs/index.md has the
// measurements that chose this over scoring in SQL. A publish is one
// transaction holding its repository's row: readers see the previous
// commit until it commits, another publisher of that repository waits,
// publishers of other repositories do not.
//
// Readers' connections are read-only (default_transaction_read_only) and
// should use a role with SELECT alone: migrations grant it to
// agentd_reader. Passwords come from the URL, $PGPASSWORD or a password
// file, as with libpq; nothing here prints a URL (Describe names a
// database without its password).
package pgstore
