package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// openaiModel speaks the OpenAI chat completions API over plain net/http.
// It reads the event stream itself rather than through a client library, to
// bound every line before it is buffered, tell a clean end ([DONE] or a
// finish reason) from a cut, read the reasoning and cached-token fields
// servers add, keep tool-call arguments as the exact string sent, and see
// Retry-After.
type openaiModel struct {
	cfg    ModelConfig
	base   string
	client *http.Client
	window windowProbe
}

// NewOpenAIModel returns a Model speaking the OpenAI chat completions API.
func NewOpenAIModel(cfg ModelConfig) Model { return newOpenAIModel(cfg) }

func newOpenAIModel(cfg ModelConfig) *openaiModel {
	// No client timeout: the watchdog in Complete bounds each attempt, and
	// a whole-client timeout would cut a long but lively stream.
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   30 * time.Second,
		IdleConnTimeout:       90 * time.Second,
		MaxIdleConnsPerHost:   8,
		ExpectContinueTimeout: time.Second,
		ForceAttemptHTTP2:     true,
	}
	return &openaiModel{cfg: cfg, base: strings.TrimRight(cfg.BaseURL, "/"), client: &http.Client{Transport: tr}}
}

// CloseIdleConnections releases the kept-alive connections, for a caller
// that replaces the model or a test that counts file descriptors.
func (m *openaiModel) CloseIdleConnections() { m.client.CloseIdleConnections() }

func (m *openaiModel) Complete(ctx context.Context, req ModelRequest, out ModelStream) (ModelReply, error) {
	body, err := m.encode(req)
	if err != nil {
		return ModelReply{}, final("cannot encode the request: %v", err).because(err)
	}
	attempt, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	dog := watch(cancel, m.cfg.idleTimeout(), m.cfg.callTimeout())
	defer dog.stop()

	hreq, err := http.NewRequestWithContext(attempt, http.MethodPost, m.base+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return ModelReply{}, final("bad model base URL %q: %v", m.cfg.BaseURL, err).because(err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	if m.cfg.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+m.cfg.APIKey)
	}
	resp, err := m.client.Do(hreq)
	if err != nil {
		return ModelReply{}, explain(ctx, attempt, err, "cannot reach the model at "+m.base)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return ModelReply{}, explain(ctx, attempt, statusError(resp), "")
	}
	dog.progress()
	b := &replyBuilder{out: out}
	if isJSON(resp.Header.Get("Content-Type")) {
		err = readWhole(resp.Body, b)
	} else {
		err = readEvents(resp.Body, b, dog, resp.Header.Get("Content-Type"))
	}
	if err != nil {
		return ModelReply{}, explain(ctx, attempt, err, "the connection to the model broke")
	}
	return b.reply()
}

// readEvents reads a streamed reply. A stream counts as whole when it says
// [DONE] or gave a finish reason; ending otherwise is a cut. Progress, for
// the idle timeout, is an event or a large piece of one: keep-alive
// comments and a trickle of bytes are not the model sending.
func readEvents(body io.Reader, b *replyBuilder, dog *watchdog, contentType string) error {
	sse := newSSEReader(body, dog.progress)
	for events := 0; ; events++ {
		data, err := sse.next()
		if errors.Is(err, io.EOF) {
			if events == 0 {
				return retryable("the model's server answered without a single event (Content-Type %q)", contentType)
			}
			if b.finish == "" {
				return retryable("the model's stream ended before the answer was complete (no finish reason, no [DONE])")
			}
			return nil
		}
		switch {
		case errors.Is(err, errLineTooLong):
			return retryable("the model sent a chunk longer than %d MiB", maxLineBytes>>20)
		case errors.Is(err, errCutMidLine):
			return retryable("the model's stream was cut off in the middle of a chunk")
		case err != nil:
			return err
		}
		if bytes.Equal(data, doneEvent) {
			// Read the little that follows so the connection is reused:
			// one closed before its end costs a new handshake next step.
			_, _ = io.Copy(io.Discard, io.LimitReader(sse.r, 4<<10))
			return nil
		}
		dog.progress()
		// A fresh chunk each time: json.Unmarshal keeps the fields of a
		// reused slice element that the new JSON leaves out.
		var c chatChunk
		if err := json.Unmarshal(data, &c); err != nil {
			return retryable("the model sent a malformed chunk: %v", err).because(err)
		}
		if err := b.chunk(&c); err != nil {
			return err
		}
		if b.cut {
			return nil // runaway output: what came is the answer
		}
	}
}

