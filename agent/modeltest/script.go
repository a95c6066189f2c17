package modeltest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Script is what the fake model will say, turn by turn.
type Script struct {
	Turns []Turn `json:"turns"`
	// Endpoint is what the server says of its models; nil lists the model
	// names seen in /v1/models and answers 404 to /props and /api/*.
	Endpoint *Endpoint `json:"endpoint,omitempty"`
	// Chaos, if set, fails requests at random before any turn is taken.
	Chaos *Chaos `json:"chaos,omitempty"`
}

// Endpoint describes the model as the server's model list and the
// llama.cpp and Ollama endpoints report it.
type Endpoint struct {
	// Models replaces the list GET /v1/models answers.
	Models []ModelEntry `json:"models,omitempty"`
	// PropsNCtx makes GET /props answer as llama.cpp does, with this n_ctx.
	PropsNCtx int `json:"propsNCtx,omitempty"`
	// OllamaNumCtx and OllamaContextLength make POST /api/show answer as
	// Ollama does: num_ctx among the parameters (0 leaves it out) and
	// llama.context_length in model_info.
	OllamaNumCtx        int `json:"ollamaNumCtx,omitempty"`
	OllamaContextLength int `json:"ollamaContextLength,omitempty"`
	// OllamaLoaded makes GET /api/ps list every model in Models (or
	// "fakemodel") as loaded with this context_length.
	OllamaLoaded int `json:"ollamaLoaded,omitempty"`
}

// ModelEntry is one model of the list, with the window fields vLLM
// (max_model_len) and OpenRouter (context_length) add.
type ModelEntry struct {
	ID            string `json:"id"`
	MaxModelLen   int    `json:"max_model_len,omitempty"`
	ContextLength int    `json:"context_length,omitempty"`
}

// Chaos fails requests at random, before a turn is taken, so the turn
// answers a later attempt. Each rate is a probability; they add up to the
// chance a request fails.
type Chaos struct {
	// Seed makes the sequence of faults repeatable; 0 picks one.
	Seed uint64 `json:"seed,omitempty"`
	// Status500 answers 500.
	Status500 float64 `json:"status500,omitempty"`
	// Status429 answers 429 with RetryAfter (default "1") as Retry-After.
	Status429  float64 `json:"status429,omitempty"`
	RetryAfter string  `json:"retryAfter,omitempty"`
	// Cut streams the start of a tool call, then ends the stream with no
	// finish reason and no [DONE].
	Cut float64 `json:"cut,omitempty"`
	// Stall sends the stream's headers, then nothing.
	Stall float64 `json:"stall,omitempty"`
}

// Turn is one scripted answer and the condition for giving it.
type Turn struct {
	// Name labels the turn in Unused, in recorded requests and in logs;
	// unnamed turns are called "#" and their index.
	Name  string `json:"name,omitempty"`
	Match Match  `json:"match,omitzero"`
	Reply Reply  `json:"reply"`
	// Repeat keeps the turn after it answers, for requests a test makes an
	// unknown number of times (retries, pings).
	Repeat bool `json:"repeat,omitempty"`
}

// Match is the condition a request must meet for a turn to answer it. Every
// set field must hold; the zero Match holds for every request.
type Match struct {
	// LastUser is a substring of the last user message.
	LastUser string `json:"lastUser,omitempty"`
	// LastTool is a substring of the last tool message.
	LastTool string `json:"lastTool,omitempty"`
	// AfterTool holds when the last message is the result of a call to the
	// tool of this name, found through its tool_call_id in the assistant
	// message that made the call.
	AfterTool string `json:"afterTool,omitempty"`
	// System is a substring of the system messages.
	System string `json:"system,omitempty"`
	// HasTools, when set, is whether the request offers any tools the
	// model may call (tools, and a tool_choice other than "none").
	HasTools *bool `json:"hasTools,omitempty"`
	// AnyMessage is a substring of the content of any message.
	AnyMessage string `json:"anyMessage,omitempty"`
	// MinToolResults is the least number of tool messages since the last
	// user message.
	MinToolResults int `json:"minToolResults,omitempty"`
}

