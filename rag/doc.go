// Package rag is the workspace index behind code search: it walks the
// workspace (honouring .gitignore files at every level, .agentdignore and
// built-in defaults, never leaving it: every file access goes through an
// os.Root), cuts files into chunks (Go by declaration, with a small lexer
// rather than a syntax tree; other files by blank-line blocks), and answers
// a question the way a person looking for where to change something would
// want: BM25 over the chunks, then files ranked by their best chunk, by
// what kind of file they are (code before tests, docs and generated code,
// unless the question asks for those) and by path and symbol evidence,
// with the best chunks of each file interleaved. Every hit says how much of
// the question it matches, and a question nothing in the workspace answers
// gets no hits. An embedding endpoint can add vector similarity
// (chromem-go holds the vectors); there is no in-process embedder, because
// on real questions it did not beat keywords (docs/index.md).
//
// The index is incremental: a manifest of files (size, mtime, content hash)
// lets a restart re-read only what changed, and a watcher (plus the
// editor's save notifications) keeps it current. State is one snapshot file
// laid out to be searched in place: View maps it and answers without
// loading or walking anything, which is how `agentd search` answers in
// milliseconds. Chunk text is never kept: hits read it back from the files.
//
// rag imports nothing of agentd: it owns its result types (SearchHit,
// Status), which the wire carries as they are. evalset.go scores a search
// on commit sets (real commit subjects and the files they changed) beside
// BM25 over whole files; docs/index.md has the figures.
package rag
