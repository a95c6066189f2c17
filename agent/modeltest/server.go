package modeltest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Request is one recorded call of the chat completions endpoint.
type Request struct {
	// Seq numbers requests from 1 in the order they arrived.
	Seq int `json:"seq"`
	// Time is when the request arrived.
	Time         time.Time `json:"time"`
	Model        string    `json:"model"`
	Stream       bool      `json:"stream"`
	IncludeUsage bool      `json:"includeUsage,omitempty"`
	// ReasoningEffort is the request's reasoning_effort, if it sent one.
	ReasoningEffort string    `json:"reasoningEffort,omitempty"`
	Messages        []Message `json:"messages"`
	// Tools are the names of the functions the request offered.
	Tools []string `json:"tools,omitempty"`
	// Schemas are the offered functions' parameters' JSON Schemas, by name.
	Schemas map[string]json.RawMessage `json:"schemas,omitempty"`
	// ToolsJSON is the request's tools array as it was sent, so a test can
	// compare the tool lists of requests byte for byte.
	ToolsJSON json.RawMessage `json:"toolsJson,omitempty"`
	// ToolChoice is the request's tool_choice as sent ("none", "auto", or
	// an object), if it sent one.
	ToolChoice string `json:"toolChoice,omitempty"`
	// Body is the whole request body, for measuring what a prompt cache
	// would serve.
	Body []byte `json:"-"`
	// Turn labels the turn that answered (see Turn.Name), or the fault
	// chaos answered with ("chaos:500", "chaos:429", "chaos:cut",
	// "chaos:stall"); TurnIndex is the turn's index, or -1 when none did.
	Turn      string `json:"turn,omitempty"`
	TurnIndex int    `json:"turnIndex"`
	// Error says why no turn answered: no turn matched, or the body was not
	// a chat completion request.
	Error string `json:"error,omitempty"`
}

// Message is one decoded message of a request.
type Message struct {
	Role string `json:"role"`
	// Content is the text; the text parts of multi-part content are joined.
	Content string `json:"content,omitempty"`
	// Images are the URLs of its image_url parts (data: URLs as sent).
	Images     []string          `json:"images,omitempty"`
	ToolCalls  []MessageToolCall `json:"toolCalls,omitempty"`
	ToolCallID string            `json:"toolCallId,omitempty"`
	Name       string            `json:"name,omitempty"`
}

// MessageToolCall is a tool call the client sent back in an assistant message.
type MessageToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Last returns the last message of the request, or a zero Message.
func (r Request) Last() Message {
	if len(r.Messages) == 0 {
		return Message{}
	}
	return r.Messages[len(r.Messages)-1]
}

// Server is a running fake model.
type Server struct {
	// URL is the OpenAI base URL, ending in /v1.
	URL string

	ln     net.Listener
	srv    *http.Server
	logf   func(format string, args ...any)
	closed chan struct{} // closed by Close, to end hanging and delayed answers

	mu       sync.Mutex // guards the fields below
	closing  bool
	active   sync.WaitGroup // handlers running; Add only under mu while !closing
	turns    []turnState
	requests []Request
	models   []string
	endpoint Endpoint
	chaos    *chaos
}

type turnState struct {
	Turn
	used     int
	consumed bool
}

// Start serves script on a free port of 127.0.0.1. It panics if it cannot
// listen, as httptest.NewServer does, since a test can do nothing else then.
func Start(script *Script) *Server {
	s, err := Listen("127.0.0.1:0", script, nil)
	if err != nil {
		panic(fmt.Sprintf("modeltest: %v", err))
	}
	return s
}

// StartT starts a server for a test, logs through t, and closes it when the
// test ends. A request that no turn matched fails the test then, so a test
// whose agent recovers from the 500 still learns its script was wrong; tests
// that mean to send unmatched requests should use Start.
func StartT(t testing.TB, script *Script) *Server {
	t.Helper()
	s, err := Listen("127.0.0.1:0", script, t.Logf)
	if err != nil {
		t.Fatalf("modeltest: %v", err)
	}
	t.Cleanup(func() {
		s.Close()
		if err := s.Err(); err != nil {
			t.Errorf("modeltest: %v", err)
		}
	})
	return s
}

// Listen serves script on addr. logf, if not nil, is told about every
// request and answer.
func Listen(addr string, script *Script, logf func(format string, args ...any)) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	if logf == nil {
		logf = func(string, ...any) {}
	}
	s := &Server{
		URL:    "http://" + ln.Addr().String() + "/v1",
		ln:     ln,
		logf:   logf,
		closed: make(chan struct{}),
	}
	if script != nil {
		s.Append(script.Turns...)
		if script.Endpoint != nil {
			s.SetEndpoint(*script.Endpoint)
		}
		if script.Chaos != nil {
			s.SetChaos(*script.Chaos)
		}
	}
	mux := http.NewServeMux()
	for _, prefix := range []string{"", "/v1"} {
		// The control endpoints answer under /v1 too, for clients that only
		// know the base URL.
		mux.HandleFunc("GET "+prefix+"/_requests", s.handleRequests)
		mux.HandleFunc("GET "+prefix+"/_unused", s.handleUnused)
		mux.HandleFunc("POST "+prefix+"/_turns", s.handleTurns)
	}
	mux.HandleFunc("POST /v1/chat/completions", s.handleChat)
	mux.HandleFunc("GET /v1/models", s.handleModels)
	mux.HandleFunc("GET /props", s.handleProps)
	mux.HandleFunc("GET /api/ps", s.handleOllamaPS)
	mux.HandleFunc("POST /api/show", s.handleOllamaShow)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "fakemodel: no route for "+r.Method+" "+r.URL.Path)
	})
	s.srv = &http.Server{Handler: s.track(mux)}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.logf("serve: %v", err)
		}
	}()
	return s, nil
}

