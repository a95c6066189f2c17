package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// ModelConfig names an OpenAI-compatible endpoint and how patiently to
// talk to it.
type ModelConfig struct {
	BaseURL string
	APIKey  string `json:"-"`
	Name    string
	// ToolMode is "native" (function calling) or "text" (a JSON tool call in
	// the reply text, for models without tool calling).
	ToolMode string
	// ContextWindow is the model's window in tokens; 0 means what the
	// endpoint says (see ProbeContextWindow), else 128k.
	ContextWindow int
	// ReasoningEffort ("low", "medium" or "high") is sent as
	// reasoning_effort when set; a request's own effort wins.
	ReasoningEffort string
	// StreamIdleTimeout ends an attempt when the model sends no data for
	// this long, headers included; 0 means DefaultStreamIdleTimeout.
	StreamIdleTimeout time.Duration
	// CallTimeout bounds one attempt from request to last byte, catching a
	// stream that trickles forever; 0 means DefaultCallTimeout.
	CallTimeout time.Duration
	// MaxRetryWait caps the wait a Retry-After header asks for; 0 means
	// DefaultMaxRetryWait.
	MaxRetryWait time.Duration
	// Images says whether the model reads images: ImagesAuto (the
	// endpoint or the model's name says), ImagesOn or ImagesOff.
	Images string
	// ImageMaxSide is the longest side of an image sent, in pixels; 0
	// means images.DefaultLimits'.
	ImageMaxSide int
}

// Defaults of ModelConfig's timeouts. Reasoning models can think for minutes
// before their first token, hence the generous idle timeout.
const (
	DefaultStreamIdleTimeout = 5 * time.Minute
	DefaultCallTimeout       = 30 * time.Minute
	DefaultMaxRetryWait      = 2 * time.Minute
)

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

func (c ModelConfig) idleTimeout() time.Duration {
	return orDefault(c.StreamIdleTimeout, DefaultStreamIdleTimeout)
}

func (c ModelConfig) callTimeout() time.Duration { return orDefault(c.CallTimeout, DefaultCallTimeout) }

func (c ModelConfig) maxRetryWait() time.Duration {
	return orDefault(c.MaxRetryWait, DefaultMaxRetryWait)
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Configured reports whether there is an endpoint to call.
func (c ModelConfig) Configured() bool { return c.BaseURL != "" && c.Name != "" }

// Reasoning efforts the OpenAI-compatible API knows.
const (
	EffortLow    = "low"
	EffortMedium = "medium"
	EffortHigh   = "high"
)

// ValidEffort reports whether e is a reasoning effort agentd sends ("" is
// valid: none is sent).
func ValidEffort(e string) bool {
	switch e {
	case "", EffortLow, EffortMedium, EffortHigh:
		return true
	}
	return false
}

// ModelRequest is one call to the model.
type ModelRequest struct {
	Messages []Message
	Tools    []ToolSpec
	// ReasoningEffort overrides ModelConfig.ReasoningEffort when set.
	ReasoningEffort string
	// ToolChoice, when set, is sent as tool_choice: "none" keeps the tools
	// in the request (its prefix unchanged) but lets the model call none.
	ToolChoice string
}

// ToolSpec describes a tool to the model.
type ToolSpec struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}

// ModelReply is what the model answered.
type ModelReply struct {
	Text string
	// Reasoning is the thinking the model streamed apart from its answer.
	// It is shown, never sent back to the model.
	Reasoning string
	ToolCalls []ToolCall
	Usage     ModelUsage
	// FinishReason is the model's own ("stop", "tool_calls", "length"...),
	// "" when it sent none but closed the stream properly.
	FinishReason string
	// Cut is set when runaway repeated output was cut short.
	Cut bool
}

// ModelUsage counts the tokens of one call, as the provider reports them.
type ModelUsage struct {
	PromptTokens     int
	CompletionTokens int
	TotalTokens      int
	// CachedTokens is the part of the prompt served from the provider's
	// prompt cache (prompt_tokens_details.cached_tokens).
	CachedTokens int
	// ReasoningTokens is the part of the completion spent thinking.
	ReasoningTokens int
}

// ModelStream receives a reply as it arrives. Either func may be nil. They
// are called from the goroutine that called Complete.
type ModelStream struct {
	// OnText receives pieces of the answer.
	OnText func(string)
	// OnReasoning receives pieces of the model's thinking (the
	// reasoning_content or reasoning delta fields).
	OnReasoning func(string)
}

func (s ModelStream) text(p string) {
	if s.OnText != nil && p != "" {
		s.OnText(p)
	}
}

func (s ModelStream) reasoning(p string) {
	if s.OnReasoning != nil && p != "" {
		s.OnReasoning(p)
	}
}

// Model is the seam to the language model.
type Model interface {
	// Complete makes one attempt: it streams the reply to out and returns
	// it whole, or an error the caller may retry (see retryAfter).
	Complete(ctx context.Context, req ModelRequest, out ModelStream) (ModelReply, error)
}
