package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// answer writes one reply in the OpenAI chat completions wire format.
type answer struct {
	w           http.ResponseWriter
	seq         int
	reply       reply
	promptBytes int
}

type functionCall struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type wireToolCall struct {
	Index    *int         `json:"index,omitempty"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function functionCall `json:"function"`
}

type delta struct {
	Role      string         `json:"role,omitempty"`
	Content   *string        `json:"content,omitempty"`
	ToolCalls []wireToolCall `json:"tool_calls,omitempty"`
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func (a answer) id() string          { return fmt.Sprintf("chatcmpl-bridge-%03d", a.seq) }
func (a answer) callID(i int) string { return fmt.Sprintf("call_%03d_%d", a.seq, i) }
func (a answer) finishReason() string {
	if len(a.reply.ToolCalls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

// usage estimates tokens at four bytes each: the bridge has no tokenizer,
// and agentd only needs numbers of the right size.
func (a answer) usage() usage {
	completion := len(a.reply.Content)
	for _, c := range a.reply.ToolCalls {
		completion += len(c.Name) + len(c.argumentsText())
	}
	u := usage{PromptTokens: a.promptBytes / 4, CompletionTokens: max(1, completion/4)}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

func (a answer) whole() {
	msg := map[string]any{"role": "assistant", "content": nil}
	if a.reply.Content != "" {
		msg["content"] = a.reply.Content
	}
	if len(a.reply.ToolCalls) > 0 {
		calls := make([]wireToolCall, len(a.reply.ToolCalls))
		for i, c := range a.reply.ToolCalls {
			calls[i] = wireToolCall{ID: a.callID(i), Type: "function", Function: functionCall{Name: c.Name, Arguments: c.argumentsText()}}
		}
		msg["tool_calls"] = calls
	}
	writeJSON(a.w, http.StatusOK, map[string]any{
		"id": a.id(), "object": "chat.completion", "created": time.Now().Unix(), "model": "bridge",
		"choices": []map[string]any{{"index": 0, "message": msg, "finish_reason": a.finishReason()}},
		"usage":   a.usage(),
	})
}

// stream sends the reply as OpenAI streams it: the role, the text in
// pieces, each tool call as a first delta with index, id and name and then
// pieces of its arguments, the finish reason, usage if asked, and [DONE].
func (a answer) stream(includeUsage bool) {
	a.w.Header().Set("Content-Type", "text/event-stream")
	a.w.Header().Set("Cache-Control", "no-cache")
	a.w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(a.w)
	created := time.Now().Unix()
	send := func(choices []map[string]any, u *usage) bool {
		chunk := map[string]any{"id": a.id(), "object": "chat.completion.chunk", "created": created, "model": "bridge", "choices": choices}
		if u != nil {
			chunk["usage"] = u
		}
		data, err := json.Marshal(chunk)
		if err != nil {
			return false
		}
		if _, err := fmt.Fprintf(a.w, "data: %s\n\n", data); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	sendDelta := func(d delta) bool {
		return send([]map[string]any{{"index": 0, "delta": d, "finish_reason": nil}}, nil)
	}

	empty := ""
	if !sendDelta(delta{Role: "assistant", Content: &empty}) {
		return
	}
	for _, piece := range pieces(a.reply.Content, 3) {
		if !sendDelta(delta{Content: &piece}) {
			return
		}
	}
	for i, c := range a.reply.ToolCalls {
		index := i
		first := wireToolCall{Index: &index, ID: a.callID(i), Type: "function", Function: functionCall{Name: c.Name}}
		if !sendDelta(delta{ToolCalls: []wireToolCall{first}}) {
			return
		}
		for _, piece := range pieces(c.argumentsText(), 3) {
			if !sendDelta(delta{ToolCalls: []wireToolCall{{Index: &index, Function: functionCall{Arguments: piece}}}}) {
				return
			}
		}
	}
	if !send([]map[string]any{{"index": 0, "delta": delta{}, "finish_reason": a.finishReason()}}, nil) {
		return
	}
	if includeUsage {
		u := a.usage()
		if !send([]map[string]any{}, &u) {
			return
		}
	}
	if _, err := fmt.Fprint(a.w, "data: [DONE]\n\n"); err == nil {
		_ = rc.Flush()
	}
}

// pieces cuts s into at most n pieces at rune boundaries, as a model
// streams: a client must join them, never take one for the whole.
func pieces(s string, n int) []string {
	runes := []rune(s)
	if len(runes) == 0 {
		return nil
	}
	size := max(1, (len(runes)+n-1)/n)
	var out []string
	for len(runes) > 0 {
		k := min(size, len(runes))
		out = append(out, string(runes[:k]))
		runes = runes[k:]
	}
	return out
}
