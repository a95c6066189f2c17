package wire

import "github.com/agentd/agentd/rag"

// The index owns its vocabulary (package rag); the wire carries it as is.
// A change to rag.SearchHit or rag.Status is a change to the protocol and
// goes into docs/protocol.md.

// IndexStatus answers index/status.
type IndexStatus = rag.Status

// SearchHit is one chunk of code.
type SearchHit = rag.SearchHit

// IndexSearchParams is index/search.
type IndexSearchParams struct {
	Query string `json:"query"`
	Limit int    `json:"limit,omitempty"`
}

// IndexSearchResult holds the hits, best first. Partial is true while the
// index is still being built.
type IndexSearchResult struct {
	Hits    []SearchHit `json:"hits"`
	Partial bool        `json:"partial,omitempty"`
}
