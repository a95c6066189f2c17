package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// bridge numbers the requests, writes them out and waits for the replies.
type bridge struct {
	dir  string
	poll time.Duration
	logf func(format string, args ...any)

	mu  sync.Mutex
	seq int
}

// reply is what the player writes to NNN.reply.json.
type reply struct {
	Content   string     `json:"content"`
	ToolCalls []toolCall `json:"tool_calls"`
}

type toolCall struct {
	Name string `json:"name"`
	// An object is sent marshalled; a JSON string is sent as its contents,
	// so that a player can send arguments that are not JSON.
	Arguments json.RawMessage `json:"arguments"`
}

func (c toolCall) argumentsText() string {
	var s string
	if json.Unmarshal(c.Arguments, &s) == nil {
		return s
	}
	if len(c.Arguments) == 0 {
		return "{}"
	}
	var compact bytes.Buffer
	if json.Compact(&compact, c.Arguments) != nil {
		return string(c.Arguments)
	}
	return compact.String()
}

func (b *bridge) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", b.handleChat)
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{
			"object": "list",
			"data":   []map[string]any{{"id": "bridge", "object": "model", "owned_by": "bridgemodel"}},
		})
	})
	return mux
}

func (b *bridge) handleChat(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("read request: %v", err))
		return
	}
	var req struct {
		Stream        bool `json:"stream"`
		StreamOptions *struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("request is not JSON: %v", err))
		return
	}
	b.mu.Lock()
	b.seq++
	n := b.seq
	b.mu.Unlock()

	base := filepath.Join(b.dir, fmt.Sprintf("%03d", n))
	if err := writeIndented(base+".request.json", body); err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	b.logf("request %03d: %d bytes; waiting for %s", n, len(body), base+".reply.json")
	rep, err := b.await(r.Context(), base+".reply.json")
	if err != nil {
		b.logf("request %03d: %v", n, err)
		return
	}
	b.logf("request %03d: answering (%d bytes of text, %d tool calls)", n, len(rep.Content), len(rep.ToolCalls))
	a := answer{w: w, seq: n, reply: rep, promptBytes: len(body)}
	if req.Stream {
		a.stream(req.StreamOptions != nil && req.StreamOptions.IncludeUsage)
	} else {
		a.whole()
	}
}

// writeIndented keeps the request's bytes but indents them, so that a
// person can read it; the strings inside are untouched.
func writeIndented(path string, body []byte) error {
	var out bytes.Buffer
	if err := json.Indent(&out, body, "", "  "); err != nil {
		out.Reset()
		out.Write(body)
	}
	out.WriteByte('\n')
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, out.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write request: %w", err)
	}
	return os.Rename(tmp, path)
}

// await polls for the reply file until it parses or the client goes away.
func (b *bridge) await(ctx context.Context, path string) (reply, error) {
	tick := time.NewTicker(b.poll)
	defer tick.Stop()
	for {
		data, err := os.ReadFile(path)
		if err == nil {
			rep, perr := parseReply(data)
			if perr == nil {
				return rep, nil
			}
			b.logf("%s: %v; renamed to .bad, waiting for another", path, perr)
			_ = os.Rename(path, path+".bad")
		} else if !errors.Is(err, os.ErrNotExist) {
			return reply{}, err
		}
		select {
		case <-ctx.Done():
			return reply{}, fmt.Errorf("client gone: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

func parseReply(data []byte) (reply, error) {
	var rep reply
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		return reply{}, fmt.Errorf("not a reply (want {\"content\": ..., \"tool_calls\": [{\"name\": ..., \"arguments\": {...}}]}): %w", err)
	}
	if rep.Content == "" && len(rep.ToolCalls) == 0 {
		return reply{}, errors.New("a reply needs content or tool_calls")
	}
	for i, c := range rep.ToolCalls {
		if strings.TrimSpace(c.Name) == "" {
			return reply{}, fmt.Errorf("tool call %d has no name", i)
		}
	}
	return rep, nil
}

func writeError(w http.ResponseWriter, status int, message string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": message, "type": "invalid_request_error"}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(data, '\n'))
}
