package agent

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentd/agentd/tools"
)

// Plan mode: the model reads and searches, nothing else (the policy judges
// its calls as read-only's), and ends by putting a plan to the user with
// propose_plan: a confirm_plan request, saved like every request. The user
// approves it into the mode the work goes on in (the session's mode from
// then on, for the rest of this run too), or asks for changes and the
// model keeps planning. propose_plan is offered in every mode: a model may
// ask for a go-ahead before a large change anywhere.

const proposeToolName = "propose_plan"

//go:embed propose_plan.md
var proposeDescription string

var proposeSchema = tools.SchemaOf(proposeParams{})

type proposeParams struct {
	Plan string `json:"plan" jsonschema:"The plan, in Markdown: the goal, the steps with the files each touches, how the result will be checked."`
}

// keepPlanning is the option of a confirm_plan that does not approve it.
const keepPlanning = "keep_planning"

// planOptions are what a confirm_plan offers: approve into one of the modes
// that can do the work, or keep planning.
var planOptions = []tools.Option{
	{OptionID: string(tools.ModeAutoEdit), Label: "Approve, and edit files without asking", Description: "auto-edit mode: commands still ask"},
	{OptionID: string(tools.ModeAsk), Label: "Approve, and ask before each change", Description: "ask mode"},
	{OptionID: string(tools.ModeFullAuto), Label: "Approve, and run everything without asking", Description: "full-auto mode: deny rules still apply"},
	{OptionID: keepPlanning, Label: "Keep planning", Description: "say what should change"},
}

// planDeniedText is what the model reads of a call that would change
// something in plan mode.
const planDeniedText = "Not run: this is plan mode: you may read and search, not change anything or run commands that do. " +
	"When you know enough, call propose_plan with your plan; the user approves it before any change is made."

// planDeniedShown is what the editors show of such a call: the model's
// words are about its next move, not for the user.
const planDeniedShown = "Not run: plan mode changes nothing until you approve a plan."

// planModeNote tells the model of a run in plan mode what it may do.
const planModeNote = "[agentd: plan mode: read and search only, change nothing. When you know enough, end with propose_plan and your plan; the user approves it or asks for changes.]"

// Modes are the modes a session may be in, in the order editors show them:
// the policy's, and plan.
var Modes = []tools.Mode{tools.ModeReadOnly, tools.ModePlan, tools.ModeAsk, tools.ModeAutoEdit, tools.ModeFullAuto}

// ModeList names the modes for a message: "read-only, plan, ask, …".
func ModeList() string {
	names := make([]string, len(Modes))
	for i, m := range Modes {
		names[i] = string(m)
	}
	return strings.Join(names, ", ")
}

// policyMode is the mode the policy judges a run's calls in: plan mode's
// calls as read-only's.
func policyMode(m tools.Mode) tools.Mode {
	if m == tools.ModePlan {
		return tools.ModeReadOnly
	}
	return m
}

// proposeRequest builds the confirm_plan request of a propose_plan call,
// or a result the model reads when it cannot be asked.
func (r *run) proposeRequest(c ToolCall) (*callResult, *InputRequest) {
	var p proposeParams
	if err := json.Unmarshal(c.Args, &p); err != nil || strings.TrimSpace(p.Plan) == "" {
		return &callResult{IsError: true, Content: "propose_plan needs {\"plan\": string}: the plan, in Markdown."}, nil
	}
	if !r.a.renders(KindConfirmPlan) {
		return &callResult{Content: "No one can approve a plan in this session. Give the plan as your answer and stop: the user will carry on from it."}, nil
	}
	req := r.newRequest(c.ID)
	req.Kind, req.Title, req.Message = KindConfirmPlan, "Approve the plan?", p.Plan
	req.Options = planOptions
	expireAfter(req, r.a.cfg.ConfirmTimeout)
	return nil, req
}

// planInput is what the user may add to their answer to a plan.
func planInput(*InputRequest) *TextInput {
	with := make([]string, len(planOptions))
	for i, o := range planOptions {
		with[i] = o.OptionID
	}
	return &TextInput{Label: "What should change, or anything to add", Multiline: true, With: with}
}

// answeredPlan is what the model reads of the user's answer to its plan.
func answeredPlan(_ ToolCall, res *resolution) string {
	note := ""
	if t := strings.TrimSpace(res.Text); t != "" {
		note = " The user adds: " + t
	}
	if res.Option == keepPlanning {
		if note == "" {
			note = " They said nothing more: ask with ask_user if it is not clear what should change."
		}
		return "The user did not approve the plan yet and wants you to keep planning." + note +
			" Stay in plan mode: revise the plan (read more if you need to) and propose it again with propose_plan."
	}
	return fmt.Sprintf("The user approved the plan. You are now in %s mode (%s). Carry it out now, step by step, and track it with update_plan.%s",
		res.Option, modeWords[tools.Mode(res.Option)], note)
}

// modeWords says what a mode lets the model do, for what it reads.
var modeWords = map[tools.Mode]string{
	tools.ModeAsk:      "every write and command asks the user first",
	tools.ModeAutoEdit: "file edits run without asking; commands ask",
	tools.ModeFullAuto: "edits and commands run without asking",
}

// approvePlan makes the mode the user chose with their approval the
// session's, for the rest of this run too, and tells every view.
func (r *run) approvePlan(res *resolution) {
	if res.Outcome != OutcomeAnswered || res.Option == keepPlanning || res.Option == "" {
		return
	}
	mode := tools.Mode(res.Option)
	got, err := r.a.Configure(context.Background(), ConfigureParams{SessionID: r.rec.SessionID, ApprovalPolicy: &mode})
	if err != nil {
		r.logger().Error("the approved plan's mode is not saved", "mode", mode, "err", err)
		return
	}
	r.update(Update{Kind: UpdateSettings, Settings: &got.Settings})
}
