package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentd/agentd/tools"
)

// SessionSettings are what a session's runs use: the model, its reasoning effort and
// the approval mode. Reported, they are the values in effect, the daemon's
// configuration filling what the session did not choose; an empty
// ReasoningEffort sends none.
type SessionSettings struct {
	Model           string     `json:"model,omitempty"`
	ReasoningEffort string     `json:"reasoningEffort,omitempty"`
	ApprovalPolicy  tools.Mode `json:"approvalPolicy,omitempty"`
}

// ConfigureParams changes a session's settings. A field left out stays as
// it is; an empty string returns it to the daemon's configuration.
type ConfigureParams struct {
	SessionID       string      `json:"sessionId"`
	Model           *string     `json:"model,omitempty"`
	ReasoningEffort *string     `json:"reasoningEffort,omitempty"`
	ApprovalPolicy  *tools.Mode `json:"approvalPolicy,omitempty"`
}

// ConfigureResult is the session's settings after the change.
type ConfigureResult struct {
	Settings SessionSettings `json:"settings"`
	// RunID is the session's unfinished run, if any: it uses the new
	// model and effort from its next model call, the new mode from the next
	// tool call it decides on.
	RunID string `json:"runId,omitempty"`
}

// ReasoningEfforts lists the efforts a session may choose, least first.
var ReasoningEfforts = []string{EffortLow, EffortMedium, EffortHigh}

// maxModelName bounds a model name an editor sends.
const maxModelName = 256

// checkSettings refuses values no run could use.
func checkSettings(model, effort string, policy tools.Mode) error {
	if len(model) > maxModelName || strings.ContainsAny(model, "\n\r\t") {
		return fmt.Errorf("%w: model %q is not a model name", ErrInvalid, truncate(model, 40))
	}
	if !ValidEffort(effort) {
		return fmt.Errorf("%w: reasoningEffort %q is not one of %s, %s, %s", ErrInvalid, effort, EffortLow, EffortMedium, EffortHigh)
	}
	if policy != "" && !slices.Contains(Modes, policy) {
		return fmt.Errorf("%w: approvalPolicy %q is not one of %s", ErrInvalid, policy, ModeList())
	}
	return nil
}

func (s *sessionRecord) settings() SessionSettings {
	return SessionSettings{Model: s.Model, ReasoningEffort: s.Effort, ApprovalPolicy: s.Policy}
}

// apply takes the settings a run asks for; empty ones leave the session's.
func (s *sessionRecord) apply(set SessionSettings) {
	if set.Model != "" {
		s.Model = set.Model
	}
	if set.ReasoningEffort != "" {
		s.Effort = set.ReasoningEffort
	}
	if set.ApprovalPolicy != "" {
		s.Policy = set.ApprovalPolicy
	}
}

// Effective fills what a session did not choose from the daemon's
// configuration.
func (a *Agent) Effective(s SessionSettings) SessionSettings {
	mc := a.ModelConfig()
	s.Model = firstNonEmpty(s.Model, mc.Name)
	s.ReasoningEffort = firstNonEmpty(s.ReasoningEffort, mc.ReasoningEffort)
	s.ApprovalPolicy = firstNonEmpty(s.ApprovalPolicy, a.cfg.Policy)
	return s
}

// Configure changes a session's settings, for its next runs and for the
// rest of its unfinished run (see ConfigureResult).
func (a *Agent) Configure(ctx context.Context, p ConfigureParams) (ConfigureResult, error) {
	if p.SessionID == "" {
		return ConfigureResult{}, fmt.Errorf("%w: sessionId is required", ErrInvalid)
	}
	var want SessionSettings
	if p.Model != nil {
		want.Model = strings.TrimSpace(*p.Model)
	}
	if p.ReasoningEffort != nil {
		want.ReasoningEffort = *p.ReasoningEffort
	}
	if p.ApprovalPolicy != nil {
		want.ApprovalPolicy = *p.ApprovalPolicy
	}
	if err := checkSettings(want.Model, want.ReasoningEffort, want.ApprovalPolicy); err != nil {
		return ConfigureResult{}, err
	}
	s, err := a.sessionRec(p.SessionID)
	if err != nil {
		return ConfigureResult{}, err
	}
	a.mu.Lock()
	if p.Model != nil {
		s.Model = want.Model
	}
	if p.ReasoningEffort != nil {
		s.Effort = want.ReasoningEffort
	}
	if p.ApprovalPolicy != nil {
		s.Policy = want.ApprovalPolicy
	}
	set := a.Effective(s.settings())
	live := a.runs[s.LastRunID]
	a.mu.Unlock()
	if err := a.saveSession(s, true); err != nil {
		return ConfigureResult{}, fmt.Errorf("saving session %s: %w", s.ID, err)
	}
	res := ConfigureResult{Settings: set}
	if live != nil && live.use(set) {
		res.RunID = live.rec.ID
		for _, c := range live.children() {
			c.use(set) // its subagents run under its mode
		}
	}
	return res, nil
}