// track counts running handlers so that Close can wait for them: a handler
// that outlived its test would log through a finished testing.T.
func (s *Server) track(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			writeError(w, http.StatusServiceUnavailable, "fakemodel: closing")
			return
		}
		s.active.Add(1)
		s.mu.Unlock()
		defer s.active.Done()
		h.ServeHTTP(w, r)
	})
}

// Close stops the server, ends answers still hanging or delayed, and waits
// for every handler to return. It is safe to call more than once.
func (s *Server) Close() {
	s.mu.Lock()
	already := s.closing
	s.closing = true
	s.mu.Unlock()
	if already {
		return
	}
	close(s.closed)
	// Close, not Shutdown: Shutdown would wait for the hanging streams.
	_ = s.srv.Close()
	s.active.Wait()
}

// Append adds turns after the existing ones. They are not checked as
// ParseScript checks a file, since Go code builds them with types.
func (s *Server) Append(turns ...Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range turns {
		t.Reply.ToolCalls = append([]ToolCall(nil), t.Reply.ToolCalls...)
		s.turns = append(s.turns, turnState{Turn: t})
	}
}

// Requests returns the requests recorded so far, in order of arrival.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Unused returns the labels (name, or "#" and index) of the turns not yet
// consumed. A repeating turn counts as used once it has answered.
func (s *Server) Unused() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	unused := []string{}
	for i, t := range s.turns {
		if t.consumed || (t.Repeat && t.used > 0) {
			continue
		}
		unused = append(unused, turnLabel(i, t.Turn))
	}
	return unused
}

// Err reports the requests no turn answered, or nil.
func (s *Server) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, r := range s.requests {
		if r.Error != "" {
			errs = append(errs, fmt.Errorf("request %d: %s", r.Seq, r.Error))
		}
	}
	return errors.Join(errs...)
}

// pick records req and chooses its turn: the first unconsumed one whose
// match holds. Both happen under one lock so that the record's order is the
// order in which turns were taken.
func (s *Server) pick(req *Request, hasTools bool) (Turn, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	req.Seq = len(s.requests) + 1
	req.TurnIndex = -1
	if req.Model != "" && !slices.Contains(s.models, req.Model) {
		s.models = append(s.models, req.Model)
	}
	var (
		turn  Turn
		found bool
	)
	for i := range s.turns {
		t := &s.turns[i]
		if t.consumed || !t.Match.holds(req.Messages, hasTools) {
			continue
		}
		t.used++
		if !t.Repeat && t.used >= max(1, t.Reply.Times) {
			t.consumed = true
		}
		req.Turn, req.TurnIndex = turnLabel(i, t.Turn), i
		turn, found = t.Turn, true
		break
	}
	if !found {
		req.Error = fmt.Sprintf("fakemodel: no scripted turn matches request %d (%s)", req.Seq, summarize(req.Messages))
	}
	s.requests = append(s.requests, *req)
	return turn, found
}

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("fakemodel: read request: %v", err))
		return
	}
	var in wireRequest
	if err := json.Unmarshal(body, &in); err != nil {
		msg := fmt.Sprintf("fakemodel: request body is not a chat completion request: %v", err)
		s.mu.Lock()
		s.requests = append(s.requests, Request{Seq: len(s.requests) + 1, Time: time.Now(), TurnIndex: -1, Error: msg})
		s.mu.Unlock()
		s.logf("%s", msg)
		writeError(w, http.StatusBadRequest, msg)
		return
	}
	req := in.record()
	req.Time = time.Now()
	req.Body = body
	var raw struct {
		Tools json.RawMessage `json:"tools"`
	}
	if json.Unmarshal(body, &raw) == nil {
		req.ToolsJSON = raw.Tools
	}
	if fault := s.fault(&req); fault != nil {
		s.logf("request %d (%s) failed by chaos: %s", req.Seq, summarize(req.Messages), req.Turn)
		(&answer{w: w, ctx: r.Context(), closed: s.closed, req: &req, reply: *fault, turnIdx: -1}).write()
		return
	}
	turn, ok := s.pick(&req, len(req.Tools) > 0 && req.ToolChoice != "none")
	if !ok {
		s.logf("%s", req.Error)
		writeError(w, http.StatusInternalServerError, req.Error)
		return
	}
	s.logf("request %d (%s) answered by turn %s", req.Seq, summarize(req.Messages), req.Turn)
	a := answer{
		w:       w,
		ctx:     r.Context(),
		closed:  s.closed,
		req:     &req,
		reply:   turn.Reply,
		turnIdx: req.TurnIndex,
	}
	a.write()
}

