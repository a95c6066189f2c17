package rpc

import (
	"context"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentd/agentd/rpc/wire"
)

// documentParams is the part of the textDocument/did* params agentd reads.
type documentParams struct {
	TextDocument wire.TextDocument `json:"textDocument"`
}

// The editor's documents: which files are open (they rank higher in search
// and are named in the model's context) and when they are saved (the index
// picks them up at once).

func didOpen(ctx context.Context, s *Server, p documentParams) error {
	s.setOpen(string(p.TextDocument.URI), true)
	return nil
}

func didClose(ctx context.Context, s *Server, p documentParams) error {
	s.setOpen(string(p.TextDocument.URI), false)
	return nil
}

// didChange carries unsaved text, which agentd does not use: tools read and
// write the files on disk. It only marks the document open.
func didChange(ctx context.Context, s *Server, p documentParams) error {
	s.setOpen(string(p.TextDocument.URI), true)
	return nil
}

func didSave(ctx context.Context, s *Server, p documentParams) error {
	rel, ok := s.relative(string(p.TextDocument.URI))
	if !ok {
		return nil
	}
	if idx := s.liveIndex(); idx != nil {
		idx.Changed(rel)
	}
	return nil
}

func (s *Server) setOpen(uri string, open bool) {
	rel, ok := s.relative(uri)
	if !ok {
		return
	}
	s.mu.Lock()
	if open {
		s.docs[rel] = true
	} else {
		delete(s.docs, rel)
	}
	s.mu.Unlock()
	s.publishOpen()
}

// replaceOpen takes the editor's list of its open files (editor/context).
func (s *Server) replaceOpen(uris []string) {
	docs := map[string]bool{}
	for _, u := range uris {
		if rel, ok := s.relative(u); ok {
			docs[rel] = true
		}
	}
	s.mu.Lock()
	s.docs = docs
	s.mu.Unlock()
	s.publishOpen()
}

// publishOpen tells the agent and the index which files are open.
func (s *Server) publishOpen() {
	s.mu.Lock()
	list := make([]string, 0, len(s.docs))
	for d := range s.docs {
		list = append(list, d)
	}
	a, idx := s.agent, s.index
	s.mu.Unlock()
	slices.Sort(list)
	if a != nil {
		a.SetOpenFiles(list)
	}
	if idx != nil {
		idx.SetOpen(list)
	}
}

// relative maps a file URI inside the workspace to a slash path; URIs
// outside it are ignored.
func (s *Server) relative(uri string) (string, bool) {
	p := uriPath(uri)
	s.mu.Lock()
	root := s.root
	s.mu.Unlock()
	if p == "" || root == "" {
		return "", false
	}
	if resolved, err := filepath.EvalSymlinks(p); err == nil {
		p = resolved
	}
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}