// use makes an unfinished run take new settings from its next step; the
// next checkpoint persists them, and a restart before it takes them from
// the session again (restoreSettings).
func (r *run) use(set SessionSettings) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rec.State.Finished() {
		return false
	}
	r.rec.Model, r.rec.Effort, r.rec.Policy = set.Model, set.ReasoningEffort, set.ApprovalPolicy
	return true
}

// restoreSettings gives a run restored at start-up its session's settings,
// which a change made after its last checkpoint may have moved on.
func (a *Agent) restoreSettings(r *run) {
	s, err := a.sessionRec(r.rec.SessionID)
	if err != nil {
		a.log.Warn("restoring a run's settings", "run_id", r.rec.ID, "err", err)
		return
	}
	a.mu.Lock()
	set := a.Effective(s.settings())
	a.mu.Unlock()
	r.use(set)
}

// runSettings is what a run uses now.
func (r *run) runSettings() SessionSettings {
	r.mu.Lock()
	defer r.mu.Unlock()
	return SessionSettings{Model: r.rec.Model, ReasoningEffort: r.rec.Effort, ApprovalPolicy: r.rec.Policy}
}

// model is the client for the run's model.
func (r *run) model() Model { return r.a.modelNamed(r.runSettings().Model) }

// modelNamed returns a client for a model of the configured endpoint, made
// once per name.
func (a *Agent) modelNamed(name string) Model {
	a.modelMu.Lock()
	if name == "" || name == a.mcfg.Name {
		a.modelMu.Unlock()
		return a.model()
	}
	defer a.modelMu.Unlock()
	if m, ok := a.named[name]; ok {
		return m
	}
	cfg := a.mcfg
	cfg.Name = name
	m := a.cfg.NewModel(cfg)
	if a.named == nil {
		a.named = map[string]Model{}
	}
	a.named[name] = m
	return m
}

// ModelChoice is one model an editor may pick.
type ModelChoice struct {
	ID            string `json:"id"`
	OwnedBy       string `json:"ownedBy,omitempty"`
	ContextWindow int    `json:"contextWindow,omitempty"`
}

// ModelList is the models of the configured endpoint.
type ModelList struct {
	Models []ModelChoice `json:"models"`
	// Default is the configured model: what a session that chooses none
	// uses. It is always in Models.
	Default string `json:"default"`
	// Listed says the endpoint answered GET /models; when it did not, Models
	// holds only the configured model and Error says why.
	Listed bool   `json:"listed"`
	Error  string `json:"error,omitempty"`
}

// How long an endpoint's model list is kept, and how long it may take.
const (
	modelListTTL      = 5 * time.Minute
	modelListFailTTL  = time.Minute
	modelListDeadline = 3 * time.Second
)

// modelListCache keeps an endpoint's answer, so a picker opened often costs
// one request, and an endpoint without a list costs one wait a minute.
type modelListCache struct {
	mu   sync.Mutex // held while asking, so concurrent callers wait for one answer
	key  string
	at   time.Time
	list []ModelInfo
	err  error
}

// ModelList lists the endpoint's models, or just the configured one when
// the endpoint does not say.
func (a *Agent) ModelList(ctx context.Context) (ModelList, error) {
	cfg := a.ModelConfig()
	if !cfg.Configured() {
		if err := a.checkModel(); err != nil {
			return ModelList{}, err
		}
		return ModelList{}, ErrNoModel
	}
	list, err := a.models.get(ctx, cfg)
	out := ModelList{Default: cfg.Name, Models: []ModelChoice{}}
	if err != nil {
		out.Error = err.Error()
	} else {
		out.Listed = true
	}
	for _, m := range list {
		out.Models = append(out.Models, ModelChoice{ID: m.ID, OwnedBy: m.OwnedBy, ContextWindow: m.ContextWindow})
	}
	if !slices.ContainsFunc(out.Models, func(m ModelChoice) bool { return m.ID == cfg.Name }) {
		out.Models = append([]ModelChoice{{ID: cfg.Name, ContextWindow: cfg.ContextWindow}}, out.Models...)
	}
	return out, nil
}

func (c *modelListCache) get(ctx context.Context, cfg ModelConfig) ([]ModelInfo, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := cfg.BaseURL + "\x00" + cfg.APIKey
	ttl := modelListTTL
	if c.err != nil {
		ttl = modelListFailTTL
	}
	if c.key == key && time.Since(c.at) < ttl {
		return c.list, c.err
	}
	ask, cancel := context.WithTimeout(ctx, modelListDeadline)
	defer cancel()
	list, err := ListModels(ask, cfg)
	if ctx.Err() != nil {
		return nil, ctx.Err() // the caller gave up: not the endpoint's answer
	}
	c.list, c.err, c.key, c.at = list, err, key, time.Now()
	return list, err
}