func (s *Server) handleRequests(w http.ResponseWriter, _ *http.Request) {
	reqs := s.Requests()
	if reqs == nil {
		reqs = []Request{}
	}
	writeJSON(w, http.StatusOK, reqs)
}

func (s *Server) handleUnused(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.Unused())
}

func (s *Server) handleTurns(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("fakemodel: read turns: %v", err))
		return
	}
	turns, err := parseTurns(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("fakemodel: %v", err))
		return
	}
	s.Append(turns...)
	s.mu.Lock()
	total := len(s.turns)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]int{"appended": len(turns), "turns": total})
}

func (s *Server) handleModels(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	names := append([]string(nil), s.models...)
	listed := append([]ModelEntry(nil), s.endpoint.Models...)
	s.mu.Unlock()
	if listed != nil {
		s.writeModelList(w, listed)
		return
	}
	if len(names) == 0 {
		// A client that probes the model list before its first request
		// should still find something to pick.
		names = []string{"fakemodel"}
	}
	entries := make([]ModelEntry, len(names))
	for i, n := range names {
		entries[i] = ModelEntry{ID: n}
	}
	s.writeModelList(w, entries)
}

func (s *Server) writeModelList(w http.ResponseWriter, entries []ModelEntry) {
	type model struct {
		ID            string `json:"id"`
		Object        string `json:"object"`
		Created       int64  `json:"created"`
		OwnedBy       string `json:"owned_by"`
		MaxModelLen   int    `json:"max_model_len,omitempty"`
		ContextLength int    `json:"context_length,omitempty"`
	}
	list := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list", Data: []model{}}
	for _, e := range entries {
		list.Data = append(list.Data, model{ID: e.ID, Object: "model", OwnedBy: "modeltest", MaxModelLen: e.MaxModelLen, ContextLength: e.ContextLength})
	}
	writeJSON(w, http.StatusOK, list)
}

// holds reports whether every set field of m holds for messages.
func (m Match) holds(messages []Message, hasTools bool) bool {
	if m.HasTools != nil && *m.HasTools != hasTools {
		return false
	}
	lastUser := -1
	var lastTool, system string
	haveTool := false
	for i, msg := range messages {
		switch msg.Role {
		case "user":
			lastUser = i
		case "tool":
			lastTool, haveTool = msg.Content, true
		case "system", "developer":
			system += msg.Content + "\n"
		}
	}
	if m.LastUser != "" && (lastUser < 0 || !strings.Contains(messages[lastUser].Content, m.LastUser)) {
		return false
	}
	if m.LastTool != "" && (!haveTool || !strings.Contains(lastTool, m.LastTool)) {
		return false
	}
	if m.System != "" && !strings.Contains(system, m.System) {
		return false
	}
	if m.AnyMessage != "" && !anyContains(messages, m.AnyMessage) {
		return false
	}
	if m.MinToolResults > 0 {
		n := 0
		for _, msg := range messages[lastUser+1:] {
			if msg.Role == "tool" {
				n++
			}
		}
		if n < m.MinToolResults {
			return false
		}
	}
	if m.AfterTool != "" && toolNameOfLast(messages) != m.AfterTool {
		return false
	}
	return true
}

// toolNameOfLast returns the function name of the call the last message
// answers, looked up by tool_call_id in the nearest assistant message before
// it that made calls, or "" when the last message is no tool result.
func toolNameOfLast(messages []Message) string {
	if len(messages) == 0 {
		return ""
	}
	last := messages[len(messages)-1]
	if last.Role != "tool" {
		return ""
	}
	for i := len(messages) - 2; i >= 0; i-- {
		if messages[i].Role != "assistant" || len(messages[i].ToolCalls) == 0 {
			continue
		}
		for _, c := range messages[i].ToolCalls {
			if c.ID == last.ToolCallID {
				return c.Name
			}
		}
		return ""
	}
	return ""
}

func anyContains(messages []Message, sub string) bool {
	for _, msg := range messages {
		if strings.Contains(msg.Content, sub) {
			return true
		}
	}
	return false
}

// summarize describes the last message for an error a person will read.
func summarize(messages []Message) string {
	if len(messages) == 0 {
		return "no messages"
	}
	last := messages[len(messages)-1]
	text := last.Content
	if text == "" && len(last.ToolCalls) > 0 {
		names := make([]string, len(last.ToolCalls))
		for i, c := range last.ToolCalls {
			names[i] = c.Name
		}
		text = "tool calls " + strings.Join(names, ", ")
	}
	if r := []rune(text); len(r) > 120 {
		text = string(r[:120]) + "…"
	}
	desc := fmt.Sprintf("last of %d messages is %s", len(messages), last.Role)
	if last.Role == "tool" {
		if name := toolNameOfLast(messages); name != "" {
			desc += " result of " + name
		}
	}
	return fmt.Sprintf("%s: %q", desc, text)
}