// Reply is how a turn answers.
type Reply struct {
	// Text is the assistant's content. It is streamed in Chunks pieces
	// (default 3) or returned whole when the request does not stream.
	Text   string `json:"text,omitempty"`
	Chunks int    `json:"chunks,omitempty"`
	// ToolCalls are the calls the model makes; several are parallel calls.
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	// Status, when 400 or more, makes the answer an HTTP error whose message
	// is Body. A Body that is already a JSON object is sent as it is.
	Status int    `json:"status,omitempty"`
	Body   string `json:"body,omitempty"`
	// Headers are added to the response, e.g. Retry-After with a 429.
	Headers map[string]string `json:"headers,omitempty"`
	// Times makes the turn answer this many requests before it is consumed,
	// so a test can have the model fail twice and then succeed.
	Times int `json:"times,omitempty"`
	// Garbage answers 200 with a body that is neither JSON nor valid SSE.
	Garbage bool `json:"garbage,omitempty"`
	// Hang streams the text's chunks and then blocks, without [DONE], until
	// the client goes away; a request that does not stream just blocks.
	Hang bool `json:"hang,omitempty"`
	// DelayMs waits before answering; a client that goes away ends the wait.
	DelayMs int `json:"delayMs,omitempty"`
	// Gate names a file the answer waits for (after DelayMs): a test holds
	// the model's answer while it does something (steers the run), then
	// creates the file. A client that goes away ends the wait.
	Gate string `json:"gate,omitempty"`
	// Usage overrides the token counts, which are otherwise estimated from
	// the lengths of the prompt and the reply.
	Usage *Usage `json:"usage,omitempty"`
	// FinishReason overrides "stop" (or "tool_calls" when there are calls).
	FinishReason string `json:"finishReason,omitempty"`
	// Reasoning is the model's thinking, streamed before the text in
	// ReasoningField: "reasoning_content" (DeepSeek, vLLM; the default) or
	// "reasoning" (OpenRouter, Ollama). A whole answer carries it in the
	// message.
	Reasoning      string `json:"reasoning,omitempty"`
	ReasoningField string `json:"reasoningField,omitempty"`
	// Stall sends a stream's headers, then nothing until the client goes
	// away; a request that does not stream just blocks.
	Stall bool `json:"stall,omitempty"`
	// TrickleMs sends, after a stream's headers, one byte of a keep-alive
	// comment every TrickleMs milliseconds until the client goes away:
	// bytes flow, data never does.
	TrickleMs int `json:"trickleMs,omitempty"`
	// Cut ends the stream after the reasoning, text and tool calls with
	// neither a finish reason nor [DONE], as a dropped upstream does; with
	// none of them the stream is empty.
	Cut bool `json:"cut,omitempty"`
	// StreamError sends, after the reasoning, text and tool calls, an error
	// chunk ({"error": {"message": ...}}) as OpenRouter does when the
	// upstream fails mid-answer, and ends the stream.
	StreamError string `json:"streamError,omitempty"`
	// Abort drops the connection after the reasoning, text and tool calls,
	// in the middle of the stream, as a crashing upstream does.
	Abort bool `json:"abort,omitempty"`
	// Whole answers with a whole completion (JSON, not a stream) even when
	// the request asks for a stream, as servers that ignore stream do.
	Whole bool `json:"whole,omitempty"`
}

// ToolCall is one function call in a reply.
type ToolCall struct {
	// ID defaults to call_<turn>_<n>.
	ID   string `json:"id,omitempty"`
	Name string `json:"name"`
	// Arguments is the arguments object; it is sent compacted.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// RawArguments is sent verbatim instead of Arguments, so a script can
	// hand the client malformed JSON, or JSON spaced as a model spaces it.
	RawArguments string `json:"rawArguments,omitempty"`
	// Index, if set, is streamed as the call's index instead of its
	// position, e.g. 1000000000 or -1 for a hostile model.
	Index *int `json:"index,omitempty"`
}

// Usage is a token count as OpenAI reports it.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// CachedTokens, if set, is sent as prompt_tokens_details.cached_tokens.
	CachedTokens int `json:"cached_tokens,omitempty"`
}

// Args marshals v for ToolCall.Arguments. It panics if v cannot be
// marshalled, since that is a mistake in the test, not in the code tested.
func Args(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("modeltest: marshal arguments: %v", err))
	}
	return b
}

// Bool returns a pointer to b, for Match.HasTools.
func Bool(b bool) *bool { return &b }

// LoadScript reads and checks a script file.
func LoadScript(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read script: %w", err)
	}
	s, err := ParseScript(data)
	if err != nil {
		return nil, fmt.Errorf("script %s: %w", path, err)
	}
	return s, nil
}

