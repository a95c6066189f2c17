package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/url"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agentd/agentd/rpc/wire"
)

// nopRWC reads from a buffer and discards writes.
type nopRWC struct{ io.Reader }

func (nopRWC) Write(p []byte) (int, error) { return len(p), nil }
func (nopRWC) Close() error                { return nil }

// FuzzFrames feeds arbitrary bytes to the framing reader: it must never
// panic or hang, and it must keep reading after every bad frame.
func FuzzFrames(f *testing.F) {
	f.Add([]byte("Content-Length: 17\r\n\r\n{\"jsonrpc\":\"2.0\"}"))
	f.Add([]byte("Content-Length: 9\r\n\r\n{\"bad\": }Content-Length: 2\r\n\r\n{}"))
	f.Add([]byte("garbage\r\n\r\nContent-Length: -1\r\n\r\n"))
	f.Add([]byte("Content-Length: 40\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}"))
	f.Add([]byte("Content-Length: 99999999999\r\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := newFramedConn(nopRWC{bytes.NewReader(data)}, nil)
		defer s.Close()
		for i := 0; i < 1000; i++ {
			if _, _, err := s.Read(context.Background()); err != nil {
				return // the input ran out; nothing else ends a read
			}
		}
	})
}

// FuzzParams sends arbitrary params to every request handler of an
// initialized server: each answer is a result or an error with a documented
// code, never a panic.
func FuzzParams(f *testing.F) {
	methods := make([]string, 0, len(requests))
	for m := range requests {
		if m != wire.MethodInitialize && m != wire.MethodShutdown {
			methods = append(methods, m)
		}
	}
	slices.Sort(methods)
	for i := range methods {
		f.Add(uint8(i), []byte(`{}`))
	}
	f.Add(uint8(0), []byte(`{"prompt":5}`))
	f.Add(uint8(1), []byte(`{"requestId":"q_x","optionId":"1","text":null}`))
	f.Add(uint8(2), []byte(`[1,2,3]`))
	f.Add(uint8(3), []byte(`{"runId":"../../etc/passwd","afterSeq":-1}`))
	known := map[int]bool{}
	for _, c := range codes {
		known[c.code] = true
	}
	known[wire.CodeInternalError] = false

	f.Fuzz(func(t *testing.T, which uint8, params []byte) {
		if !json.Valid(params) {
			return // the framing layer answers invalid JSON before any handler
		}
		s := fuzzServer(t)
		method := methods[int(which)%len(methods)]
		_, err := s.call(context.Background(), method, params)
		if err != nil {
			code := int(toWire(err).Code)
			if !known[code] {
				t.Fatalf("%s %s: error without a documented code: %d %v", method, params, code, err)
			}
		}
	})
}

func fuzzServer(t *testing.T) *Server {
	dir := t.TempDir()
	s := newServer(Options{StateDirs: func(string) (string, string, error) {
		return filepath.Join(dir, "state"), filepath.Join(dir, "cache"), nil
	}})
	s.conn = nil
	params, _ := json.Marshal(map[string]any{"rootUri": (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String()})
	if _, err := s.call(context.Background(), wire.MethodInitialize, params); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	t.Cleanup(func() {
		if a, err := s.theAgent(); err == nil {
			a.Shutdown()
		}
	})
	return s
}
