package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// ModelConfig names an OpenAI-compatible endpoint.
type ModelConfig struct {
	BaseURL string
	APIKey  string `json:"-"`
	Name    string
	// ToolMode is "native" (function calling) or "text" (a JSON tool call in
	// the reply text, for models without tool calling).
	ToolMode string
	// ContextWindow is the model's window in tokens; 0 means 128k.
	ContextWindow int
}

// String leaves the key out, so logging a config never leaks it.
func (c ModelConfig) String() string {
	return fmt.Sprintf("model %s at %s (%s tools)", c.Name, c.BaseURL, c.toolMode())
}

func (c ModelConfig) toolMode() string {
	if c.ToolMode == "text" {
		return "text"
	}
	return "native"
}

// Configured reports whether there is an endpoint to call.
func (c ModelConfig) Configured() bool { return c.BaseURL != "" && c.Name != "" }

// ModelRequest is one call to the model.
type ModelRequest struct {
	Messages []Message
	Tools    []ToolSpec
}

// ToolSpec describes a tool to the model.
type ToolSpec struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}

// ModelReply is what the model answered.
type ModelReply struct {
	Text      string
	ToolCalls []ToolCall
	Usage     Usage
	// Cut is set when runaway repeated output was cut short.
	Cut bool
}

// Model is the seam to the language model. onText receives streamed text as
// it arrives.
type Model interface {
	Complete(ctx context.Context, req ModelRequest, onText func(string)) (ModelReply, error)
}

// retryable marks a model failure worth another attempt (429, 5xx, a
// timeout, a reply that did not parse) without changing its message.
type retryable struct{ err error }

func (r retryable) Error() string { return r.err.Error() }
func (r retryable) Unwrap() error { return r.err }

func isRetryable(err error) bool {
	var r retryable
	return errors.As(err, &r)
}

type openaiModel struct {
	client *openai.Client
	name   string
}

// NewOpenAIModel returns a Model speaking the OpenAI chat completions API.
func NewOpenAIModel(cfg ModelConfig) Model {
	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	// A stalled stream must not hang a run forever; cancel covers the rest.
	oc.HTTPClient = &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		ResponseHeaderTimeout: 2 * time.Minute,
		IdleConnTimeout:       90 * time.Second,
	}}
	return &openaiModel{client: openai.NewClientWithConfig(oc), name: cfg.Name}
}

func (m *openaiModel) Complete(ctx context.Context, req ModelRequest, onText func(string)) (ModelReply, error) {
	creq := openai.ChatCompletionRequest{
		Model:         m.name,
		Messages:      toOpenAIMessages(req.Messages),
		Stream:        true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	}
	for _, t := range req.Tools {
		creq.Tools = append(creq.Tools, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: t.Parameters,
		}})
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := m.client.CreateChatCompletionStream(ctx, creq)
	if err != nil {
		return ModelReply{}, classifyErr(err)
	}
	defer stream.Close()
	return readStream(ctx, stream, cancel, onText)
}

func readStream(ctx context.Context, stream *openai.ChatCompletionStream, cancel context.CancelFunc, onText func(string)) (ModelReply, error) {
	var (
		reply ModelReply
		text  strings.Builder
		calls []*ToolCall
		guard runaway
	)
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if reply.Cut {
				break
			}
			return ModelReply{}, classifyErr(err)
		}
		if chunk.Usage != nil {
			reply.Usage = Usage{PromptTokens: chunk.Usage.PromptTokens, CompletionTokens: chunk.Usage.CompletionTokens, TotalTokens: chunk.Usage.TotalTokens}
		}
		if len(chunk.Choices) == 0 {
			continue
		}
		delta := chunk.Choices[0].Delta
		if delta.Content != "" && !reply.Cut {
			piece, cut := guard.feed(delta.Content)
			text.WriteString(piece)
			if piece != "" && onText != nil {
				onText(piece)
			}
			if cut {
				reply.Cut = true
				cancel()
			}
		}
		calls = mergeToolDeltas(calls, delta.ToolCalls)
	}
	reply.Text = text.String()
	for _, c := range calls {
		if c.Name == "" {
			return ModelReply{}, retryable{errors.New("the model sent a tool call without a name")}
		}
		if len(c.Args) == 0 {
			c.Args = json.RawMessage("{}")
		}
		reply.ToolCalls = append(reply.ToolCalls, *c)
	}
	if reply.Text == "" && len(reply.ToolCalls) == 0 && ctx.Err() == nil {
		return ModelReply{}, retryable{errors.New("the model returned an empty or malformed reply")}
	}
	return reply, nil
}

// mergeToolDeltas assembles streamed tool calls: the first delta of a call
// carries its id and name, the next ones pieces of its arguments.
func mergeToolDeltas(calls []*ToolCall, deltas []openai.ToolCall) []*ToolCall {
	for _, d := range deltas {
		i := len(calls) - 1
		if d.Index != nil {
			i = *d.Index
		} else if d.ID != "" {
			i = len(calls)
		}
		for i >= len(calls) {
			calls = append(calls, &ToolCall{})
		}
		if i < 0 {
			continue
		}
		c := calls[i]
		if d.ID != "" {
			c.ID = d.ID
		}
		if d.Function.Name != "" {
			c.Name = d.Function.Name
		}
		c.Args = append(c.Args, d.Function.Arguments...)
	}
	return calls
}

// classifyErr wraps err so the loop knows whether to try again.
func classifyErr(err error) error {
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	status := 0
	switch {
	case errors.As(err, &apiErr):
		status = apiErr.HTTPStatusCode
	case errors.As(err, &reqErr):
		status = reqErr.HTTPStatusCode
	}
	var netErr net.Error
	switch {
	case errors.Is(err, context.Canceled):
		return err
	case status == http.StatusTooManyRequests || status >= 500:
		return retryable{err}
	case status >= 400:
		return fmt.Errorf("model refused the request: %w", err)
	case errors.As(err, &netErr), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, context.DeadlineExceeded):
		return retryable{err}
	case errors.Is(err, openai.ErrTooManyEmptyStreamMessages):
		return retryable{fmt.Errorf("the model sent no usable data: %w", err)}
	}
	// Anything else is a reply that did not parse.
	return retryable{fmt.Errorf("malformed reply: %w", err)}
}

func toOpenAIMessages(msgs []Message) []openai.ChatCompletionMessage {
	out := make([]openai.ChatCompletionMessage, 0, len(msgs))
	for _, m := range msgs {
		om := openai.ChatCompletionMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
		for _, c := range m.ToolCalls {
			om.ToolCalls = append(om.ToolCalls, openai.ToolCall{ID: c.ID, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: c.Name, Arguments: string(c.Args)}})
		}
		out = append(out, om)
	}
	return out
}
