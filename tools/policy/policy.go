package policy

import (
	"fmt"
	"path/filepath"
	"slices"
	"sync"

	"github.com/agentd/agentd/tools"
)

// Action is what the policy does with a call.
type Action string

// Actions, from the most to the least permissive.
const (
	Allow Action = "allow"
	Ask   Action = "ask"
	Deny  Action = "deny"
)

func (a Action) severity() int {
	switch a {
	case Deny:
		return 2
	case Ask:
		return 1
	}
	return 0
}

// Verdict is the policy's judgement of a call. Rule names what decided, in
// words a user can act on; Reason says why.
//
// For a command the verdict also says how it runs if it runs (unasked when
// allowed, once approved when it asks): Confine, its sandbox profile and
// whether it gets the network, and Secrets, the secrets it uses.
type Verdict struct {
	Action  Action
	Rule    string
	Reason  string
	Confine tools.Confine
	Secrets []string
}

// Config says where the rules live. UserConfigDir holds the user's
// rules.json; the workspace's are at <Root>/.agentd/rules.json; grants made
// with allow_always or reject_always persist at <StateDir>/rules.json.
type Config struct {
	Mode          tools.Mode
	Root          string
	StateDir      string
	UserConfigDir string
	// Private are agentd's own directories (tools.AgentDirs): a command
	// line that writes there is refused in every mode, wherever the
	// workspace lies.
	Private []string
	// Sandbox says which profiles the kernel can confine commands in; nil
	// is the machine's (tools.DefaultSandbox). A command it cannot confine
	// asks, whatever the mode, and runs with the user's own rights once
	// approved.
	Sandbox Confiner
}

// Confiner is what the policy needs to know of the kernel sandbox: which
// profiles it can confine a command in, and how to say why not.
// *tools.Sandbox is one.
type Confiner interface {
	Supports(tools.Profile) bool
	Status() tools.SandboxStatus
}

// Policy decides which calls run freely, which ask and which are refused.
// Safe for concurrent use.
type Policy struct {
	mode      tools.Mode
	root      string
	private   []string
	sandbox   Confiner
	grantFile string
	gitTrust  *gitTrustBase // the repositories as they were when the policy loaded
	fixed     []Rule        // built-in, user and workspace rules: read-only after load
	ignored   []Rule        // the workspace's allow rules, which grant nothing

	mu      sync.Mutex // guards grants and session
	grants  []Rule
	session map[string][]Rule
}

