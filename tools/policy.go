package tools

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/agentd/agentd/rpc/wire"
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

// Decision is the policy's verdict on a call. Rule names what decided, in
// words a user can act on; Reason says why.
type Decision struct {
	Action Action
	Rule   string
	Reason string
}

// PolicyConfig says where the rules live. UserConfigDir holds the user's
// rules.json; the workspace's are at <Root>/.agentd/rules.json; grants made
// with allow_always or reject_always persist at <StateDir>/rules.json.
type PolicyConfig struct {
	Mode          string
	Root          string
	StateDir      string
	UserConfigDir string
}

// Policy decides which calls run freely, which ask and which are refused.
// Safe for concurrent use.
type Policy struct {
	mode      string
	root      string
	grantFile string
	fixed     []Rule // built-in, user and workspace rules: read-only after load

	mu      sync.Mutex // guards grants and session
	grants  []Rule
	session map[string][]Rule
}

// LoadPolicy reads the user, workspace and granted rules. Missing files
// are fine; a malformed one is an error, so a typo never silently drops a
// deny.
func LoadPolicy(cfg PolicyConfig) (*Policy, error) {
	mode := cfg.Mode
	if mode == "" {
		mode = wire.PolicyAsk
	}
	if !slices.Contains(wire.Policies, mode) {
		return nil, fmt.Errorf("unknown approval mode %q (want one of %s)", mode, strings.Join(wire.Policies, ", "))
	}
	root, err := canonicalRoot(cfg.Root)
	if err != nil {
		return nil, err
	}
	p := &Policy{mode: mode, root: root, fixed: builtinRules(), session: map[string][]Rule{}}
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
	p.fixed = append(p.fixed, rs...)
	if cfg.StateDir != "" {
		p.grantFile = filepath.Join(cfg.StateDir, "rules.json")
		if p.grants, err = loadRules(p.grantFile, ScopeGrant); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Mode is the policy's default mode.
func (p *Policy) Mode() string { return p.mode }

// Decide judges a prepared call. mode "" means the policy's default mode.
// Built-in denials win over everything; otherwise the strictest matching
// rule decides, and without one the mode's default does. In read-only mode
// no rule can allow a write or a command that is not read-only.
func (p *Policy) Decide(sessionID, mode string, c *Call) Decision {
	if mode == "" {
		mode = p.mode
	}
	if !slices.Contains(wire.Policies, mode) {
		return Decision{Action: Deny, Rule: "mode " + mode + ": unknown", Reason: "unknown approval mode; nothing is allowed"}
	}
	rules := p.rules(sessionID)
	switch {
	case c.Command != nil:
		return p.decideCommand(rules, mode, c)
	case len(c.Writes) > 0:
		var ds []Decision
		for _, w := range c.Writes {
			ds = append(ds, p.decideWrite(rules, mode, c.Tool, w.Path))
			if w.OldPath != "" {
				ds = append(ds, p.decideWrite(rules, mode, c.Tool, w.OldPath))
			}
		}
		return strictest(ds)
	}
	return p.decideReads(rules, mode, c)
}

func (p *Policy) rules(sessionID string) []Rule {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := slices.Clone(p.fixed)
	out = append(out, p.grants...)
	return append(out, p.session[sessionID]...)
}

// strictest returns the first of the most severe decisions.
func strictest(ds []Decision) Decision {
	best := -1
	for i, d := range ds {
		if best < 0 || d.Action.severity() > ds[best].Action.severity() {
			best = i
		}
	}
	if best < 0 {
		return Decision{Action: Allow, Rule: "nothing to check", Reason: "the call touches nothing"}
	}
	return ds[best]
}

func (p *Policy) decideReads(rules []Rule, mode string, c *Call) Decision {
	ds := []Decision{{Action: Allow, Rule: "mode " + mode + ": reads allowed", Reason: "reading and searching the workspace is free"}}
	for _, path := range c.Reads {
		if d, ok := matchRules(rules, c.Tool, "read", path, matchPath); ok {
			ds = append(ds, d)
		}
	}
	return strictest(ds)
}

func (p *Policy) decideWrite(rules []Rule, mode, tool, path string) Decision {
	d, ok := matchRules(rules, tool, "write", path, matchPath)
	if !ok {
		return modeDefault(mode, "writes")
	}
	if d.Action == Allow && mode == wire.PolicyReadOnly {
		return modeDefault(mode, "writes")
	}
	return d
}

// modeDefault is what a mode does with a kind of call no rule matched.
func modeDefault(mode, what string) Decision {
	var a Action
	switch {
	case mode == wire.PolicyFullAuto:
		a = Allow
	case mode == wire.PolicyReadOnly:
		a = Deny
	case mode == wire.PolicyAutoEdit && what == "writes":
		a = Allow
	default:
		a = Ask
	}
	reason := map[Action]string{
		Allow: "the mode allows " + what,
		Ask:   "the mode asks before " + what,
		Deny:  "read-only mode refuses " + what,
	}[a]
	return Decision{Action: a, Rule: fmt.Sprintf("mode %s: %s %s", mode, what, a), Reason: reason}
}

// decideCommand checks every part of a command line: built-in denials
// first, then each simple command and each file it writes.
func (p *Policy) decideCommand(rules []Rule, mode string, c *Call) Decision {
	cwd := filepath.Join(p.root, filepath.FromSlash(c.Command.Cwd))
	an := analyzeCommand(c.Command.Line, p.root, cwd)
	if an.ParseErr != nil {
		d := Decision{Action: Ask, Rule: "run_cmd: unparsable command: ask", Reason: "the command could not be parsed (" + an.ParseErr.Error() + "), so it cannot be checked"}
		if mode == wire.PolicyReadOnly {
			d.Action, d.Rule = Deny, "mode read-only: unparsable command: deny"
		}
		return d
	}
	if d, ok := builtinDecision(an, p.root, cwd); ok {
		return d
	}
	var ds []Decision
	quiet := len(an.Writes) == 0 && !an.Subst
	for _, part := range an.Parts {
		ds = append(ds, decidePart(rules, mode, part, quiet))
	}
	for _, w := range an.Writes {
		ds = append(ds, p.decideRedirect(rules, mode, w))
	}
	return strictest(ds)
}

func builtinDecision(an *shellAnalysis, root, cwd string) (Decision, bool) {
	for _, d := range an.Denials {
		return Decision{Action: Deny, Rule: "built-in: " + d, Reason: d + "; no mode or rule lifts this"}, true
	}
	for _, part := range an.Parts {
		if why := builtinDenial(part, root, cwd); why != "" {
			return Decision{Action: Deny, Rule: "built-in: " + why, Reason: why + "; no mode or rule lifts this"}, true
		}
	}
	return Decision{}, false
}

// decidePart judges one simple command. quiet says the line has no
// redirect or substitution, so a read-only command really only reads.
func decidePart(rules []Rule, mode string, part shellPart, quiet bool) Decision {
	ro := quiet && isReadOnly(part)
	d, ok := matchRules(rules, RunCmdToolName, "", part.text(), matchCommand)
	switch {
	case ok && (d.Action != Allow || mode != wire.PolicyReadOnly || ro):
		return d
	case ro:
		return Decision{Action: Allow, Rule: fmt.Sprintf("run_cmd `%s`: allow (read-only command)", part.name()),
			Reason: part.name() + " only reads"}
	}
	d = modeDefault(mode, "commands")
	d.Reason += " (" + part.text() + ")"
	return d
}

// decideRedirect treats a redirect or tee target as a write: confined to
// the workspace, then judged like any write.
func (p *Policy) decideRedirect(rules []Rule, mode string, w shellWrite) Decision {
	if w.Abs == "" {
		d := modeDefault(mode, "commands")
		if d.Action == Allow {
			d.Action = Ask
		}
		d.Rule = "run_cmd: write to an unresolvable path: " + string(d.Action)
		d.Reason = "the command writes to " + w.Target + ", which cannot be resolved before it runs"
		return d
	}
	_, rel, err := resolvePath(p.root, w.Abs)
	if err != nil {
		return Decision{Action: Deny, Rule: "built-in: writes outside the workspace are denied", Reason: err.Error()}
	}
	return p.decideWrite(rules, mode, RunCmdToolName, rel)
}
