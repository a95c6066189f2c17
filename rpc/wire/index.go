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

// SearchHit is one chunk of code that matches a query.
type SearchHit struct {
	// Path is workspace-relative, with slashes; the lines are 1-based,
	// inclusive.
	Path      string `json:"path"`
	StartLine int    `json:"startLine"`
	EndLine   int    `json:"endLine"`
	// Symbol is the function or type the chunk holds, if any.
	Symbol string `json:"symbol,omitempty"`
	// Score is the share, from 0 to 1, of the query's weight that the
	// chunk (with its path) matches.
	Score float64 `json:"score"`
	// Match says the same in a word: "strong" (Score ≥ 0.7), "partial"
	// (≥ 0.4) or "weak".
	Match string `json:"match"`
	// Kind is "test", "docs" or "generated" for chunks of such files;
	// empty for code.
	Kind string `json:"kind,omitempty"`
	Text string `json:"text"`
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
