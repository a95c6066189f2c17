// Package rag is the workspace index behind hybrid code search: it walks the
// workspace (honouring .gitignore files at every level, .agentdignore and
// built-in defaults), cuts files into chunks (Go by declaration, other files by
// blank-line blocks), and answers queries by fusing a BM25 keyword ranking with
// vector similarity through reciprocal rank fusion. chromem-go holds the
// vectors as the store of record; queries scan a packed matrix that shares
// its memory (see vectors.go and docs/index.md for why).
//
// The index is incremental: a manifest of files (size, mtime, content hash,
// chunk ids) lets a restart re-read only what changed, an embedding cache keyed
// by chunk hash and embedder name avoids recomputing vectors, and a watcher
// (plus the editor's save notifications) keeps it current. State is persisted
// as one snapshot file (manifest, chunk metadata, the BM25 postings) written
// to a temporary name and renamed, never through chromem-go's own
// per-document persistence, which is neither atomic nor collision-free.
// Chunk text is not kept in memory: hits read it back from the files.
//
// The default embedder runs in process with no network: signed feature hashing
// of identifier-aware terms, hashed character trigrams, and a random-indexing
// co-occurrence model fitted on the workspace's own chunks, so that chunks
// sharing a vocabulary neighbourhood score close even without shared words.
// docs/index.md has the design, the retrieval evaluation and the benchmark.
//
// rag imports nothing of agentd: it owns its result types (SearchHit,
// Status), which the wire carries as they are.
package rag
