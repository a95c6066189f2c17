package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/tools"
)

// maxDescription bounds what one server's tool adds to every prompt.
const maxDescription = 4000

// tool is one tool of a connected server, as the model sees it. Its
// effect is unknown: the policy asks before every call (in every mode but
// full-auto) whatever the server says the tool does.
type tool struct {
	c      *conn
	name   string // mcp__<server>__<tool>
	remote string // the server's name for it
	info   ToolInfo
	desc   string
	schema json.RawMessage
}

func newTool(c *conn, t *mcpsdk.Tool) *tool {
	info := toolInfo(c.srv.Name, t)
	desc := strings.TrimSpace(t.Description)
	if desc == "" {
		desc = fmt.Sprintf("The tool %s of the MCP server %s.", t.Name, c.srv.Name)
	}
	if len(desc) > maxDescription {
		desc = desc[:maxDescription] + "…"
	}
	return &tool{c: c, name: info.Name, remote: t.Name, info: info, desc: desc, schema: inputSchema(t.InputSchema)}
}

func toolInfo(server string, t *mcpsdk.Tool) ToolInfo {
	info := ToolInfo{Name: ToolName(server, t.Name), Tool: t.Name, Title: t.Title, Description: t.Description}
	if a := t.Annotations; a != nil {
		if info.Title == "" {
			info.Title = a.Title
		}
		info.Hints = &Hints{ReadOnly: a.ReadOnlyHint, Destructive: a.DestructiveHint, Idempotent: a.IdempotentHint, OpenWorld: a.OpenWorldHint}
	}
	return info
}

// inputSchema is the server's schema as the model's endpoint takes it:
// an object with properties.
func inputSchema(s any) json.RawMessage {
	m, ok := s.(map[string]any)
	if !ok {
		data, err := json.Marshal(s)
		if err != nil || json.Unmarshal(data, &m) != nil || m == nil {
			m = map[string]any{}
		}
	}
	if _, ok := m["type"]; !ok {
		m["type"] = "object"
	}
	if _, ok := m["properties"]; !ok && m["type"] == "object" {
		m["properties"] = map[string]any{}
	}
	data, _ := json.Marshal(m) // map keys are sorted: the same schema is the same bytes
	return data
}

// questionWait bounds how long a call may wait on the user's answers to
// its server's questions; the call's own timeout (callTimeout) counts only
// the time the server works, and the questions expire on their own.
const questionWait = 24 * time.Hour

func (t *tool) Info() tools.Info {
	return tools.Info{Name: t.name, Description: t.desc, Parameters: t.schema, Kind: tools.KindOther,
		Effect: tools.EffectUnknown, Timeout: t.c.srv.callTimeout() + questionWait}
}

// Prepare checks that the arguments are an object and describes the call
// for the approval: whose tool it is, and what its server claims.
func (t *tool) Prepare(_ context.Context, env *tools.Env, args json.RawMessage) (*tools.Call, *tools.Result) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil {
		return nil, tools.Errorf("The arguments of %s must be a JSON object matching its schema: %v", t.name, err)
	}
	title := t.info.Title
	if title == "" {
		title = t.remote
	}
	var asker tools.Asker
	if env != nil {
		asker = env.Asker
	}
	return &tools.Call{
		Title:  t.c.srv.Name + ": " + title,
		Detail: t.detail(),
		Run: func(ctx context.Context) (tools.Result, error) {
			res := t.c.call(ctx, t.remote, args, asker)
			res.Output = t.c.srv.redactor().Redact(res.Output)
			return res, nil
		},
	}, nil
}

// detail is what the approval says beside the arguments.
func (t *tool) detail() string {
	s := fmt.Sprintf("The tool %s of the MCP server %s (%s, %s).", t.remote, t.c.srv.Name, t.c.srv.Origin, t.c.srv.Describe())
	if h := t.info.Hints.String(); h != "" {
		s += " The server describes the tool as: " + h + " (not verified)."
	}
	return s
}

// resultOf is what the model reads of a tool's result: its text, and a
// line for each image, audio clip, link or binary resource it returned.
func resultOf(res *mcpsdk.CallToolResult) tools.Result {
	var b strings.Builder
	for _, c := range res.Content {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		switch c := c.(type) {
		case *mcpsdk.TextContent:
			b.WriteString(c.Text)
		case *mcpsdk.ImageContent:
			fmt.Fprintf(&b, "[image: %s, %s]", c.MIMEType, size(len(c.Data)))
		case *mcpsdk.AudioContent:
			fmt.Fprintf(&b, "[audio: %s, %s]", c.MIMEType, size(len(c.Data)))
		case *mcpsdk.ResourceLink:
			fmt.Fprintf(&b, "[resource link: %s", c.URI)
			if c.Name != "" {
				fmt.Fprintf(&b, " (%s)", c.Name)
			}
			if c.Description != "" {
				b.WriteString(": " + c.Description)
			}
			b.WriteString("]")
		case *mcpsdk.EmbeddedResource:
			writeResource(&b, c.Resource)
		default:
			data, _ := json.Marshal(c)
			b.Write(data)
		}
	}
	if b.Len() == 0 && res.StructuredContent != nil {
		data, _ := json.Marshal(res.StructuredContent)
		b.Write(data)
	}
	out := b.String()
	if out == "" {
		out = "(the tool returned nothing)"
	}
	return tools.Result{Output: out, IsError: res.IsError}
}

func writeResource(b *strings.Builder, r *mcpsdk.ResourceContents) {
	if r == nil {
		b.WriteString("[empty resource]")
		return
	}
	if r.Text != "" {
		fmt.Fprintf(b, "[resource %s]\n%s", r.URI, r.Text)
		return
	}
	fmt.Fprintf(b, "[resource %s: %s, %s]", r.URI, r.MIMEType, size(len(r.Blob)))
}

func size(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
	if n >= 1<<10 {
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
