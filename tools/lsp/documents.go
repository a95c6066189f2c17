package lsp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"go.lsp.dev/protocol"
)

// maxDocument is the largest file given to a server.
const maxDocument = 4 << 20

// sync makes the server's copy of path what the disk holds: opened the
// first time, changed when the content differs from what it was sent. It
// returns whether something was sent. Syncs of one server run one at a
// time, so versions go out in order.
func (s *server) sync(ctx context.Context, path string) (bool, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return false, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxDocument {
		return false, fmt.Errorf("%s is not a regular file of at most %d bytes", path, maxDocument)
	}
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	s.mu.Lock()
	d := s.docs[path]
	if d != nil && d.mtime.Equal(fi.ModTime()) {
		d.used = time.Now()
		s.mu.Unlock()
		return false, nil
	}
	s.mu.Unlock()
	data, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	text := string(data)
	s.mu.Lock()
	var msg any
	method := "textDocument/didChange"
	switch {
	case d == nil:
		d = &document{version: 1}
		s.docs[path] = d
		method = "textDocument/didOpen"
		msg = protocol.DidOpenTextDocumentParams{TextDocument: protocol.TextDocumentItem{URI: fileURI(path),
			LanguageID: protocol.LanguageIdentifier(s.lang.IDs[extOf(path)]), Version: d.version, Text: text}}
	case d.text == text:
		d.mtime, d.used = fi.ModTime(), time.Now()
		s.mu.Unlock()
		return false, nil
	default:
		d.version++
		// A change without a range replaces the whole text (protocol's
		// TextDocumentContentChangeEvent always sends a range).
		msg = didChange{TextDocument: versionedDocument{URI: fileURI(path), Version: d.version},
			ContentChanges: []wholeText{{Text: text}}}
	}
	d.text, d.mtime, d.used, d.sentSeq = text, fi.ModTime(), time.Now(), s.seq
	close := s.leastUsedLocked()
	s.mu.Unlock()
	s.log.Debug("document sent", "server", s.name, "file", path, "method", method, "version", d.version)
	if err := s.conn.notify(ctx, method, msg); err != nil {
		return false, err
	}
	if close != "" {
		_ = s.conn.notify(ctx, "textDocument/didClose", protocol.DidCloseTextDocumentParams{TextDocument: protocol.TextDocumentIdentifier{URI: fileURI(close)}})
	}
	return true, nil
}

// didChange is LSP's DidChangeTextDocumentParams with whole-text changes.
type didChange struct {
	TextDocument   versionedDocument `json:"textDocument"`
	ContentChanges []wholeText       `json:"contentChanges"`
}

type versionedDocument struct {
	URI     protocol.DocumentURI `json:"uri"`
	Version int32                `json:"version"`
}

type wholeText struct {
	Text string `json:"text"`
}

// leastUsedLocked forgets the least recently used document when more than
// maxOpen are open, and returns it for didClose ("" when none).
func (s *server) leastUsedLocked() string {
	if len(s.docs) <= maxOpen {
		return ""
	}
	var oldest string
	for p, d := range s.docs {
		if oldest == "" || d.used.Before(s.docs[oldest].used) {
			oldest = p
		}
	}
	delete(s.docs, oldest)
	return oldest
}

// refresh syncs the open documents that changed on disk since they were
// sent (a command rewrote them), so the server does not reason on stale
// copies.
func (s *server) refresh(ctx context.Context) {
	s.mu.Lock()
	var stale []string
	for p, d := range s.docs {
		if fi, err := os.Stat(p); err == nil && !fi.ModTime().Equal(d.mtime) {
			stale = append(stale, p)
		}
	}
	s.mu.Unlock()
	for _, p := range stale {
		_, _ = s.sync(ctx, p)
	}
}

// current says whether path's last diagnostics are for the content it was
// last sent: the server said so (its version), or, when it gives no
// version, they came after that content was sent. r.mu is held.
func (s *server) currentLocked(path string) bool {
	p, d := s.diags[path], s.docs[path]
	switch {
	case p == nil || d == nil:
		return false
	case p.version != 0:
		return p.version >= d.version
	}
	return p.seq > d.sentSeq
}

