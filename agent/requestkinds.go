package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/agentd/agentd/tools"
)

// kindRule is how the agent handles one kind of input request: how the user
// answers it, and what the model reads once it is closed. A new kind is a
// row here, its constant (notifications.go), the code that opens it, and
// docs/protocol.md: every front end shows it from its generic form
// (InputRequest.AnswerWith, Options, Input), and the inbox opens and closes
// it like any other.
type kindRule struct {
	// decision: the user answers with Confirm and a decision (allow_once …);
	// otherwise with Reply, which reply checks and turns into a resolution
	// (replyForm checks a reply against the generic form alone).
	decision bool
	reply    func(req *InputRequest, p ReplyParams) (*resolution, error)
	// input is the text the request lets the user type, if any.
	input func(req *InputRequest) *TextInput
	// effect is what an answer does besides what the model reads, done
	// once the answer is turned into the call's result (again after a
	// restart in between: it must be idempotent).
	effect func(r *run, res *resolution)
	// secret: the answer goes to commands only; it is never persisted nor
	// shown to the model.
	secret bool
	// what is the thing a decision is about, in what the model reads.
	what string
	// answered is what the model reads for an answered request.
	answered func(c ToolCall, res *resolution) string
}

var requestRules = map[RequestKind]kindRule{
	KindQuestion:       {reply: replyText, input: textInput("Your answer"), answered: answeredText},
	KindChoice:         {reply: replyChoice, input: otherInput, answered: answeredChoice},
	KindSecret:         {reply: replyText, input: secretInput, secret: true, answered: answeredSecret},
	KindConfirmWrite:   {decision: true, input: reasonInput, what: "write"},
	KindConfirmCommand: {decision: true, input: reasonInput, what: "command"},
	KindConfirmPlan:    {reply: replyForm, input: planInput, answered: answeredPlan, effect: (*run).approvePlan}, // plan.go
}

// formOf completes a request's generic form from its kind's rule.
func formOf(req *InputRequest) {
	rule := requestRules[req.Kind]
	req.AnswerWith = AnswerReply
	if rule.decision {
		req.AnswerWith = AnswerConfirm
	}
	if rule.input != nil {
		req.Input = rule.input(req)
	}
}

func textInput(label string) func(*InputRequest) *TextInput {
	return func(*InputRequest) *TextInput { return &TextInput{Label: label} }
}

func secretInput(*InputRequest) *TextInput { return &TextInput{Label: "Value (hidden)", Secret: true} }

// otherInput is a choice's own answer, when it takes one.
func otherInput(req *InputRequest) *TextInput {
	if !req.AllowOther {
		return nil
	}
	return &TextInput{Label: "Other answer"}
}

// reasonInput is the reason that goes with a rejection.
func reasonInput(req *InputRequest) *TextInput {
	var with []string
	for _, o := range req.Options {
		if d := tools.Decision(o.OptionID); !d.Allows() {
			with = append(with, o.OptionID)
		}
	}
	if len(with) == 0 {
		return nil
	}
	return &TextInput{Label: "Why not, or what to do instead", With: with}
}

// replyForm takes a reply by the request's generic form alone: one of its
// options (several if it takes several), and its text where its input
// asks for it. A kind whose answer is no more than that needs no reply
// function of its own.
func replyForm(req *InputRequest, p ReplyParams) (*resolution, error) {
	ids := p.Answers
	if p.OptionID != "" {
		ids = append([]string{p.OptionID}, ids...)
	}
	in := req.Input
	res := &resolution{Outcome: OutcomeAnswered, By: ByUser}
	switch {
	case len(ids) > 1 && !req.Multiple:
		return nil, fmt.Errorf("%w: request %s takes one option", ErrWrongKind, req.RequestID)
	case len(ids) == 0 && len(req.Options) > 0 && (in == nil || len(in.With) > 0 || p.Text == nil):
		return nil, fmt.Errorf("%w: optionId is required for request %s", ErrInvalid, req.RequestID)
	}
	for _, id := range ids {
		i := slices.IndexFunc(req.Options, func(o tools.Option) bool { return o.OptionID == id })
		if i < 0 {
			return nil, fmt.Errorf("%w: option %q is not among the options of %s", ErrWrongKind, id, req.RequestID)
		}
		res.Options = append(res.Options, req.Options[i].Label)
	}
	if len(ids) > 0 {
		res.Option = ids[0]
	}
	// The text: an answer of its own, or words with one of the options.
	asked := in != nil && (len(in.With) == 0 && len(ids) == 0 || slices.ContainsFunc(ids, func(id string) bool { return slices.Contains(in.With, id) }))
	switch {
	case p.Text != nil && !asked:
		return nil, fmt.Errorf("%w: request %s takes no text with that answer", ErrWrongKind, req.RequestID)
	case asked && in.Required && (p.Text == nil || strings.TrimSpace(*p.Text) == ""):
		return nil, fmt.Errorf("%w: %s is required with that answer", ErrInvalid, strings.ToLower(in.Label))
	case p.Text != nil:
		res.Text = *p.Text
	}
	return res, nil
}

