package acp

import (
	"context"
	"slices"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/tools"
)

// A session's settings as ACP offers them: config options for the approval
// mode, the model and the reasoning effort (session/set_config_option,
// which Zed shows as pickers), the mode again as session modes
// (session/set_mode) for clients without config options, and the model as
// the unstable session model state (session/set_model). Each change goes
// to the agent session, whose unfinished run takes it from its next step;
// before the first prompt there is none, and the session's meta keeps the
// choice for the first run.

// The config options' ids.
const (
	optMode   = "mode"
	optModel  = "model"
	optEffort = "reasoning_effort"
	// effortDefault returns the effort to the daemon's configuration.
	effortDefault = "default"
)

// settings is what the session's next step uses.
func (s *session) settings() agent.SessionSettings {
	s.mu.Lock()
	agentID, first := s.agentID, s.first
	s.mu.Unlock()
	if agentID != "" {
		if si, ok := s.ws.agent.SessionInfo(agentID); ok {
			return si.Settings
		}
	}
	return s.ws.agent.Effective(agent.SessionSettings{Model: first.Model, ReasoningEffort: first.Effort, ApprovalPolicy: first.Mode})
}

// setting changes one setting by its config option id.
func (s *session) setting(ctx context.Context, id, value string) error {
	var p agent.ConfigureParams
	switch id {
	case optMode:
		mode := tools.Mode(value)
		if !slices.Contains(agent.Modes, mode) {
			return invalidParams("unknown mode %q: one of %s", value, agent.ModeList())
		}
		p.ApprovalPolicy = &mode
	case optModel:
		if value == "" {
			return invalidParams("the model is empty")
		}
		p.Model = &value
	case optEffort:
		if value == effortDefault {
			value = ""
		}
		if !agent.ValidEffort(value) {
			return invalidParams("unknown reasoning effort %q: one of %s, low, medium, high", value, effortDefault)
		}
		p.ReasoningEffort = &value
	default:
		return invalidParams("unknown config option %q: one of %s, %s, %s", id, optMode, optModel, optEffort)
	}
	s.mu.Lock()
	agentID := s.agentID
	if p.ApprovalPolicy != nil {
		s.first.Mode = *p.ApprovalPolicy
	}
	if p.Model != nil {
		s.first.Model = *p.Model
	}
	if p.ReasoningEffort != nil {
		s.first.Effort = *p.ReasoningEffort
	}
	m := s.first
	m.AgentID = agentID
	s.mu.Unlock()
	s.ws.meta.set(s.id, m)
	if agentID == "" {
		return nil
	}
	p.SessionID = agentID
	_, err := s.ws.agent.Configure(ctx, p)
	return agentErr(err)
}

// configOptions are the session's settings with what each may be.
func (s *session) configOptions(ctx context.Context) []acpsdk.SessionConfigOption {
	set := s.settings()
	return []acpsdk.SessionConfigOption{modeOption(set.ApprovalPolicy), s.modelOption(ctx, set.Model), s.effortOption(set.ReasoningEffort)}
}

func modeOption(current tools.Mode) acpsdk.SessionConfigOption {
	var opts acpsdk.SessionConfigSelectOptionsUngrouped
	for _, m := range modes {
		opts = append(opts, acpsdk.SessionConfigSelectOption{Value: acpsdk.SessionConfigValueId(m.Id), Name: m.Name, Description: m.Description})
	}
	desc := "How agentd asks before writes and commands"
	return selectOption(optMode, "Mode", desc, acpsdk.SessionConfigOptionCategoryMode, string(current), opts)
}

// modelOption offers the endpoint's models (agent/models), the current one
// first when the endpoint does not list it.
func (s *session) modelOption(ctx context.Context, current string) acpsdk.SessionConfigOption {
	var opts acpsdk.SessionConfigSelectOptionsUngrouped
	if list, err := s.ws.agent.ModelList(ctx); err == nil {
		for _, m := range list.Models {
			opts = append(opts, acpsdk.SessionConfigSelectOption{Value: acpsdk.SessionConfigValueId(m.ID), Name: m.ID})
		}
	}
	if !slices.ContainsFunc(opts, func(o acpsdk.SessionConfigSelectOption) bool { return string(o.Value) == current }) {
		opts = append(acpsdk.SessionConfigSelectOptionsUngrouped{{Value: acpsdk.SessionConfigValueId(current), Name: current}}, opts...)
	}
	return selectOption(optModel, "Model", "The model of the configured endpoint", acpsdk.SessionConfigOptionCategoryModel, current, opts)
}