// ParseScript decodes and checks a script. Unknown fields are errors, since a
// misspelt match field would otherwise silently match everything.
func ParseScript(data []byte) (*Script, error) {
	var s Script
	if err := decodeStrict(data, &s); err != nil {
		return nil, fmt.Errorf("parse script: %w", err)
	}
	if err := validateTurns(s.Turns); err != nil {
		return nil, err
	}
	if err := s.Chaos.validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

func (c *Chaos) validate() error {
	if c == nil {
		return nil
	}
	total := 0.0
	for _, p := range []float64{c.Status500, c.Status429, c.Cut, c.Stall} {
		if p < 0 || p > 1 {
			return fmt.Errorf("chaos: rate %v is not a probability", p)
		}
		total += p
	}
	if total > 1 {
		return fmt.Errorf("chaos: rates add up to %v, more than 1", total)
	}
	return nil
}

// parseTurns decodes the body of POST /_turns: a JSON array of turns, or a
// whole script, which is the same thing to someone writing a test in Lua.
func parseTurns(data []byte) ([]Turn, error) {
	var turns []Turn
	if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '{' {
		s, err := ParseScript(data)
		if err != nil {
			return nil, err
		}
		return s.Turns, nil
	}
	if err := decodeStrict(data, &turns); err != nil {
		return nil, fmt.Errorf("parse turns: %w", err)
	}
	if err := validateTurns(turns); err != nil {
		return nil, err
	}
	return turns, nil
}

func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

func validateTurns(turns []Turn) error {
	var errs []error
	for i, t := range turns {
		if err := t.validate(); err != nil {
			errs = append(errs, fmt.Errorf("turn %s: %w", turnLabel(i, t), err))
		}
	}
	return errors.Join(errs...)
}

func (t Turn) validate() error {
	r := t.Reply
	switch {
	case r.Status != 0 && (r.Status < 400 || r.Status > 599):
		return fmt.Errorf("status %d is not an HTTP error", r.Status)
	case r.Chunks < 0:
		return errors.New("chunks is negative")
	case r.Times < 0:
		return errors.New("times is negative")
	case r.DelayMs < 0:
		return errors.New("delayMs is negative")
	case r.TrickleMs < 0:
		return errors.New("trickleMs is negative")
	case r.ReasoningField != "" && r.ReasoningField != "reasoning_content" && r.ReasoningField != "reasoning":
		return fmt.Errorf("reasoningField %q is neither reasoning_content nor reasoning", r.ReasoningField)
	case countTrue(r.Hang, r.Stall, r.TrickleMs > 0, r.Cut, r.Abort, r.StreamError != "", r.Garbage, r.Status != 0) > 1:
		return errors.New("at most one of hang, stall, trickleMs, cut, abort, streamError, garbage and status")
	case t.Match.MinToolResults < 0:
		return errors.New("minToolResults is negative")
	}
	for i, c := range r.ToolCalls {
		if c.Name == "" {
			return fmt.Errorf("tool call %d has no name", i)
		}
		if len(c.Arguments) > 0 && c.RawArguments != "" {
			return fmt.Errorf("tool call %d has both arguments and rawArguments", i)
		}
	}
	return nil
}

func countTrue(b ...bool) int {
	n := 0
	for _, v := range b {
		if v {
			n++
		}
	}
	return n
}

// turnLabel names a turn for people: its name, or its index.
func turnLabel(i int, t Turn) string {
	if t.Name != "" {
		return t.Name
	}
	return fmt.Sprintf("#%d", i)
}

// argumentsText is the arguments string sent for a call.
func (c ToolCall) argumentsText() string {
	if c.RawArguments != "" {
		return c.RawArguments
	}
	if len(c.Arguments) == 0 {
		return "{}"
	}
	var b bytes.Buffer
	if err := json.Compact(&b, c.Arguments); err != nil {
		// Arguments built in Go need not be valid JSON; send what was given.
		return string(c.Arguments)
	}
	return b.String()
}

// split cuts s into at most n pieces of about equal length, on rune
// boundaries so that every piece stays valid UTF-8 once JSON-encoded.
func split(s string, n int) []string {
	runes := []rune(s)
	if n < 1 {
		n = 1
	}
	if n > len(runes) {
		n = len(runes)
	}
	if n == 0 {
		return nil
	}
	pieces := make([]string, 0, n)
	for i := range n {
		lo, hi := i*len(runes)/n, (i+1)*len(runes)/n
		pieces = append(pieces, string(runes[lo:hi]))
	}
	return pieces
}

// estimateTokens is the rough "four characters a token" rule; tests only need
// usage to be plausible and non-zero.
func estimateTokens(s string) int {
	return (len(strings.TrimSpace(s)) + 3) / 4
}
