package agent

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/agentd/agentd/tools"
)

// The loop's own tools: asking the human and publishing the plan. They live
// here, not in tools, because they act on the run itself.
const (
	askToolName  = "ask_user"
	planToolName = "update_plan"
)

const askDescription = `Ask the user a question and wait for the answer. Use it when the request is ambiguous, when a decision belongs to the user (a name, a trade-off, a choice between approaches), or when you need information only they have. Offer options when there are clear choices; set allow_other to accept a free answer too. For a value a command needs that must stay private (a token, a password), set secret and env_var: the value is given to your commands as that environment variable and is never shown to you. Do not ask what you can find out with the other tools.`

var askSchema = json.RawMessage(`{"type":"object","properties":{
"question":{"type":"string","description":"The question, one sentence or two."},
"options":{"type":"array","items":{"type":"string"},"description":"Choices to pick from."},
"allow_other":{"type":"boolean","description":"With options: also accept a free-text answer."},
"multiple":{"type":"boolean","description":"With options: the user may pick several."},
"context":{"type":"string","description":"Why you ask, what you found so far."},
"secret":{"type":"boolean","description":"Ask for a private value for a command; you never see it."},
"env_var":{"type":"string","description":"With secret: the environment variable name the value is given to commands as."}},
"required":["question"]}`)

type askParams struct {
	Question   string   `json:"question"`
	Options    []string `json:"options"`
	AllowOther bool     `json:"allow_other"`
	Multiple   bool     `json:"multiple"`
	Context    string   `json:"context"`
	Secret     bool     `json:"secret"`
	EnvVar     string   `json:"env_var"`
}

var envVarName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// askRequest builds the input request for an ask_user call, or a result the
// model reads when the question cannot be asked.
func (r *run) askRequest(c ToolCall) (*callResult, *InputRequest) {
	var p askParams
	if err := json.Unmarshal(c.Args, &p); err != nil || strings.TrimSpace(p.Question) == "" {
		return &callResult{IsError: true, Content: "ask_user needs {\"question\": string}; optional options, allow_other, multiple, context, secret, env_var."}, nil
	}
	kind := KindQuestion
	switch {
	case p.Secret:
		if !envVarName.MatchString(p.EnvVar) {
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

const planDescription = `Publish or revise your plan for a multi-step task. Send the whole plan every time: each step with its status (pending, in_progress, completed, failed). Keep exactly one step in_progress while you work. When a step fails, mark it failed and either retry it or revise the plan. Skip the plan for a simple question or a one-step change.`

var planSchema = json.RawMessage(`{"type":"object","properties":{
"explanation":{"type":"string","description":"Why the plan is what it is or what changed."},
"plan":{"type":"array","items":{"type":"object","properties":{
"step":{"type":"string"},"status":{"type":"string","enum":["pending","in_progress","completed","failed"]}},
"required":["step","status"]}}},"required":["plan"]}`)

type planParams struct {
	Explanation string `json:"explanation"`
	Plan        []struct {
		Step   string `json:"step"`
		Status string `json:"status"`
	} `json:"plan"`
}

// applyPlan replaces the plan and shows it.
func (r *run) applyPlan(args json.RawMessage) *callResult {
	var p planParams
	if err := json.Unmarshal(args, &p); err != nil || len(p.Plan) == 0 {
		return &callResult{IsError: true, Content: "update_plan needs {\"plan\": [{\"step\": string, \"status\": pending|in_progress|completed|failed}]}."}
	}
	entries := make([]PlanEntry, 0, len(p.Plan))
	for i, s := range p.Plan {
		if !slices.Contains(Statuses, Status(s.Status)) {
			return &callResult{IsError: true, Content: fmt.Sprintf("update_plan: step %d has status %q; use pending, in_progress, completed or failed.", i+1, s.Status)}
		}
		entries = append(entries, PlanEntry{Content: s.Step, Status: Status(s.Status)})
	}
	r.mu.Lock()
	r.rec.Plan, r.rec.Explanation = entries, p.Explanation
	r.mu.Unlock()
	r.update(Update{Kind: UpdatePlan, Explanation: p.Explanation, Entries: entries})
	return &callResult{Content: "Plan updated."}
}
