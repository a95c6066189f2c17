package rag

// SearchHit is one file that answers a query, with every chunk of it
// that matches. Hits come best file first.
type SearchHit struct {
	// Repo is the repository of a hit from the team index other than the
	// workspace's own (agentd search --repo); empty for the workspace's.
	Repo string `json:"repo,omitempty"`
	Path string `json:"path"`
	// Kind is what the file is for when it is not plain code: "test"
	// (tests, fixtures, test harnesses), "docs" (prose, configuration,
	// data), "generated", or "excluded" (built only under a build tag the
	// default build does not set). Such files rank below code unless the
	// query asks for them.
	Kind string `json:"kind,omitempty"`
	// Score is the file's rank score relative to the answer's best (1), so
	// the order and the scores agree.
	Score float64 `json:"score"`
	// Match says how likely the file is the one, in a word calibrated on
	// real questions (docs/index.md): "strong", "partial" or "weak". It
	// never rises down the list.
	Match string `json:"match"`
	// Chunks are the file's matching chunks, best first.
	Chunks []ChunkHit `json:"chunks"`
}

// ChunkHit is a matching chunk of a file: a declaration or block.
type ChunkHit struct {
	StartLine int    `json:"startLine"` // 1-based, inclusive
	EndLine   int    `json:"endLine"`
	Symbol    string `json:"symbol,omitempty"` // what it declares
	// Cover is the share, from 0 to 1, of the query's weight that the
	// chunk (with its path) contains; rarer words weigh more, words found
	// nowhere in the workspace count as missed.
	Cover float64 `json:"cover"`
	// Lines are the chunk's lines that match best, in order, with the
	// query's words marked: what to show at a glance.
	Lines []SnippetLine `json:"lines"`
	// Text is the whole chunk.
	Text string `json:"text"`
}

// SnippetLine is one line of a chunk with the query's words marked.
type SnippetLine struct {
	Line  int    `json:"line"` // 1-based line number in the file
	Text  string `json:"text"`
	Marks []Span `json:"marks,omitempty"`
}

// Span is a byte range [Start, End) of a line.
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
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
