package rag

// SearchHit is one chunk of a file that answers a query. Hits come best
// first, grouped so that each file's best chunk appears at its file's rank;
// more chunks of a file follow when that file stands out.
type SearchHit struct {
	// Repo is the repository of a hit from the team index other than the
	// workspace's own (agentd search --repo); empty for the workspace's.
	Repo      string `json:"repo,omitempty"`
	Path      string `json:"path"`
	StartLine int    `json:"startLine"`
	EndLine   int    `json:"endLine"`
	Symbol    string `json:"symbol,omitempty"`
	// Score is the share, from 0 to 1, of the query's weight that the
	// chunk (with its path) matches; rarer words weigh more, words found
	// nowhere in the workspace count as missed.
	Score float64 `json:"score"`
	// Match says the same in a word: "strong" (Score ≥ 0.7), "partial"
	// (≥ 0.4) or "weak".
	Match string `json:"match"`
	// Kind is "test", "docs" or "generated" for chunks of such files; empty
	// for code.
	Kind string `json:"kind,omitempty"`
	Text string `json:"text"`
}

// Match labels.
const (
	MatchStrong  = "strong"
	MatchPartial = "partial"
	MatchWeak    = "weak"
)

// Status reports the index's progress and size.
type Status struct {
	State    string  `json:"state"`
	Files    int     `json:"files"`
	Chunks   int     `json:"chunks"`
	Progress float64 `json:"progress"`
	Embedder string  `json:"embedder,omitempty"`
	Error    string  `json:"error,omitempty"`
	// Team is the team index's part, when one is configured (Team).
	Team *TeamStatus `json:"team,omitempty"`
}

// Index states.
const (
	StateIndexing = "indexing"
	StateReady    = "ready"
	StateFailed   = "failed"
)