func (s *session) effortOption(current string) acpsdk.SessionConfigOption {
	dflt := "Default (none sent)"
	if e := s.ws.agent.ModelConfig().ReasoningEffort; e != "" {
		dflt = "Default (" + e + ")"
	}
	opts := acpsdk.SessionConfigSelectOptionsUngrouped{{Value: effortDefault, Name: dflt}}
	for _, e := range agent.ReasoningEfforts {
		opts = append(opts, acpsdk.SessionConfigSelectOption{Value: acpsdk.SessionConfigValueId(e), Name: e})
	}
	if current == "" {
		current = effortDefault
	}
	return selectOption(optEffort, "Reasoning effort", "Sent to the model as reasoning_effort", acpsdk.SessionConfigOptionCategoryThoughtLevel, current, opts)
}

func selectOption(id, name, desc string, cat acpsdk.SessionConfigOptionCategory, current string, opts acpsdk.SessionConfigSelectOptionsUngrouped) acpsdk.SessionConfigOption {
	o := acpsdk.NewSessionConfigOptionSelect(acpsdk.SessionConfigValueId(current), acpsdk.SessionConfigSelectOptions{Ungrouped: &opts})
	o.Select.Id, o.Select.Name, o.Select.Description, o.Select.Category = acpsdk.SessionConfigId(id), name, &desc, &cat
	return o
}

// modelState is the model as the unstable session model state shows it.
func (s *session) modelState(ctx context.Context, current string) *acpsdk.SessionModelState {
	st := &acpsdk.SessionModelState{CurrentModelId: acpsdk.ModelId(current), AvailableModels: []acpsdk.ModelInfo{}}
	if o := s.modelOption(ctx, current); o.Select != nil && o.Select.Options.Ungrouped != nil {
		for _, v := range *o.Select.Options.Ungrouped {
			st.AvailableModels = append(st.AvailableModels, acpsdk.ModelInfo{ModelId: acpsdk.ModelId(v.Value), Name: v.Name})
		}
	}
	return st
}

// SetSessionConfigOption changes the mode, the model or the reasoning
// effort, and answers with every option as it now is.
func (s *server) SetSessionConfigOption(ctx context.Context, p acpsdk.SetSessionConfigOptionRequest) (acpsdk.SetSessionConfigOptionResponse, error) {
	if p.ValueId == nil {
		return acpsdk.SetSessionConfigOptionResponse{}, invalidParams("agentd's config options take a value id, not a boolean")
	}
	sess, err := s.session(p.ValueId.SessionId)
	if err != nil {
		return acpsdk.SetSessionConfigOptionResponse{}, err
	}
	id := string(p.ValueId.ConfigId)
	if err := sess.setting(ctx, id, string(p.ValueId.Value)); err != nil {
		return acpsdk.SetSessionConfigOptionResponse{}, err
	}
	if id == optMode {
		sess.send(acpsdk.SessionUpdate{CurrentModeUpdate: &acpsdk.SessionCurrentModeUpdate{CurrentModeId: acpsdk.SessionModeId(p.ValueId.Value)}})
	}
	return acpsdk.SetSessionConfigOptionResponse{ConfigOptions: sess.configOptions(ctx)}, nil
}

// SetSessionMode sets the approval mode: the session's next runs, and its
// unfinished run from the next tool call it decides on.
func (s *server) SetSessionMode(ctx context.Context, p acpsdk.SetSessionModeRequest) (acpsdk.SetSessionModeResponse, error) {
	sess, err := s.session(p.SessionId)
	if err != nil {
		return acpsdk.SetSessionModeResponse{}, err
	}
	if err := sess.setting(ctx, optMode, string(p.ModeId)); err != nil {
		return acpsdk.SetSessionModeResponse{}, err
	}
	sess.announceOptions(ctx)
	return acpsdk.SetSessionModeResponse{}, nil
}

// UnstableSetSessionModel sets the model (the unstable session/set_model,
// for clients without config options).
func (s *server) UnstableSetSessionModel(ctx context.Context, p acpsdk.UnstableSetSessionModelRequest) (acpsdk.UnstableSetSessionModelResponse, error) {
	sess, err := s.session(p.SessionId)
	if err != nil {
		return acpsdk.UnstableSetSessionModelResponse{}, err
	}
	if err := sess.setting(ctx, optModel, string(p.ModelId)); err != nil {
		return acpsdk.UnstableSetSessionModelResponse{}, err
	}
	sess.announceOptions(ctx)
	return acpsdk.UnstableSetSessionModelResponse{}, nil
}

// announceOptions tells a client that changed a setting another way what
// the config options now are.
func (s *session) announceOptions(ctx context.Context) {
	s.send(acpsdk.SessionUpdate{ConfigOptionUpdate: &acpsdk.SessionConfigOptionUpdate{ConfigOptions: s.configOptions(ctx)}})
}