// readWhole reads a reply that came as one JSON document, from a server
// that does not stream.
func readWhole(body io.Reader, b *replyBuilder) error {
	data, err := io.ReadAll(io.LimitReader(body, maxReplyBytes+1))
	if err != nil {
		return err
	}
	if len(data) > maxReplyBytes {
		return retryable("the model's reply grew past %d MiB", maxReplyBytes>>20)
	}
	var c chatChunk
	if err := json.Unmarshal(data, &c); err != nil {
		return retryable("the model sent a malformed reply: %v", err).because(err)
	}
	if err := b.chunk(&c); err != nil {
		return err
	}
	if b.finish == "" {
		b.finish = "stop"
	}
	return nil
}

func isJSON(contentType string) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt == "application/json"
}

// explain turns a failure of an attempt into what the user reads. The
// watchdog's reasons and the caller's cancellation come first: a read that
// failed because the attempt was cancelled says nothing by itself.
func explain(parent, attempt context.Context, err error, broke string) error {
	if parent.Err() != nil {
		return context.Cause(parent)
	}
	var me *modelError
	if cause := context.Cause(attempt); errors.As(cause, &me) {
		return me
	}
	if errors.As(err, &me) {
		return me
	}
	return retryable("%s: %v", broke, err).because(err)
}

// chatRequest is the body of POST /chat/completions.
type chatRequest struct {
	Model           string        `json:"model"`
	Messages        []chatMessage `json:"messages"`
	Tools           []chatTool    `json:"tools,omitempty"`
	Stream          bool          `json:"stream"`
	StreamOptions   *streamOpts   `json:"stream_options,omitempty"`
	ReasoningEffort string        `json:"reasoning_effort,omitempty"`
	ToolChoice      string        `json:"tool_choice,omitempty"`
}

type streamOpts struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatMessage struct {
	Role string `json:"role"`
	// Content is a *string, or []chatPart for a message with images.
	Content    any            `json:"content,omitempty"`
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

// chatPart is one part of a message's content: text, or an image as a
// data URL.
type chatPart struct {
	Type     string        `json:"type"`
	Text     string        `json:"text,omitempty"`
	ImageURL *chatImageURL `json:"image_url,omitempty"`
}

type chatImageURL struct {
	URL string `json:"url"`
}

type chatToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name string `json:"name"`
	// Arguments is the string the model produced, sent back unchanged.
	Arguments string `json:"arguments"`
}

type chatTool struct {
	Type     string      `json:"type"`
	Function chatToolDef `json:"function"`
}

type chatToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// encode builds the request body. HTML escaping is off so that what the
// model wrote (2>&1, <T>) reaches it as written.
func (m *openaiModel) encode(req ModelRequest) ([]byte, error) {
	cr := chatRequest{Model: m.cfg.Name, Messages: make([]chatMessage, 0, len(req.Messages)), Stream: true,
		StreamOptions: &streamOpts{IncludeUsage: true}, ReasoningEffort: firstNonEmpty(req.ReasoningEffort, m.cfg.ReasoningEffort)}
	if len(req.Tools) > 0 {
		cr.ToolChoice = req.ToolChoice
	}
	for _, msg := range req.Messages {
		cr.Messages = append(cr.Messages, toChatMessage(msg))
	}
	for _, t := range req.Tools {
		cr.Tools = append(cr.Tools, chatTool{Type: "function", Function: chatToolDef{Name: t.Name, Description: t.Description, Parameters: t.Parameters}})
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(cr); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// toChatMessage sends content as a string, even empty, except for an
// assistant message that only calls tools, whose content is left out, and a
// message with images, whose content is its text then its pictures.
func toChatMessage(m Message) chatMessage {
	cm := chatMessage{Role: m.Role, ToolCallID: m.ToolCallID}
	if len(m.Images) > 0 {
		parts := []chatPart{{Type: "text", Text: m.Content}}
		for _, im := range m.Images {
			parts = append(parts, chatPart{Type: "image_url", ImageURL: &chatImageURL{URL: im.dataURL()}})
		}
		cm.Content = parts
	} else if m.Content != "" || len(m.ToolCalls) == 0 {
		content := m.Content
		cm.Content = &content
	}
	for _, c := range m.ToolCalls {
		cm.ToolCalls = append(cm.ToolCalls, chatToolCall{ID: c.ID, Type: "function", Function: chatFunction{Name: c.Name, Arguments: string(c.Args)}})
	}
	return cm
}

// statusError reads an HTTP error answer: OpenAI's error envelope or the
// start of whatever the body is, and Retry-After.
func statusError(resp *http.Response) *modelError {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	detail := errorDetail(data)
	status := resp.Status
	if status == "" {
		status = fmt.Sprint(resp.StatusCode)
	}
	msg := status
	if detail != "" {
		msg += ": " + detail
	}
	code := resp.StatusCode
	switch {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return final("%s (check the API key)", msg)
	case code == http.StatusNotFound:
		return final("%s (check the base URL and the model name)", msg)
	case code == http.StatusTooManyRequests || code == http.StatusRequestTimeout || code == http.StatusConflict || code >= 500:
		e := retryable("%s", msg)
		e.wait = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
		return e
	}
	return final("the model's server rejected the request: %s", msg)
}

func errorDetail(body []byte) string {
	var env struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &env) == nil && len(env.Error) > 0 {
		var e apiErrorJSON
		if json.Unmarshal(env.Error, &e) == nil {
			return e.text()
		}
		var s string
		if json.Unmarshal(env.Error, &s) == nil {
			return oneLine(s, 500)
		}
	}
	return oneLine(string(body), 300)
}

// parseRetryAfter reads a Retry-After value: seconds, or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		if secs > 1e6 {
			secs = 1e6
		}
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// watchdog cancels an attempt when the model sends no data for idle, or
// when the whole attempt takes longer than total. progress costs a clock
// read; the idle timer re-arms itself from the last progress when it fires.
type watchdog struct {
	start   time.Time
	last    atomic.Int64 // time.Since(start) at the last progress, in ns
	started atomic.Bool  // the server has answered at all
	idle    time.Duration

	mu      sync.Mutex // guards idleT, totalT, stopped
	idleT   *time.Timer
	totalT  *time.Timer
	stopped bool
}

func watch(cancel context.CancelCauseFunc, idle, total time.Duration) *watchdog {
	w := &watchdog{start: time.Now(), idle: idle}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.idleT = time.AfterFunc(idle, func() {
		quiet := time.Since(w.start) - time.Duration(w.last.Load())
		if quiet >= w.idle {
			if w.started.Load() {
				cancel(retryable("the model stopped sending for %s", w.idle))
			} else {
				cancel(retryable("the model's server did not answer for %s", w.idle))
			}
			return
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		if !w.stopped {
			w.idleT.Reset(w.idle - quiet)
		}
	})
	w.totalT = time.AfterFunc(total, func() {
		cancel(retryable("the model's answer took longer than %s", total))
	})
	return w
}

func (w *watchdog) progress() {
	w.last.Store(int64(time.Since(w.start)))
	w.started.Store(true)
}

func (w *watchdog) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	w.idleT.Stop()
	w.totalT.Stop()
}
