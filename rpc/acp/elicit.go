package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/agent"
)

// elicit asks a question or a choice as a form (elicitation/create). A
// client that fails it gets the question in the chat instead.
func (s *session) elicit(req agent.InputRequest) {
	ctx, ok := s.track(req.RequestID)
	if !ok {
		return
	}
	message := firstNonEmpty(req.Message, req.Title)
	if req.Subagent != nil {
		message = subagentLabel(req.Subagent) + message // who asks (subagent.go)
	}
	form := &acpsdk.UnstableCreateElicitationForm{Message: message,
		RequestedSchema: formSchema(req), Meta: scopeMeta(s.id, req.ToolCallID)}
	resp, err := s.srv.client().UnstableCreateElicitation(ctx, acpsdk.UnstableCreateElicitationRequest{Form: form})
	s.untrack(req.RequestID)
	switch {
	case err != nil && ctx.Err() != nil:
		return // resolved elsewhere
	case err != nil:
		s.srv.log.Info("elicitation/create failed; asking in the chat", "request", req.RequestID, "err", err)
		s.askInChat(req)
		return
	case resp.Accept == nil:
		s.declined(req)
		return
	}
	if err := s.ws.agent.Reply(context.Background(), formReply(req, resp.Accept.Content)); err != nil {
		s.srv.log.Info("form answer not applied; asking in the chat", "request", req.RequestID, "err", err)
		s.askInChat(req)
	}
}

// declined answers a question the user dismissed: the model is told, so it
// goes on with what it has. A request whose answer must be one of its
// options has no such answer and is asked in the chat.
func (s *session) declined(req agent.InputRequest) {
	if len(req.Options) > 0 && !ownText(req) {
		s.askInChat(req)
		return
	}
	text := "(the user declined to answer)"
	if err := s.ws.agent.Reply(context.Background(), agent.ReplyParams{RequestID: req.RequestID, Text: &text}); err != nil {
		s.srv.log.Info("decline not applied", "request", req.RequestID, "err", err)
	}
}

// formSchema is one field, "answer", shaped by the request's generic form;
// a request whose text may replace its options adds the field "other", one
// whose text goes with some options the field "text".
func formSchema(req agent.InputRequest) acpsdk.UnstableElicitationSchema {
	answer := map[string]any{"type": "string", "title": firstNonEmpty(req.Title, "Answer"), "description": req.Message}
	if req.Default != "" {
		answer["default"] = req.Default
	}
	props := map[string]any{"answer": answer}
	required := []string{"answer"}
	if len(req.Options) > 0 {
		opts := make([]map[string]any, 0, len(req.Options))
		for _, o := range req.Options {
			opts = append(opts, map[string]any{"const": o.OptionID, "title": o.Label})
		}
		if req.Multiple {
			answer["type"] = "array"
			answer["items"] = map[string]any{"anyOf": opts}
		} else {
			answer["oneOf"] = opts
		}
		switch in := req.Input; {
		case ownText(req):
			props["other"] = map[string]any{"type": "string", "title": "Other", "description": "Your own answer instead of a choice"}
			required = nil
		case in != nil:
			var with []string
			for _, o := range req.Options {
				if textWith(req, o.OptionID) {
					with = append(with, o.Label)
				}
			}
			props["text"] = map[string]any{"type": "string", "title": in.Label, "description": "With: " + strings.Join(with, ", ")}
		}
	}
	return acpsdk.UnstableElicitationSchema{Type: acpsdk.UnstableElicitationSchemaTypeObject, Properties: props, Required: required}
}

// formReply reads the form's content back into a reply.
func formReply(req agent.InputRequest, content map[string]any) agent.ReplyParams {
	p := agent.ReplyParams{RequestID: req.RequestID}
	if other, _ := content["other"].(string); other != "" {
		p.Text = &other
		return p
	}
	if text, _ := content["text"].(string); text != "" {
		p.Text = &text
	}
	switch v := content["answer"].(type) {
	case []any:
		for _, x := range v {
			p.Answers = append(p.Answers, fmt.Sprint(x))
		}
	case nil:
		empty := ""
		p.Text = &empty
	default:
		text := fmt.Sprint(v)
		if len(req.Options) > 0 {
			p.OptionID = text
		} else {
			p.Text = &text
		}
	}
	return p
}

// scopeKey carries the elicitation's session scope through the SDK, whose
// form type (v0.13.0) has no sessionId or toolCallId field although the
// schema requires the scope; scopeWriter moves it to its place.
const scopeKey = "agentd/elicitationScope"

func scopeMeta(sessionID, toolCallID string) map[string]any {
	scope := map[string]any{"sessionId": sessionID}
	if toolCallID != "" {
		scope["toolCallId"] = toolCallID
	}
	return map[string]any{scopeKey: scope}
}

// scopeWriter is the connection's output. The SDK writes each message with
// one Write; an elicitation/create gets its scope moved from _meta to the
// params, every other message passes untouched. Each message is logged as
// it goes out.
type scopeWriter struct {
	w   io.Writer
	log *wireLog // nil: not logged
}

var elicitMethod = []byte(`"method":"elicitation/create"`)

func (sw *scopeWriter) Write(b []byte) (int, error) {
	out := b
	if bytes.Contains(b, elicitMethod) {
		out = withScope(b)
	}
	if sw.log != nil {
		sw.log.record(false, out)
	}
	if _, err := sw.w.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}

func withScope(line []byte) []byte {
	var msg map[string]json.RawMessage
	if json.Unmarshal(line, &msg) != nil {
		return line
	}
	var params map[string]any
	if json.Unmarshal(msg["params"], &params) != nil {
		return line
	}
	meta, _ := params["_meta"].(map[string]any)
	scope, _ := meta[scopeKey].(map[string]any)
	if scope == nil {
		return line
	}
	for k, v := range scope {
		params[k] = v
	}
	delete(meta, scopeKey)
	if len(meta) == 0 {
		delete(params, "_meta")
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return line
	}
	msg["params"] = raw
	out, err := json.Marshal(msg)
	if err != nil {
		return line
	}
	return append(out, '\n')
}