func replyText(req *InputRequest, p ReplyParams) (*resolution, error) {
	if p.Text == nil {
		return nil, fmt.Errorf("%w: text is required for a %s", ErrInvalid, req.Kind)
	}
	return &resolution{Outcome: OutcomeAnswered, By: ByUser, Text: *p.Text}, nil
}

// replyChoice takes one option (several if the choice allows), or free text
// if it allows other answers.
func replyChoice(req *InputRequest, p ReplyParams) (*resolution, error) {
	res := &resolution{Outcome: OutcomeAnswered, By: ByUser}
	ids := p.Answers
	if p.OptionID != "" {
		ids = append([]string{p.OptionID}, ids...)
	}
	switch {
	case len(ids) > 1 && !req.Multiple:
		return nil, fmt.Errorf("%w: request %s takes one option", ErrWrongKind, req.RequestID)
	case len(ids) == 0 && p.Text != nil:
		if !req.AllowOther {
			return nil, fmt.Errorf("%w: request %s is a closed choice; give an optionId", ErrWrongKind, req.RequestID)
		}
		res.Text = *p.Text
		return res, nil
	case len(ids) == 0:
		return nil, fmt.Errorf("%w: optionId, answers or text is required for a choice", ErrInvalid)
	}
	for _, id := range ids {
		i := slices.IndexFunc(req.Options, func(o tools.Option) bool { return o.OptionID == id })
		if i < 0 {
			return nil, fmt.Errorf("%w: option %q is not among the options of %s", ErrWrongKind, id, req.RequestID)
		}
		res.Options = append(res.Options, req.Options[i].Label)
	}
	return res, nil
}

func answeredText(_ ToolCall, res *resolution) string { return "The user answered: " + res.Text }

func answeredChoice(c ToolCall, res *resolution) string {
	if len(res.Options) == 0 {
		return answeredText(c, res)
	}
	return "The user chose: " + strings.Join(res.Options, ", ")
}

func answeredSecret(c ToolCall, _ *resolution) string {
	name := secretName(c)
	return fmt.Sprintf("The user provided the secret. It is available to run_cmd commands that name it, as the environment variable %s; its value is not shown to you. Refer to it as $%s in the command line (a command that does not name it does not get it); each such command asks the user first.", name, name)
}

// resultOfResolution turns a closed request into what the model reads. An
// allowed confirmation marks the call approved instead: settle runs it next.
func (r *run) resultOfResolution(ctx context.Context, pc *pendingCall) *callResult {
	var out *callResult
	if rule := requestRules[pc.req.Req.Kind]; rule.decision {
		if out = r.decisionResult(pc, rule.what); out == nil {
			return nil
		}
	} else {
		out = r.questionResult(pc, rule)
	}
	r.reportSimple(pc.Call.ID, out)
	return out
}

// decisionResult is what the model reads of a confirmation that does not
// let the call run; nil when it does.
func (r *run) decisionResult(pc *pendingCall, what string) *callResult {
	res := pc.req.Resolved
	switch {
	case res.Decision.Allows():
		// Not saved: after a restart the saved resolution approves it again.
		r.mu.Lock()
		pc.Approved = true
		r.mu.Unlock()
		return nil
	case res.Outcome == OutcomeTimeout:
		return &callResult{IsError: true, Rejected: true, Content: fmt.Sprintf("Not run: no one approved this %s in time (timeout). It is not a refusal; you may ask again later or continue without it.", what)}
	case res.Outcome == OutcomeCancelled:
		return &callResult{IsError: true, Rejected: true, Content: "Not run: the request was cancelled."}
	}
	reason := res.Reason
	if reason == "" {
		reason = "no reason given"
	}
	return &callResult{IsError: true, Rejected: true, Content: fmt.Sprintf(
		"The user rejected this %s (%s). Reason: %s. Do not retry it unchanged; adjust your approach to the reason, or ask the user.", what, res.Outcome, reason)}
}

func (r *run) questionResult(pc *pendingCall, rule kindRule) *callResult {
	switch res := pc.req.Resolved; res.Outcome {
	case OutcomeTimeout:
		return &callResult{Content: fmt.Sprintf("The user did not answer within %s. Decide with what you have, say which assumption you made, or give your answer with what you know.", r.a.cfg.QuestionTimeout)}
	case OutcomeCancelled:
		return &callResult{IsError: true, Content: "The question was cancelled."}
	default:
		if rule.effect != nil {
			rule.effect(r, res)
		}
		return &callResult{Content: rule.answered(pc.Call, res)}
	}
}
