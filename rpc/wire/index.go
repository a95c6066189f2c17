package wire

// The index's answers as the wire carries them: the protocol's own types,
// which rpc fills from the index's (package rag). A change in rag does not
// change the wire; a change here is a change to the protocol and goes into
// docs/protocol.md.

// IndexStatus answers index/status: where the workspace index is.
type IndexStatus struct {
	// State is "indexing", "ready" or "failed".
	State  string `json:"state"`
	Files  int    `json:"files"`
	Chunks int    `json:"chunks"`
	// Progress is the share of the files indexed, from 0 to 1.
	Progress float64 `json:"progress"`
	// Embedder names the embeddings in use ("openai:MODEL"); empty for
	// keyword search alone.
	Embedder string `json:"embedder,omitempty"`
	// Error says why the index failed.
	Error string `json:"error,omitempty"`
	// Team is present when a team index is configured (index.url): what
	// the search reads there, or why this machine's index answers instead.
	Team *IndexTeam `json:"team,omitempty"`
}

// IndexTeam is the team index's part of IndexStatus.
type IndexTeam struct {
	// Repo is the workspace's repository in the team index.
	Repo string `json:"repo"`
	// Commit is the published commit searched; LocalFiles the workspace's
	// files that differ from it, searched from this machine.
	Commit     string `json:"commit,omitempty"`
	LocalFiles int    `json:"localFiles"`
	// Notice says why this machine's whole index answers instead (the
	// team index is unreachable, the repository is not published); Reason
	// is the cause, in the database's words (never a password).
	Notice string `json:"notice,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// SearchHit is one file that answers a query, with every chunk of it that
// matches; hits come best file first.
type SearchHit struct {
	// Repo names the team index's repository of a hit from another
	// repository than the workspace's; absent for the workspace's own.
	Repo string `json:"repo,omitempty"`
	// Path is workspace-relative, with slashes.
	Path string `json:"path"`
	// Kind is "test" (tests, fixtures, harnesses), "docs", "generated" or
	// "excluded" (built only under a build tag the default build does not
	// set); absent for code.
	Kind string `json:"kind,omitempty"`
	// Score is the file's rank score relative to the best file's (1): the
	// order and the scores agree.
	Score float64 `json:"score"`
	// Match says how likely the file is the one: "strong", "partial" or
	// "weak", calibrated on real questions; it never rises down the list.
	Match string `json:"match"`
	// Chunks are the file's matching chunks, best first.
	Chunks []SearchChunk `json:"chunks"`
}

// SearchChunk is a matching chunk (a declaration or a block) of a file.
type SearchChunk struct {
	// The lines are 1-based, inclusive.
	StartLine int `json:"startLine"`
	EndLine   int `json:"endLine"`
	// Symbol is what the chunk declares, if anything.
	Symbol string `json:"symbol,omitempty"`
	// Cover is the share, from 0 to 1, of the query's weight the chunk
	// (with its path) contains.
	Cover float64 `json:"cover"`
	// Lines are the chunk's best-matching lines, in order, the query's
	// words marked.
	Lines []SnippetLine `json:"lines"`
	// Text is the whole chunk.
	Text string `json:"text"`
}

// SnippetLine is a line of a chunk with the query's words marked.
type SnippetLine struct {
	// Line is 1-based in the file.
	Line int    `json:"line"`
	Text string `json:"text"`
	// Marks are byte ranges of Text holding the query's words.
	Marks []Span `json:"marks,omitempty"`
}

// Span is the byte range [start, end) of a line.
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// IndexSearchParams is index/search.
type IndexSearchParams struct {
	Query string `json:"query"`
	// Limit is at most 100; 0 asks for 10.
	Limit int `json:"limit,omitempty"`
}

// IndexSearchResult holds the hits, best first. Partial is true while the
// index is still being built.
type IndexSearchResult struct {
	Hits    []SearchHit `json:"hits"`
	Partial bool        `json:"partial,omitempty"`
}
