package agent

import (
	"bytes"
	"encoding/json"
	"strings"
)

// The OpenAI chat completions wire format, as much of it as agentd reads,
// with the fields OpenAI-compatible servers add: reasoning_content
// (DeepSeek, vLLM), reasoning (OpenRouter, Ollama), cached prompt tokens
// (OpenAI's prompt_tokens_details, DeepSeek's prompt_cache_hit_tokens).

type chatChunk struct {
	Choices []chunkChoice `json:"choices"`
	Usage   *usageJSON    `json:"usage"`
	Error   *apiErrorJSON `json:"error"`
}

type chunkChoice struct {
	Index int        `json:"index"`
	Delta chunkDelta `json:"delta"`
	// Message is where a whole (not streamed) completion puts the reply.
	Message      *chunkDelta `json:"message"`
	FinishReason string      `json:"finish_reason"`
}

type chunkDelta struct {
	Content          string          `json:"content"`
	ReasoningContent lenientString   `json:"reasoning_content"`
	Reasoning        lenientString   `json:"reasoning"`
	ToolCalls        []toolCallDelta `json:"tool_calls"`
}

type toolCallDelta struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type usageJSON struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptCacheHit      int `json:"prompt_cache_hit_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

func (u *usageJSON) usage() ModelUsage {
	m := ModelUsage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens,
		CachedTokens: u.PromptCacheHit}
	if d := u.PromptTokensDetails; d != nil && d.CachedTokens > 0 {
		m.CachedTokens = d.CachedTokens
	}
	if d := u.CompletionTokensDetails; d != nil {
		m.ReasoningTokens = d.ReasoningTokens
	}
	if m.TotalTokens == 0 {
		m.TotalTokens = m.PromptTokens + m.CompletionTokens
	}
	return m
}

// apiErrorJSON is OpenAI's error envelope, also sent inside a stream by
// some providers when the upstream fails mid-answer.
type apiErrorJSON struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

func (e *apiErrorJSON) text() string {
	msg := strings.TrimSpace(e.Message)
	if msg == "" {
		msg = strings.Trim(string(e.Code), `"`)
	}
	if msg == "" {
		msg = e.Type
	}
	return oneLine(msg, 500)
}

// lenientString takes a string and ignores any other JSON value, for
// fields whose shape varies between servers.
type lenientString string

func (s *lenientString) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var v string
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*s = lenientString(v)
	}
	return nil
}

// replyBuilder assembles a streamed reply, validating every delta before it
// grows anything.
type replyBuilder struct {
	out       ModelStream
	text      strings.Builder
	reasoning strings.Builder
	calls     []*partialCall
	aliases   map[int]int // a streamed index reused for a new call → its slot
	guard     runaway
	size      int // bytes of text, reasoning and arguments so far
	finish    string
	usage     ModelUsage
	cut       bool
}

type partialCall struct {
	id, name string
	args     []byte
}

// chunk takes one decoded chunk.
func (b *replyBuilder) chunk(c *chatChunk) error {
	if c.Error != nil {
		return retryable("the model's server reported an error mid-answer: %s", c.Error.text())
	}
	if c.Usage != nil {
		b.usage = c.Usage.usage()
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			continue // agentd asks for one choice
		}
		d := &ch.Delta
		if ch.Message != nil {
			d = ch.Message
		}
		if err := b.delta(d); err != nil {
			return err
		}
		if ch.FinishReason != "" {
			b.finish = ch.FinishReason
		}
	}
	return nil
}

func (b *replyBuilder) delta(d *chunkDelta) error {
	thought := string(d.ReasoningContent)
	if thought == "" {
		thought = string(d.Reasoning)
	}
	if err := b.grow(len(d.Content) + len(thought)); err != nil {
		return err
	}
	if thought != "" {
		b.reasoning.WriteString(thought)
		b.out.reasoning(thought)
	}
	if d.Content != "" && !b.cut {
		piece, cut := b.guard.feed(d.Content)
		b.text.WriteString(piece)
		b.out.text(piece)
		b.cut = cut
	}
	for i := range d.ToolCalls {
		if err := b.toolDelta(&d.ToolCalls[i]); err != nil {
			return err
		}
	}
	return nil
}

func (b *replyBuilder) grow(n int) error {
	if b.size+n > maxReplyBytes {
		return retryable("the model's reply grew past %d MiB", maxReplyBytes>>20)
	}
	b.size += n
	return nil
}

// toolDelta merges one tool call delta: the first of a call carries its
// index, id and name, the next ones pieces of its arguments. The index is
// checked before a slot exists for it.
func (b *replyBuilder) toolDelta(d *toolCallDelta) error {
	var i int
	switch {
	case d.Index != nil:
		if i = *d.Index; i < 0 || i >= maxToolCalls {
			return retryable("the model sent a tool call with index %d (a reply holds at most %d calls)", i, maxToolCalls)
		}
		if s, ok := b.aliases[i]; ok {
			i = s
		}
	case d.ID != "" || len(b.calls) == 0:
		i = len(b.calls)
	default:
		i = len(b.calls) - 1
	}
	if i < len(b.calls) && d.ID != "" && b.calls[i].id != "" && b.calls[i].id != d.ID {
		// Some servers number every call 0 and tell calls apart by id: the
		// new id opens a call, which that index means from now on.
		if d.Index != nil {
			if b.aliases == nil {
				b.aliases = map[int]int{}
			}
			b.aliases[*d.Index] = len(b.calls)
		}
		i = len(b.calls)
	}
	if i >= maxToolCalls {
		return retryable("the model sent more than %d tool calls in one reply", maxToolCalls)
	}
	for len(b.calls) <= i {
		b.calls = append(b.calls, &partialCall{})
	}
	c := b.calls[i]
	if d.ID != "" {
		c.id = d.ID
	}
	if d.Function.Name != "" {
		c.name = d.Function.Name
	}
	piece := d.Function.Arguments
	if len(c.args)+len(piece) > maxArgsBytes {
		return retryable("the model's arguments for tool call %d grew past %d MiB", i, maxArgsBytes>>20)
	}
	if err := b.grow(len(piece)); err != nil {
		return err
	}
	c.args = append(c.args, piece...)
	return nil
}

// reply finishes the reply once the stream has ended properly.
func (b *replyBuilder) reply() (ModelReply, error) {
	r := ModelReply{Text: b.text.String(), Reasoning: b.reasoning.String(), Usage: b.usage, FinishReason: b.finish, Cut: b.cut}
	for i, c := range b.calls {
		if c.id == "" && c.name == "" && len(c.args) == 0 {
			continue // a gap left by a server that skipped an index
		}
		if c.name == "" {
			return ModelReply{}, retryable("the model sent tool call %d without a name", i)
		}
		args := bytes.TrimSpace(c.args)
		if len(args) == 0 {
			args = []byte("{}")
		} else {
			args = c.args // exactly as sent: it goes back to the model byte for byte
		}
		id := c.id
		if id == "" {
			id = newID("call")
		}
		r.ToolCalls = append(r.ToolCalls, ToolCall{ID: id, Name: c.name, Args: json.RawMessage(args)})
	}
	if r.Text == "" && len(r.ToolCalls) == 0 {
		if r.FinishReason == "length" {
			return ModelReply{}, retryable("the model ran out of output tokens before answering")
		}
		if r.Reasoning != "" {
			return ModelReply{}, retryable("the model thought but gave no answer")
		}
		return ModelReply{}, retryable("the model returned an empty reply")
	}
	return r, nil
}
