package rag

import (
	"context"
	"errors"
)

// Store is a published index of one or more repositories, searched with
// the same ranking as the workspace's own index: the team index in
// PostgreSQL (package rag/pgstore) and a workspace's snapshot
// (SnapshotStore) are the two. A store holds immutable segments; each
// repository's published commit (Head) is a list of them with the files of
// each that are no longer live. A query reads, in one round trip, the heads
// and the postings of its terms in the segments it already knows
// (Fetch), ranks them here with the chunks' metadata (Segment, cached for
// good: segments never change), and reads the hits' text (Chunks).
//
// A store is safe for concurrent use. Errors of an unreachable store wrap
// ErrUnreachable.
type Store interface {
	// Fetch returns the published heads of req.Repos (every repository
	// when empty), and the postings of req.Terms in req.Segments, read
	// at one moment. Gone lists those of req.Segments that no longer
	// exist (a publish retired them): their postings are missing, and the
	// caller asks again with the heads' segments.
	Fetch(ctx context.Context, req FetchRequest) (*FetchResult, error)
	// Segment reads a segment's metadata.
	Segment(ctx context.Context, id int64) (*Segment, error)
	// Chunks reads the text of chunks (a query's hits). A chunk of a
	// retired segment is missing from the answer.
	Chunks(ctx context.Context, refs []ChunkRef) ([]ChunkText, error)
	Close() error
}

// FetchRequest is what one query reads from a Store.
type FetchRequest struct {
	Repos    []string // exact repository names; empty: every one
	Segments []int64
	Terms    []string
}

// FetchResult is what a store answers to a FetchRequest.
type FetchResult struct {
	Heads    []Head
	Postings []TermPostings
	Gone     []int64
}

// Head is a repository's published commit.
type Head struct {
	Repo   string
	Commit string
	Parts  []Part
}

// Part is one segment of a published commit, with the files of it (indexes
// into Segment.Files) that the commit no longer has as they were.
type Part struct {
	Segment int64
	Dead    []int32
}

// ChunkRef names a chunk of a segment.
type ChunkRef struct {
	Segment int64
	Doc     int32
}

// SegmentsReader is a Store that reads the metadata of many segments in
// one round trip: a new machine's first search of every repository needs
// hundreds of them.
type SegmentsReader interface {
	// Segments reads the segments of ids that exist, in any order.
	Segments(ctx context.Context, ids []int64) ([]*Segment, error)
}

// ErrSegmentGone is a segment that no longer exists: a publish retired it
// after the query read the heads. The query starts again on the new ones.
var ErrSegmentGone = errors.New("the segment was retired")

// ErrUnreachable wraps the errors of a store that cannot be reached (the
// database is down, the network is): the caller answers from the local
// index and says so.
var ErrUnreachable = errors.New("the team index is unreachable")

// Publisher is the writing side of a store: `agentd index --publish`.
type Publisher interface {
	// BeginPublish starts the publish of repo: until Commit or Rollback,
	// no other publish of repo can start (another repository's can), and
	// readers see the previous head.
	BeginPublish(ctx context.Context, repo string) (PublishTx, error)
	Close() error
}

// PublishTx is one publish of one repository.
type PublishTx interface {
	// Head is the repository's published commit before this publish; nil
	// when it has none.
	Head() *Head
	// Segment reads a segment's metadata (the previous head's, for an
	// incremental publish).
	Segment(ctx context.Context, id int64) (*Segment, error)
	// AddSegment stores a new segment and returns its id.
	AddSegment(ctx context.Context, seg *SegmentData) (int64, error)
	// Commit makes head the repository's published commit, at once for
	// every reader, and retires the segments no head uses any more.
	Commit(ctx context.Context, head Head) error
	Rollback(ctx context.Context) error
}
