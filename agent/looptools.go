package agent

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentd/agentd/internal/lazy"
	"github.com/agentd/agentd/tools"
)

// The loop's own tools: asking the human and publishing the plan. They live
// here, not in tools, because they act on the run itself.
const (
	askToolName  = "ask_user"
	planToolName = "update_plan"
)

//go:embed ask_user.md
var askDescription string

var askSchema = tools.SchemaOf(askParams{})

type askParams struct {
	Question   string   `json:"question" min:"1" jsonschema:"The question, one sentence or two."`
	Options    []string `json:"options,omitempty" jsonschema:"Choices to pick from."`
	AllowOther bool     `json:"allow_other,omitempty" jsonschema:"With options: also accept a free-text answer."`
	Multiple   bool     `json:"multiple,omitempty" jsonschema:"With options: the user may pick several."`
	Context    string   `json:"context,omitempty" jsonschema:"Why you ask, what you found so far."`
	Secret     bool     `json:"secret,omitempty" jsonschema:"Ask for a private value for a command; you never see it."`
	EnvVar     string   `json:"env_var,omitempty" jsonschema:"With secret: the environment variable name the value is given to commands as."`
}

var envVarName = lazy.Regexp(`^[A-Za-z_][A-Za-z0-9_]*$`)

// askRequest builds the input request for an ask_user call, or a result the
// model reads when the question cannot be asked.
func (r *run) askRequest(c ToolCall) (*callResult, *InputRequest) {
	var p askParams
	if r := loopArgs(askSchema, c.Args, &p); r != nil {
		return r, nil
	}
	if strings.TrimSpace(p.Question) == "" {
		return &callResult{IsError: true, Content: "question is blank: write the question to ask."}, nil
	}
	kind := KindQuestion
	switch {
	case p.Secret:
		if !envVarName().MatchString(p.EnvVar) {
			return &callResult{IsError: true, Content: "ask_user with secret needs env_var, an environment variable name such as GITHUB_TOKEN."}, nil
		}
		kind = KindSecret
	case len(p.Options) > 0:
		kind = KindChoice
	}
	if !r.a.renders(kind) {
		return &callResult{Content: "The user cannot be asked here (no one can answer questions in this session). Decide with what you have and say which assumption you made."}, nil
	}
	req := r.newRequest(c.ID)
	req.Kind, req.Title, req.Message, req.Context = kind, "Question", p.Question, p.Context
	if kind == KindChoice {
		for i, o := range p.Options {
			req.Options = append(req.Options, tools.Option{OptionID: strconv.Itoa(i + 1), Label: o})
		}
		req.AllowOther, req.Multiple = p.AllowOther, p.Multiple
	}
	if kind == KindSecret {
		req.Title = "Secret for $" + p.EnvVar
	}
	expireAfter(req, r.a.cfg.QuestionTimeout)
	return nil, req
}

// secretName is the env var an ask_user secret call named.
func secretName(c ToolCall) string {
	var p askParams
	_ = json.Unmarshal(c.Args, &p)
	return p.EnvVar
}

//go:embed update_plan.md
var planDescription string

var planSchema = tools.SchemaOf(planParams{})

type planParams struct {
	Explanation string     `json:"explanation,omitempty" jsonschema:"Why the plan is what it is or what changed."`
	Plan        []planStep `json:"plan" min:"1"`
}

// planStep is one step as the model writes it; its status is one of
// Statuses (a test keeps the enum equal to them).
type planStep struct {
	Step   string `json:"step" min:"1"`
	Status string `json:"status" enum:"pending,in_progress,completed,failed"`
}

// applyPlan replaces the plan and shows it.
func (r *run) applyPlan(args json.RawMessage) *callResult {
	var p planParams
	if r := loopArgs(planSchema, args, &p); r != nil {
		return r
	}
	entries := make([]PlanEntry, 0, len(p.Plan))
	for _, s := range p.Plan { // each status one of Statuses: the schema's enum
		entries = append(entries, PlanEntry{Content: s.Step, Status: Status(s.Status)})
	}
	r.mu.Lock()
	r.rec.Plan, r.rec.Explanation = entries, p.Explanation
	r.mu.Unlock()
	r.update(Update{Kind: UpdatePlan, Explanation: p.Explanation, Entries: entries})
	if n := countStatus(entries, StatusInProgress); n > 1 {
		return &callResult{Content: fmt.Sprintf("Plan updated. %d steps are in_progress: keep exactly one in_progress while you work, the others pending or completed.", n)}
	}
	return &callResult{Content: "Plan updated."}
}

// loopArgs checks a loop tool's arguments against its schema, as
// tools.Prepare does for the tools, and decodes them into p; a result the
// model reads when they do not fit.
func loopArgs(schema, args json.RawMessage, p any) *callResult {
	if err := tools.CheckArgs(schema, args); err != nil {
		return &callResult{IsError: true, Content: "invalid arguments: " + err.Error()}
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	if err := json.Unmarshal(args, p); err != nil {
		return &callResult{IsError: true, Content: "invalid arguments: " + err.Error()}
	}
	return nil
}

func countStatus(entries []PlanEntry, st Status) int {
	n := 0
	for _, e := range entries {
		if e.Status == st {
			n++
		}
	}
	return n
}
