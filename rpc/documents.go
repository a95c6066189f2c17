package rpc

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
)

// The editor's documents: which files are open (they rank higher in search
// and are named in the model's context) and when they are saved (the index
// picks them up at once).

// documentParams is the part of LSP's textDocument/did* params agentd
// reads: which document. The rest (its text, its changes) is not used:
// tools read and write the files on disk.
type documentParams struct {
	TextDocument struct {
		URI string `json:"uri"`
	} `json:"textDocument"`
}

func didOpen(ctx context.Context, s *Server, p documentParams) error {
	s.setOpen(p.TextDocument.URI, true)
	return nil
}

func didClose(ctx context.Context, s *Server, p documentParams) error {
	s.setOpen(p.TextDocument.URI, false)
	return nil
}

// didChange carries unsaved text, which agentd does not use. It only marks
// the document open.
func didChange(ctx context.Context, s *Server, p documentParams) error {
	s.setOpen(p.TextDocument.URI, true)
	return nil
}

func didSave(ctx context.Context, s *Server, p documentParams) error {
	rel, ok := s.relative(p.TextDocument.URI)
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
