package modeltest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"
)

// The types below are the OpenAI chat completions wire format, written out
// here rather than borrowed from go-openai so that the server checks the
// client against the format and not against the client's own types.

type wireRequest struct {
	Model           string          `json:"model"`
	Messages        []wireMessage   `json:"messages"`
	Stream          bool            `json:"stream"`
	ReasoningEffort string          `json:"reasoning_effort"`
	ToolChoice      json.RawMessage `json:"tool_choice"`
	StreamOptions   *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Tools []struct {
		Type     string `json:"type"`
		Function *struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	// Functions is the deprecated form of Tools; a client using it still
	// offers tools.
	Functions []struct {
		Name string `json:"name"`
	} `json:"functions"`
}

type wireMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Name       string          `json:"name"`
	ToolCalls  []wireToolCall  `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
}

type wireToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name string `json:"name,omitempty"`
		// Not omitempty: OpenAI sends "arguments":"" in the first delta.
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// record turns the wire request into the form tests read.
func (in *wireRequest) record() Request {
	req := Request{
		Model:           in.Model,
		Stream:          in.Stream,
		ReasoningEffort: in.ReasoningEffort,
	}
	req.IncludeUsage = in.StreamOptions != nil && in.StreamOptions.IncludeUsage
	if len(in.ToolChoice) > 0 {
		var choice string
		if json.Unmarshal(in.ToolChoice, &choice) != nil {
			choice = string(in.ToolChoice)
		}
		req.ToolChoice = choice
	}
	for _, t := range in.Tools {
		if t.Function != nil {
			req.Tools = append(req.Tools, t.Function.Name)
			if req.Schemas == nil {
				req.Schemas = map[string]json.RawMessage{}
			}
			req.Schemas[t.Function.Name] = t.Function.Parameters
		} else {
			req.Tools = append(req.Tools, t.Type)
		}
	}
	for _, f := range in.Functions {
		req.Tools = append(req.Tools, f.Name)
	}
	for _, m := range in.Messages {
		msg := Message{
			Role:       m.Role,
			Content:    contentText(m.Content),
			Images:     contentImages(m.Content),
			ToolCallID: m.ToolCallID,
			Name:       m.Name,
		}
		for _, c := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, MessageToolCall{
				ID:        c.ID,
				Name:      c.Function.Name,
				Arguments: c.Function.Arguments,
			})
		}
		req.Messages = append(req.Messages, msg)
	}
	return req
}

// contentImages lists the image URLs of content that is an array of parts.
func contentImages(raw json.RawMessage) []string {
	var parts []struct {
		Type     string `json:"type"`
		ImageURL *struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return nil
	}
	var urls []string
	for _, p := range parts {
		if p.Type == "image_url" && p.ImageURL != nil {
			urls = append(urls, p.ImageURL.URL)
		}
	}
	return urls
}

// contentText reads content that is a string, null, or an array of parts;
// of parts only the text is kept.
func contentText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err == nil {
		texts := make([]string, 0, len(parts))
		for _, p := range parts {
			if p.Text != "" {
				texts = append(texts, p.Text)
			}
		}
		return strings.Join(texts, "\n")
	}
	return string(raw)
}

type wireUsage struct {
	PromptTokens        int                `json:"prompt_tokens"`
	CompletionTokens    int                `json:"completion_tokens"`
	TotalTokens         int                `json:"total_tokens"`
	PromptTokensDetails *wirePromptDetails `json:"prompt_tokens_details,omitempty"`
}

type wirePromptDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

type wireChunk struct {
	ID                string            `json:"id"`
	Object            string            `json:"object"`
	Created           int64             `json:"created"`
	Model             string            `json:"model"`
	SystemFingerprint string            `json:"system_fingerprint"`
	Choices           []wireChunkChoice `json:"choices"`
	Usage             *wireUsage        `json:"usage,omitempty"`
}

type wireChunkChoice struct {
	Index int       `json:"index"`
	Delta wireDelta `json:"delta"`
	// A pointer so that it is null until the last chunk, as OpenAI sends it.
	FinishReason *string `json:"finish_reason"`
}

type wireDelta struct {
	Role             string         `json:"role,omitempty"`
	Content          *string        `json:"content,omitempty"`
	ReasoningContent *string        `json:"reasoning_content,omitempty"`
	Reasoning        *string        `json:"reasoning,omitempty"`
	ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
}

type wireCompletion struct {
	ID                string       `json:"id"`
	Object            string       `json:"object"`
	Created           int64        `json:"created"`
	Model             string       `json:"model"`
	SystemFingerprint string       `json:"system_fingerprint"`
	Choices           []wireChoice `json:"choices"`
	Usage             wireUsage    `json:"usage"`
}

type wireChoice struct {
	Index        int             `json:"index"`
	Message      wireRespMessage `json:"message"`
	FinishReason string          `json:"finish_reason"`
}

type wireRespMessage struct {
	Role string `json:"role"`
	// Null, not "", when the model only calls tools, as OpenAI sends it.
	Content          *string        `json:"content"`
	ReasoningContent *string        `json:"reasoning_content,omitempty"`
	Reasoning        *string        `json:"reasoning,omitempty"`
	ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
}

// answer writes one turn's reply to one request.
type answer struct {
	w       http.ResponseWriter
	ctx     context.Context
	closed  <-chan struct{}
	req     *Request
	reply   Reply
	turnIdx int
}

func (a *answer) write() {
	if a.reply.DelayMs > 0 && !a.wait(time.Duration(a.reply.DelayMs)*time.Millisecond) {
		return
	}
	if a.reply.Gate != "" && !a.waitFile(a.reply.Gate) {
		return
	}
	for k, v := range a.reply.Headers {
		a.w.Header().Set(k, v)
	}
	switch {
	case a.reply.Status != 0:
		a.writeStatus()
	case a.reply.Garbage:
		a.writeGarbage()
	case a.reply.Stall && !a.req.Stream:
		a.wait(24 * time.Hour)
	case a.reply.Stall:
		a.streamHeaders()
		a.wait(24 * time.Hour)
	case a.reply.TrickleMs > 0:
		a.trickle()
	case a.req.Stream && !a.reply.Whole:
		a.writeStream()
	default:
		a.writeWhole()
	}
}

// streamHeaders starts an event stream and flushes its headers.
func (a *answer) streamHeaders() *http.ResponseController {
	a.w.Header().Set("Content-Type", "text/event-stream")
	a.w.Header().Set("Cache-Control", "no-cache")
	a.w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(a.w)
	_ = rc.Flush()
	return rc
}

// trickle sends a keep-alive comment one byte at a time, forever: the
// connection is alive and no data ever comes.
func (a *answer) trickle() {
	rc := a.streamHeaders()
	comment := []byte(": keep-alive\n")
	for i := 0; ; i++ {
		if !a.wait(time.Duration(a.reply.TrickleMs) * time.Millisecond) {
			return
		}
		if _, err := a.w.Write(comment[i%len(comment) : i%len(comment)+1]); err != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
	}
}

// wait sleeps for d and reports whether the client is still there.
func (a *answer) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-a.ctx.Done():
		return false
	case <-a.closed:
		return false
	}
}

// waitFile waits until the file exists; false if the client went away
// first.
func (a *answer) waitFile(path string) bool {
	for {
		if _, err := os.Stat(path); err == nil {
			return true
		}
		if !a.wait(10 * time.Millisecond) {
			return false
		}
	}
}

func (a *answer) writeStatus() {
	body := strings.TrimSpace(a.reply.Body)
	if strings.HasPrefix(body, "{") && json.Valid([]byte(body)) {
		a.w.Header().Set("Content-Type", "application/json")
		a.w.WriteHeader(a.reply.Status)
		_, _ = a.w.Write([]byte(body))
		return
	}
	if body == "" {
		body = http.StatusText(a.reply.Status)
	}
	writeError(a.w, a.reply.Status, body)
}

// writeGarbage answers 200 with a body the client cannot parse: for a stream
// a data line that is not JSON (lines without "data:" would only be counted
// as empty messages by go-openai), otherwise a body that is not JSON.
func (a *answer) writeGarbage() {
	if a.req.Stream {
		a.w.Header().Set("Content-Type", "text/event-stream")
		a.w.WriteHeader(http.StatusOK)
		_, _ = a.w.Write([]byte("data: {\"id\":\"chatcmpl-garbage\",\"choices\":[{\"delta\":{\"content\":\"half\n\ndata: this is not json\n\n"))
		return
	}
	a.w.Header().Set("Content-Type", "application/json")
	a.w.WriteHeader(http.StatusOK)
	_, _ = a.w.Write([]byte("<html>502 this is not JSON {\"choices\": ["))
}

func (a *answer) id() string { return fmt.Sprintf("chatcmpl-fake-%d", a.req.Seq) }

func (a *answer) model() string {
	if a.req.Model != "" {
		return a.req.Model
	}
	return "fakemodel"
}

func (a *answer) callID(i int, c ToolCall) string {
	if c.ID != "" {
		return c.ID
	}
	return fmt.Sprintf("call_%d_%d", a.turnIdx, i)
}

func (a *answer) finishReason() string {
	switch {
	case a.reply.FinishReason != "":
		return a.reply.FinishReason
	case len(a.reply.ToolCalls) > 0:
		return "tool_calls"
	default:
		return "stop"
	}
}

func (a *answer) usage() wireUsage {
	var u wireUsage
	if a.reply.Usage != nil {
		u.PromptTokens, u.CompletionTokens = a.reply.Usage.PromptTokens, a.reply.Usage.CompletionTokens
		if c := a.reply.Usage.CachedTokens; c > 0 {
			u.PromptTokensDetails = &wirePromptDetails{CachedTokens: c}
		}
	} else {
		for _, m := range a.req.Messages {
			// A few tokens a message for the role and framing, as real
			// tokenizers charge.
			u.PromptTokens += 4 + estimateTokens(m.Content)
			for _, c := range m.ToolCalls {
				u.PromptTokens += estimateTokens(c.Name + c.Arguments)
			}
		}
		u.CompletionTokens = estimateTokens(a.reply.Text)
		for _, c := range a.reply.ToolCalls {
			u.CompletionTokens += estimateTokens(c.Name + c.argumentsText())
		}
		u.CompletionTokens = max(1, u.CompletionTokens)
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

func (a *answer) writeWhole() {
	msg := wireRespMessage{Role: "assistant"}
	if a.reply.Text != "" || len(a.reply.ToolCalls) == 0 {
		text := a.reply.Text
		msg.Content = &text
	}
	if a.reply.Reasoning != "" {
		thought := a.reply.Reasoning
		if a.reply.ReasoningField == "reasoning" {
			msg.Reasoning = &thought
		} else {
			msg.ReasoningContent = &thought
		}
	}
	for i, c := range a.reply.ToolCalls {
		tc := wireToolCall{ID: a.callID(i, c), Type: "function"}
		tc.Function.Name, tc.Function.Arguments = c.Name, c.argumentsText()
		msg.ToolCalls = append(msg.ToolCalls, tc)
	}
	if a.reply.Hang || a.reply.Cut || a.reply.Abort {
		// Nothing of a whole answer can be sent before it is complete.
		a.wait(24 * time.Hour)
		return
	}
	writeJSON(a.w, http.StatusOK, wireCompletion{
		ID:                a.id(),
		Object:            "chat.completion",
		Created:           time.Now().Unix(),
		Model:             a.model(),
		SystemFingerprint: "fp_modeltest",
		Choices:           []wireChoice{{Message: msg, FinishReason: a.finishReason()}},
		Usage:             a.usage(),
	})
}

// writeStream sends the reply as OpenAI streams it: a chunk with the role,
// the reasoning and then the text in pieces, each tool call as a first
// delta with its index, id and name followed by deltas with pieces of its
// arguments, a chunk with the finish reason, a usage chunk with no choices
// if asked for, and [DONE].
func (a *answer) writeStream() {
	rc := a.streamHeaders()
	created := time.Now().Unix()
	send := func(choices []wireChunkChoice, usage *wireUsage) bool {
		b, err := json.Marshal(wireChunk{
			ID:                a.id(),
			Object:            "chat.completion.chunk",
			Created:           created,
			Model:             a.model(),
			SystemFingerprint: "fp_modeltest",
			Choices:           choices,
			Usage:             usage,
		})
		if err != nil {
			return false
		}
		if _, err := fmt.Fprintf(a.w, "data: %s\n\n", b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	delta := func(d wireDelta) bool {
		return send([]wireChunkChoice{{Delta: d}}, nil)
	}

	if a.reply.Cut && a.reply.Text == "" && a.reply.Reasoning == "" && len(a.reply.ToolCalls) == 0 {
		return // an empty stream: headers, then the end
	}
	empty := ""
	if !delta(wireDelta{Role: "assistant", Content: &empty}) {
		return
	}
	chunks := a.reply.Chunks
	if chunks == 0 {
		chunks = 3
	}
	for _, piece := range split(a.reply.Reasoning, chunks) {
		d := wireDelta{ReasoningContent: &piece}
		if a.reply.ReasoningField == "reasoning" {
			d = wireDelta{Reasoning: &piece}
		}
		if !delta(d) {
			return
		}
	}
	for _, piece := range split(a.reply.Text, chunks) {
		if !delta(wireDelta{Content: &piece}) {
			return
		}
	}
	for i, c := range a.reply.ToolCalls {
		index := i
		if c.Index != nil {
			index = *c.Index
		}
		first := wireToolCall{Index: &index, ID: a.callID(i, c), Type: "function"}
		first.Function.Name = c.Name
		if !delta(wireDelta{ToolCalls: []wireToolCall{first}}) {
			return
		}
		for _, piece := range split(c.argumentsText(), chunks) {
			more := wireToolCall{Index: &index}
			more.Function.Arguments = piece
			if !delta(wireDelta{ToolCalls: []wireToolCall{more}}) {
				return
			}
		}
	}
	if a.reply.Hang {
		a.wait(24 * time.Hour)
		return
	}
	if a.reply.Cut {
		return
	}
	if a.reply.Abort {
		// The server drops the connection without ending the response.
		panic(http.ErrAbortHandler)
	}
	if a.reply.StreamError != "" {
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": a.reply.StreamError, "code": 502}})
		if _, err := fmt.Fprintf(a.w, "data: %s\n\n", b); err == nil {
			_ = rc.Flush()
		}
		return
	}
	reason := a.finishReason()
	if !send([]wireChunkChoice{{Delta: wireDelta{}, FinishReason: &reason}}, nil) {
		return
	}
	if a.req.IncludeUsage {
		u := a.usage()
		if !send([]wireChunkChoice{}, &u) {
			return
		}
	}
	if _, err := fmt.Fprint(a.w, "data: [DONE]\n\n"); err == nil {
		_ = rc.Flush()
	}
}

// writeError answers in OpenAI's error envelope, which go-openai turns into
// an *openai.APIError carrying the message.
func writeError(w http.ResponseWriter, status int, message string) {
	typ := "invalid_request_error"
	if status >= 500 {
		typ = "server_error"
	}
	writeJSON(w, status, map[string]any{
		"error": map[string]any{
			"message": message,
			"type":    typ,
			"param":   nil,
			"code":    nil,
		},
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, fmt.Sprintf("fakemodel: encode response: %v", err), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