// diagnostics returns each file's diagnostics for its current content,
// waiting for the server until ctx ends; the files not answered by then are
// pending, with what the server said before. Other files whose diagnostics
// the server changed meanwhile come back as related.
func (s *server) diagnostics(ctx context.Context, files []string) (map[string]fileResult, []related) {
	out := map[string]fileResult{}
	s.mu.Lock()
	startSeq := s.seq
	s.mu.Unlock()
	for _, f := range files {
		if _, err := s.sync(ctx, f); err != nil {
			out[f] = fileResult{err: err}
		}
	}
	s.refresh(ctx)
	want := slices.DeleteFunc(slices.Clone(files), func(f string) bool { _, failed := out[f]; return failed })
	if s.lang.Ask != nil {
		for _, f := range want {
			out[f] = s.ask(ctx, f)
		}
		return out, s.askOthers(ctx, files)
	}
	// Without fresh the caller's bound is short: a file just opened gets
	// its first diagnostics if they come within it.
	s.await(ctx, want)
	s.grace(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range want {
		r := fileResult{pending: !s.currentLocked(f)}
		if p := s.diags[f]; p != nil {
			r.diags = p.diags
		}
		out[f] = r
	}
	var rel []related
	for p, pub := range s.diags {
		if pub.seq > startSeq && pub.prevKnown && !slices.Contains(files, p) {
			rel = append(rel, related{path: p, before: pub.prev, after: pub.diags})
		}
	}
	return out, rel
}

// related is another file's change of diagnostics.
type related struct {
	path          string
	before, after []protocol.Diagnostic
}

// graceTime is how long, after the asked files' diagnostics, the server
// may take to publish those of the files that depend on them (it checks
// them in the same pass).
const graceTime = 100 * time.Millisecond

func (s *server) grace(ctx context.Context) {
	t := time.NewTimer(graceTime)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	case <-s.exited:
	}
}

// ask asks the server for one file's diagnostics (a language with Ask),
// remembering them.
func (s *server) ask(ctx context.Context, f string) fileResult {
	ds, err := s.lang.Ask(ctx, s, f)
	switch {
	case ctx.Err() != nil:
		return fileResult{pending: true}
	case err != nil:
		return fileResult{err: s.failure("checking "+filepath.Base(f), err)}
	}
	s.mu.Lock()
	s.asked[f] = ds
	s.mu.Unlock()
	return fileResult{diags: ds}
}

// maxOthers bounds the other open files asked about after an edit.
const maxOthers = 20

// askOthers asks again about the other open files the server was asked
// about before (the most recently used first): those whose diagnostics
// changed are related.
func (s *server) askOthers(ctx context.Context, files []string) []related {
	s.mu.Lock()
	var others []string
	for p := range s.docs {
		if _, known := s.asked[p]; known && !slices.Contains(files, p) {
			others = append(others, p)
		}
	}
	slices.SortFunc(others, func(a, b string) int { return s.docs[b].used.Compare(s.docs[a].used) })
	s.mu.Unlock()
	var rel []related
	for _, p := range others[:min(len(others), maxOthers)] {
		s.mu.Lock()
		before := s.asked[p]
		s.mu.Unlock()
		r := s.ask(ctx, p)
		if r.err != nil || r.pending {
			continue
		}
		rel = append(rel, related{path: p, before: before, after: r.diags})
	}
	return rel
}

// fileResult is one file's answer.
type fileResult struct {
	diags   []protocol.Diagnostic
	pending bool
	err     error
}

// await waits until every file has diagnostics for its current content,
// or until ctx ends.
func (s *server) await(ctx context.Context, files []string) {
	for {
		s.mu.Lock()
		done := !slices.ContainsFunc(files, func(f string) bool { return !s.currentLocked(f) })
		changed := s.changed
		s.mu.Unlock()
		if done {
			break
		}
		select {
		case <-changed:
		case <-s.exited:
			return
		case <-ctx.Done():
			return
		}
	}
}