// Load reads the user, workspace and granted rules. Missing files
// are fine; a malformed one is an error, so a typo never silently drops a
// deny.
func Load(cfg Config) (*Policy, error) {
	mode := cfg.Mode
	if mode == "" {
		mode = tools.ModeAsk
	}
	if !slices.Contains(tools.Modes, mode) {
		return nil, fmt.Errorf("unknown approval mode %q (want one of %s)", mode, tools.ModeList())
	}
	root, err := tools.CanonicalRoot(cfg.Root)
	if err != nil {
		return nil, err
	}
	p := &Policy{mode: mode, root: root, private: privateAround(root, cfg.Private), sandbox: cfg.Sandbox, gitTrust: newGitTrustBase(root), fixed: builtinRules(), session: map[string][]Rule{}}
	if p.sandbox == nil {
		p.sandbox = tools.DefaultSandbox()
	}
	if cfg.UserConfigDir != "" {
		rs, err := loadRules(filepath.Join(cfg.UserConfigDir, "rules.json"), ScopeUser)
		if err != nil {
			return nil, err
		}
		p.fixed = append(p.fixed, rs...)
	}
	rs, err := loadRules(filepath.Join(root, ".agentd", "rules.json"), ScopeWorkspace)
	if err != nil {
		return nil, err
	}
	// The workspace's rules are the repository's content: a cloned
	// repository wrote them, or a command did (where .agentd/ did not
	// exist, the sandbox cannot keep it read-only). They may restrict
	// (deny, ask), never grant: allow rules live in the user's file and the
	// user's own answers.
	for _, r := range rs {
		if r.Action == Allow {
			p.ignored = append(p.ignored, r)
			continue
		}
		p.fixed = append(p.fixed, r)
	}
	if cfg.StateDir != "" {
		p.grantFile = filepath.Join(cfg.StateDir, "rules.json")
		if p.grants, err = loadRules(p.grantFile, ScopeGrant); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// privateAround keeps the private directories that do not hold the
// workspace (tools.Env.privateDir says why).
func privateAround(root string, private []string) []string {
	var out []string
	for _, d := range private {
		if !tools.Within(d, root) {
			out = append(out, d)
		}
	}
	return out
}

// IgnoredWorkspaceRules are the allow rules of the workspace's
// .agentd/rules.json, which the policy does not apply: a repository's
// content grants nothing. The daemon says so in its log.
func (p *Policy) IgnoredWorkspaceRules() []Rule { return p.ignored }

// Mode is the policy's default mode.
func (p *Policy) Mode() tools.Mode { return p.mode }

// Decide judges a prepared call on its effect. mode "" means the policy's
// default mode. Built-in denials win over everything; otherwise the
// strictest matching rule decides, and without one the mode's default does
// (modeDefaults). In read-only mode no rule can allow anything but reads.
// A call whose effect is unknown, or that does not carry what its effect
// needs (an execute without a command), is judged as unknown: it fails
// closed.
func (p *Policy) Decide(sessionID string, mode tools.Mode, c *tools.Call) Verdict {
	if mode == "" {
		mode = p.mode
	}
	if !slices.Contains(tools.Modes, mode) {
		return Verdict{Action: Deny, Rule: "mode " + string(mode) + ": unknown", Reason: "unknown approval mode; nothing is allowed"}
	}
	rules := p.rules(sessionID)
	switch {
	case c.Effect == tools.EffectRead:
		return p.decideReads(rules, mode, c)
	case c.Effect == tools.EffectEdit:
		var ds []Verdict
		for _, w := range c.Writes {
			ds = append(ds, p.decideWrite(rules, mode, c.Tool, w.Path))
			if w.OldPath != "" {
				ds = append(ds, p.decideWrite(rules, mode, c.Tool, w.OldPath))
			}
		}
		return strictest(ds)
	case c.Effect == tools.EffectExecute && c.Command != nil:
		return p.decideCommand(rules, mode, c)
	case c.Effect == tools.EffectNetwork && c.Host != nil:
		return decideHost(rules, mode, c)
	case c.Effect == tools.EffectNetwork:
		return decideByTool(rules, mode, tools.EffectNetwork, c.Tool)
	}
	return decideByTool(rules, mode, tools.EffectUnknown, c.Tool)
}

func (p *Policy) rules(sessionID string) []Rule {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := slices.Clone(p.fixed)
	out = append(out, p.grants...)
	return append(out, p.session[sessionID]...)
}

// strictest returns the first of the most severe decisions.
func strictest(ds []Verdict) Verdict {
	best := -1
	for i, d := range ds {
		if best < 0 || d.Action.severity() > ds[best].Action.severity() {
			best = i
		}
	}
	if best < 0 {
		return Verdict{Action: Allow, Rule: "nothing to check", Reason: "the call touches nothing"}
	}
	return ds[best]
}

func (p *Policy) decideReads(rules []Rule, mode tools.Mode, c *tools.Call) Verdict {
	ds := []Verdict{{Action: Allow, Rule: "mode " + string(mode) + ": reads allowed", Reason: "reading and searching the workspace is free"}}
	for _, path := range c.Reads {
		if d, ok := matchRules(rules, c.Tool, "read", path, matchPath); ok {
			ds = append(ds, d)
		}
	}
	return strictest(ds)
}

// decideWrite judges a write of one workspace path by a file tool or a
// command: the strictest rule that names it, else the mode. A file that
// runs later outside any sandbox (tools.RunsLater: .vscode/tasks.json,
// .envrc, a git hook of .husky/ …) asks in every mode that writes, unless
// a rule the user wrote or a grant of that file allows it.
func (p *Policy) decideWrite(rules []Rule, mode tools.Mode, tool, path string) Verdict {
	d, ok := matchRules(rules, tool, "write", path, matchPath)
	switch {
	case ok && d.Action == Allow && mode == tools.ModeReadOnly:
		return modeDefault(mode, tools.EffectEdit)
	case ok:
		return d
	}
	d = modeDefault(mode, tools.EffectEdit)
	if why := tools.RunsLater(path); why != "" && d.Action != Deny {
		d = raise(d, Verdict{Action: Ask, Rule: "runs later: " + path + " runs outside the sandbox: ask",
			Reason: path + " runs later, outside the sandbox: " + why})
	}
	return d
}

// modeDefaults is what each mode does with each effect when no rule
// matches. Reads are free; read-only refuses everything else; an unknown
// effect asks in every other mode but full-auto.
var modeDefaults = map[tools.Mode]map[tools.Effect]Action{
	tools.ModeReadOnly: {tools.EffectRead: Allow, tools.EffectEdit: Deny, tools.EffectExecute: Deny, tools.EffectNetwork: Deny, tools.EffectUnknown: Deny},
	tools.ModeAsk:      {tools.EffectRead: Allow, tools.EffectEdit: Ask, tools.EffectExecute: Ask, tools.EffectNetwork: Ask, tools.EffectUnknown: Ask},
	tools.ModeAutoEdit: {tools.EffectRead: Allow, tools.EffectEdit: Allow, tools.EffectExecute: Ask, tools.EffectNetwork: Ask, tools.EffectUnknown: Ask},
	tools.ModeFullAuto: {tools.EffectRead: Allow, tools.EffectEdit: Allow, tools.EffectExecute: Allow, tools.EffectNetwork: Allow, tools.EffectUnknown: Allow},
}

// effectNouns name what each effect does, in rules and reasons.
var effectNouns = map[tools.Effect]string{tools.EffectRead: "reads", tools.EffectEdit: "writes", tools.EffectExecute: "commands",
	tools.EffectNetwork: "network access", tools.EffectUnknown: "calls of unknown effect"}

// modeDefault is what a mode does with an effect no rule matched.
func modeDefault(mode tools.Mode, e tools.Effect) Verdict {
	a, ok := modeDefaults[mode][e]
	if !ok {
		a = Deny // an effect or mode the table does not know fails closed
	}
	what := effectNouns[e]
	reason := map[Action]string{
		Allow: "the mode allows " + what,
		Ask:   "the mode asks before " + what,
		Deny:  string(mode) + " mode refuses " + what,
	}[a]
	return Verdict{Action: a, Rule: fmt.Sprintf("mode %s: %s %s", mode, what, a), Reason: reason}
}

// decideByTool judges a call that only its tool's name describes (network
// access, unknown effects): a rule naming the tool decides, except that
// read-only allows none of them.
func decideByTool(rules []Rule, mode tools.Mode, e tools.Effect, tool string) Verdict {
	d, ok := matchRules(rules, tool, "", "", matchAll)
	if !ok || d.Action == Allow && mode == tools.ModeReadOnly {
		return modeDefault(mode, e)
	}
	return d
}

// matchAll matches only the patterns that match everything: a rule for a
// tool that has no subject to match a pattern against.
func matchAll(pattern, _ string) bool { return pattern == "" || pattern == "*" }
