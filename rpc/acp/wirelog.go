package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/agentd/agentd/tools"
)

// wireLog writes every ACP message, both ways, to the log at debug level:
// requests and notifications with their method and params, responses with
// the method they answer and their result or error (a permission's outcome
// among them). Long strings (file contents, diffs, outputs) are clipped,
// and secrets are hidden: the answer a prompt gives to a secret question
// never reaches the log, nor does its value anywhere later.
type wireLog struct {
	log *slog.Logger
	// secretAsked says whether the session's next prompt answers a secret
	// question.
	secretAsked func(sessionID string) bool
	redact      *tools.Redactor

	mu   sync.Mutex        // guards sent, got
	sent map[string]string // requests agentd sent, by id: their method
	got  map[string]string // requests the client sent, by id: their method
}

// wireClip bounds each string logged, in bytes.
const wireClip = 240

func newWireLog(log *slog.Logger, secretAsked func(string) bool) *wireLog {
	return &wireLog{log: log, secretAsked: secretAsked, redact: tools.NewRedactor(),
		sent: map[string]string{}, got: map[string]string{}}
}

func (l *wireLog) enabled() bool { return l.log.Enabled(context.Background(), slog.LevelDebug) }

// message is what the log reads of a JSON-RPC message.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// record logs one message; in says it came from the client.
func (l *wireLog) record(in bool, line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || !l.enabled() {
		return
	}
	dir := "acp send"
	if in {
		dir = "acp recv"
	}
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		l.log.Debug(dir, "kind", "unreadable", "line", l.clip(string(line)), "err", err)
		return
	}
	id := string(m.ID)
	switch {
	case m.Method != "" && id != "":
		l.remember(in, id, m.Method)
		params := l.summary(m.Params)
		if in && m.Method == "session/prompt" && l.hideSecretAnswer(m.Params) {
			params = "(the answer to a secret question: not logged)"
		}
		l.log.Debug(dir, "kind", "request", "method", m.Method, "id", id, "params", params)
	case m.Method != "":
		l.log.Debug(dir, "kind", "notification", "method", m.Method, "params", l.summary(m.Params))
	case len(m.Error) > 0 && string(m.Error) != "null":
		l.log.Debug(dir, "kind", "error", "method", l.answered(in, id), "id", id, "error", l.summary(m.Error))
	default:
		l.log.Debug(dir, "kind", "response", "method", l.answered(in, id), "id", id, "result", l.summary(m.Result))
	}
}

// remember keeps a request's method until its response names it.
func (l *wireLog) remember(in bool, id, method string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if in {
		l.got[id] = method
	} else {
		l.sent[id] = method
	}
}

// answered is the method of the request a response answers: one the other
// side sent.
func (l *wireLog) answered(in bool, id string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	pending := l.got
	if in {
		pending = l.sent
	}
	method := pending[id]
	delete(pending, id)
	return method
}

// hideSecretAnswer says whether a prompt answers a secret question; if so
// its text is learnt, so that no later message logs it either.
func (l *wireLog) hideSecretAnswer(params json.RawMessage) bool {
	var p struct {
		SessionID string `json:"sessionId"`
		Prompt    []struct {
			Text string `json:"text"`
		} `json:"prompt"`
	}
	if json.Unmarshal(params, &p) != nil || !l.secretAsked(p.SessionID) {
		return false
	}
	for _, b := range p.Prompt {
		l.redact.Add(b.Text)
		l.redact.Add(strings.TrimSpace(b.Text))
	}
	return true
}

// summary is a JSON value as it is logged: strings clipped and redacted.
func (l *wireLog) summary(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return l.clip(string(raw))
	}
	out, err := json.Marshal(l.clipAll(v))
	if err != nil {
		return l.clip(string(raw))
	}
	return string(out)
}

func (l *wireLog) clipAll(v any) any {
	switch x := v.(type) {
	case string:
		return l.clip(x)
	case []any:
		for i := range x {
			x[i] = l.clipAll(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = l.clipAll(x[k])
		}
		hideCredentials(x)
	}
	return v
}

// hideCredentials blanks the credentials an editor passes, in session/new's
// mcpServers above all: an env entry or header ({"name": "GITHUB_TOKEN",
// "value": "ghp_…"}, {"name": "Authorization", …}) whose name is a
// credential's, and any key named like one ("apiKey", "token"). The debug
// log is a file anyone helping with a bug gets to read.
func hideCredentials(m map[string]any) {
	if name, ok := m["name"].(string); ok && credentialName(name) {
		if _, ok := m["value"]; ok {
			m["value"] = tools.RedactMark
		}
	}
	for k, v := range m {
		if _, isString := v.(string); isString && credentialName(k) {
			m[k] = tools.RedactMark
		}
	}
}

func credentialName(name string) bool {
	switch strings.ToLower(name) {
	case "authorization", "proxy-authorization", "cookie", "token", "password", "secret", "apikey":
		return true
	}
	return tools.LooksSecret(strings.ReplaceAll(name, "-", "_")) || tools.LooksSecret(camelToSnake(name))
}

// camelToSnake turns "apiKey" into "api_Key", so the credential patterns
// (*_KEY, …) see its words.
func camelToSnake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// clip redacts s and keeps at most wireClip bytes of it, saying how much
// was left out.
func (l *wireLog) clip(s string) string {
	s = l.redact.Redact(s)
	if len(s) <= wireClip {
		return s
	}
	cut := wireClip
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s…(%d bytes)", s[:cut], len(s))
}

// reader logs each line the client sends as the connection reads it.
func (l *wireLog) reader(r io.Reader) io.Reader { return &lineLogger{r: r, log: l} }

// lineLogger passes the client's bytes through, logging each whole line.
type lineLogger struct {
	r       io.Reader
	log     *wireLog
	partial []byte
}

// lineMax bounds the part of a line kept for the log: a longer one is
// logged as unreadable, clipped, instead of held whole.
const lineMax = 1 << 20

func (ll *lineLogger) Read(p []byte) (int, error) {
	n, err := ll.r.Read(p)
	if n > 0 && ll.log.enabled() {
		ll.scan(p[:n])
	}
	return n, err
}

func (ll *lineLogger) scan(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if len(ll.partial) < lineMax {
				ll.partial = append(ll.partial, b...)
			}
			return
		}
		ll.partial = append(ll.partial, b[:i]...)
		ll.log.record(true, ll.partial)
		ll.partial = ll.partial[:0]
		b = b[i+1:]
	}
}
