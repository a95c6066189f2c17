package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/tools"
)

// A server's question (elicitation/create, form mode) becomes agentd input
// requests through the asker of the call in flight: one per required
// field, a choice where the field has values to pick from (a boolean, an
// enum) and a free-text question otherwise. Optional fields take their
// default, or are left out; a form without required fields is one choice,
// accept or decline. Each question is durable (tools.Question.Key): it
// survives a restart of agentd, and when the call is made again the
// server's same question gets the answer the user gave.

// declineID is the option that declines the server's whole question.
const declineID = "decline"

// maxAttempts bounds how often a field is asked again after an answer
// that does not fit it (a number that is not one).
const maxAttempts = 3

func (c *conn) elicit(ctx context.Context, req *mcpsdk.ElicitRequest) (*mcpsdk.ElicitResult, error) {
	c.mu.Lock()
	var cl *caller
	if n := len(c.callers); n > 0 {
		cl = c.callers[n-1]
	}
	c.mu.Unlock()
	p := req.Params
	if cl == nil || cl.asker == nil || p == nil || (p.Mode != "" && p.Mode != "form") {
		// Nobody to ask: no call of this server is in flight, or it runs
		// where no one answers questions.
		return &mcpsdk.ElicitResult{Action: "decline"}, nil
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	defer context.AfterFunc(cl.ctx, func() { cancel(context.Cause(cl.ctx)) })()
	cl.clock.pause() // the user's time does not count against the call's timeout
	defer cl.clock.resume()
	f := form{server: c.srv.Name, tool: cl.tool, message: p.Message}
	if err := f.parse(p.RequestedSchema); err != nil {
		c.m.log.Warn("MCP server's question has a schema agentd cannot ask", "mcp_server", c.srv.Name, "err", err)
		return &mcpsdk.ElicitResult{Action: "decline"}, nil
	}
	return f.ask(ctx, cl.asker)
}

// form is one elicitation: its message and fields.
type form struct {
	server, tool, message string
	fields                []field
	key                   string // identifies the question across a restart
}

type field struct {
	name        string
	typ         string // string, number, integer, boolean, array
	title, desc string
	required    bool
	def         any
	format      string
	options     []tools.Option // enum values: optionId is the value
	multiple    bool
	min, max    *float64
}

func (f *form) parse(schema any) error {
	data, err := json.Marshal(schema)
	if err != nil {
		return err
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if len(data) > 0 && string(data) != "null" {
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	// Required fields first, in the order the server listed them, then
	// the others by name: the same question is asked in the same order.
	slices.SortFunc(names, func(a, b string) int {
		ia, ib := slices.Index(s.Required, a), slices.Index(s.Required, b)
		switch {
		case ia >= 0 && ib >= 0:
			return ia - ib
		case ia >= 0:
			return -1
		case ib >= 0:
			return 1
		}
		return strings.Compare(a, b)
	})
	for _, n := range names {
		fd, err := parseField(n, s.Properties[n])
		if err != nil {
			return fmt.Errorf("field %s: %w", n, err)
		}
		fd.required = slices.Contains(s.Required, n)
		f.fields = append(f.fields, fd)
	}
	sum := sha256.Sum256(append([]byte(f.server+"\x00"+f.tool+"\x00"+f.message+"\x00"), data...))
	f.key = "mcp:" + f.server + ":" + hex.EncodeToString(sum[:8])
	return nil
}

func parseField(name string, raw json.RawMessage) (field, error) {
	var p struct {
		Type        string   `json:"type"`
		Title       string   `json:"title"`
		Description string   `json:"description"`
		Default     any      `json:"default"`
		Format      string   `json:"format"`
		Enum        []string `json:"enum"`
		EnumNames   []string `json:"enumNames"`
		OneOf       []struct {
			Const string `json:"const"`
			Title string `json:"title"`
		} `json:"oneOf"`
		Minimum *float64 `json:"minimum"`
		Maximum *float64 `json:"maximum"`
		Items   *struct {
			Enum  []string `json:"enum"`
			AnyOf []struct {
				Const string `json:"const"`
				Title string `json:"title"`
			} `json:"anyOf"`
		} `json:"items"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return field{}, err
	}
	fd := field{name: name, typ: p.Type, title: p.Title, desc: p.Description, def: p.Default, format: p.Format,
		min: p.Minimum, max: p.Maximum}
	for i, v := range p.Enum {
		label := v
		if i < len(p.EnumNames) {
			label = p.EnumNames[i]
		}
		fd.options = append(fd.options, tools.Option{OptionID: v, Label: label})
	}
	for _, o := range p.OneOf {
		fd.options = append(fd.options, tools.Option{OptionID: o.Const, Label: cmpOr(o.Title, o.Const)})
	}
	switch p.Type {
	case "string", "number", "integer":
	case "boolean":
		fd.options = []tools.Option{{OptionID: "true", Label: "Yes"}, {OptionID: "false", Label: "No"}}
	case "array":
		if p.Items == nil {
			return fd, fmt.Errorf("a list without items")
		}
		fd.multiple = true
		for _, v := range p.Items.Enum {
			fd.options = append(fd.options, tools.Option{OptionID: v, Label: v})
		}
		for _, o := range p.Items.AnyOf {
			fd.options = append(fd.options, tools.Option{OptionID: o.Const, Label: cmpOr(o.Title, o.Const)})
		}
		if len(fd.options) == 0 {
			return fd, fmt.Errorf("a list whose values are not listed")
		}
	default:
		return fd, fmt.Errorf("type %q", p.Type)
	}
	return fd, nil
}

// ask puts the form's questions to the user and builds the answer.
func (f *form) ask(ctx context.Context, asker tools.Asker) (*mcpsdk.ElicitResult, error) {
	content := map[string]any{}
	asked := 0
	for _, fd := range f.fields {
		if !fd.required {
			if fd.def != nil {
				content[fd.name] = fd.def
			}
			continue
		}
		asked++
		v, action, err := f.askField(ctx, asker, fd)
		if err != nil || action != "accept" {
			return &mcpsdk.ElicitResult{Action: action}, err
		}
		content[fd.name] = v
	}
	if asked == 0 {
		q := tools.Question{Title: f.server + " asks", Message: f.intro(), Key: f.key + ":confirm", Closed: true,
			Options: []tools.Option{{OptionID: "accept", Label: "Accept"}, {OptionID: declineID, Label: "Decline"}}}
		if len(content) > 0 {
			data, _ := json.Marshal(content)
			q.Message += "\n\nAccepting sends: " + string(data)
		}
		ans, err := asker.Ask(ctx, q)
		if a := unanswered(ans, err); a != "" {
			return &mcpsdk.ElicitResult{Action: a}, nil
		}
		if ans.OptionID == declineID {
			return &mcpsdk.ElicitResult{Action: "decline"}, nil
		}
	}
	return &mcpsdk.ElicitResult{Action: "accept", Content: content}, nil
}

func (f *form) intro() string {
	if f.tool != "" {
		return fmt.Sprintf("The MCP server %s asks, while running %s:\n%s", f.server, f.tool, f.message)
	}
	return fmt.Sprintf("The MCP server %s asks:\n%s", f.server, f.message)
}

// askField asks one field until the answer fits it (at most maxAttempts
// times), and returns its value or why there is none (decline, cancel).
func (f *form) askField(ctx context.Context, asker tools.Asker, fd field) (any, string, error) {
	note := ""
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		q := tools.Question{Title: f.server + " asks", Message: f.intro() + "\n\n" + fd.prompt() + note,
			Key: fmt.Sprintf("%s:%s:%d", f.key, fd.name, attempt)}
		if fd.credential() {
			// Asked as a secret: hidden as typed, never persisted (so not
			// durable either: after a restart the call asks again), and
			// hidden from what the model reads.
			q.Secret, q.Key = true, ""
		}
		if len(fd.options) > 0 {
			q.Options = append(slices.Clone(fd.options), tools.Option{OptionID: declineID, Label: "Decline (answer nothing)"})
			q.Closed, q.Multiple = true, fd.multiple
		}
		ans, err := asker.Ask(ctx, q)
		if a := unanswered(ans, err); a != "" {
			return nil, a, nil
		}
		if ans.OptionID == declineID || slices.Contains(ans.OptionIDs, declineID) {
			return nil, "decline", nil
		}
		v, why := fd.value(ans)
		if why == "" {
			return v, "accept", nil
		}
		note = fmt.Sprintf("\n\n(%q %s; please answer again.)", ans.Text, why)
	}
	return nil, "cancel", nil
}

// unanswered says what the server is told when no one answered.
func unanswered(ans tools.Answer, err error) string {
	if err != nil || ans.Cancelled || ans.TimedOut {
		return "cancel"
	}
	return ""
}

// prompt describes the field for the question.
func (fd field) prompt() string {
	var b strings.Builder
	b.WriteString(cmpOr(fd.title, fd.name))
	if fd.desc != "" {
		b.WriteString(": " + fd.desc)
	}
	var notes []string
	switch fd.typ {
	case "integer":
		notes = append(notes, "a whole number")
	case "number":
		notes = append(notes, "a number")
	}
	if fd.format != "" {
		notes = append(notes, "format "+fd.format)
	}
	if fd.min != nil {
		notes = append(notes, "at least "+strconv.FormatFloat(*fd.min, 'g', -1, 64))
	}
	if fd.max != nil {
		notes = append(notes, "at most "+strconv.FormatFloat(*fd.max, 'g', -1, 64))
	}
	if fd.multiple {
		notes = append(notes, "pick one or more")
	}
	if len(notes) > 0 {
		b.WriteString(" (" + strings.Join(notes, ", ") + ")")
	}
	return b.String()
}

// value turns an answer into the field's value, or says why it does not
// fit.
func (fd field) value(ans tools.Answer) (any, string) {
	switch {
	case fd.typ == "boolean":
		return ans.OptionID == "true", ""
	case fd.multiple:
		ids := ans.OptionIDs
		if len(ids) == 0 && ans.OptionID != "" {
			ids = []string{ans.OptionID}
		}
		return ids, ""
	case len(fd.options) > 0:
		return ans.OptionID, ""
	case fd.typ == "integer":
		n, err := strconv.ParseInt(strings.TrimSpace(ans.Text), 10, 64)
		if err != nil {
			return nil, "is not a whole number"
		}
		return n, fd.inRange(float64(n))
	case fd.typ == "number":
		n, err := strconv.ParseFloat(strings.TrimSpace(ans.Text), 64)
		if err != nil {
			return nil, "is not a number"
		}
		return n, fd.inRange(n)
	}
	return ans.Text, ""
}

func (fd field) inRange(n float64) string {
	if fd.min != nil && n < *fd.min || fd.max != nil && n > *fd.max {
		return "is out of range"
	}
	return ""
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// credential reports whether a free-text field asks for a credential,
// which the MCP spec says servers must not ask for in a form, and some do:
// a password format, or a name or title like a token's, a key's or a
// password's.
func (fd field) credential() bool {
	if fd.typ != "string" || len(fd.options) > 0 {
		return false
	}
	if fd.format == "password" || tools.LooksSecret(fd.name) {
		return true
	}
	words := strings.ToLower(fd.name + " " + fd.title)
	for _, w := range []string{"password", "passphrase", "token", "secret", "api key", "api_key", "apikey", "private key", "credential"} {
		if strings.Contains(words, w) {
			return true
		}
	}
	return false
}
