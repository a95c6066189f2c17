package policy

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentd/agentd/tools"
)

// CommandClass is the shell analysis's verdict on a command line: what
// the policy decides on, and what picks the sandbox profile a command
// runs in. Policy.Classify returns it; Decide uses the same.
type CommandClass struct {
	// ReadOnly: every command of the line only reads. Nothing is written
	// (no redirect, no tee, no output option), no program runs that the
	// analysis cannot see into, no option or environment variable makes
	// one run, and git runs with its safe settings (Exec). Such a line may
	// run unasked, in the read profile.
	ReadOnly bool
	// Network: a command of the line is known to need the network (curl,
	// git fetch, go get, npm install …). Others may use it too.
	Network bool
	// Denied is the built-in denial the line trips, "" if none: refused in
	// every mode, whatever the rules.
	Denied string
	// Unchecked says what hides the line from the built-in denials (a
	// program name in a variable, a shell reading its script from a pipe,
	// rm of "$X", arithmetic on a value that may hold code): such a line
	// asks in every mode, full-auto included, and is refused in read-only;
	// no wildcard rule allows it.
	Unchecked []string
	// Why says why the line is not read-only (empty when it is).
	Why []string
	// Exec is the line to run instead of the one written, when the policy
	// rewrote it: git's safe settings exported, --no-ext-diff
	// --no-textconv after git's diff commands. Set for read-only lines; ""
	// means run the line as written.
	Exec string
	// ParseErr is set when the line is not valid bash: it asks (read-only:
	// refused).
	ParseErr error
	// Git: the line runs git alone, with subcommands that change the
	// repository through git's own code (gitwrite.go); Exec runs it with
	// git's safe settings, and in workspace-write it may write the git
	// directory's objects, refs and index (Confine.Git).
	Git bool
}

// Classify judges a command line without deciding: see CommandClass.
//
// The analysis (analyzeCommand, analysis.go) parses the line and walks it
// (shell.go) as bash would run it, following the working directory and
// stdin (flow.go), the values of variables (words.go, eval.go); each simple
// command it meets is recorded and judged by addPart (parts.go). classOf
// then sums the parts up.
func (p *Policy) Classify(c *tools.Command) CommandClass {
	return classOf(p.analyze(c))
}

func (p *Policy) analyze(c *tools.Command) *shellAnalysis {
	cwd := filepath.Join(p.root, filepath.FromSlash(c.Cwd))
	return analyzeCommandTrusting(c.Line, p.root, cwd, p.gitTrust, p.private)
}

func classOf(an *shellAnalysis) CommandClass {
	cls := CommandClass{ParseErr: an.ParseErr}
	if an.ParseErr != nil {
		cls.Why = []string{"the line does not parse"}
		return cls
	}
	if len(an.Denials) > 0 {
		cls.Denied = an.Denials[0]
	}
	cls.Unchecked = an.unchecked()
	cls.Why = slices.Clone(an.NotRO)
	cls.Network = an.Network
	for _, w := range an.Writes {
		cls.Why = append(cls.Why, "it writes "+w.Target)
	}
	for _, p := range an.Parts {
		cls.Network = cls.Network || p.network
		if p.why != "" {
			cls.Why = append(cls.Why, p.why)
		}
	}
	cls.Why = dedupe(cls.Why)
	cls.Unchecked = dedupe(cls.Unchecked)
	cls.ReadOnly = cls.Denied == "" && len(cls.Unchecked) == 0 && len(cls.Why) == 0
	cls.Git = gitOnly(an)
	switch {
	case cls.ReadOnly:
		cls.Exec = safeExec(an)
	case cls.Git:
		cls.Exec = gitWriteExec(an)
	}
	return cls
}

// unchecked gathers what hides the line and its parts from the built-in
// denials.
func (an *shellAnalysis) unchecked() []string {
	out := slices.Clone(an.Unchecked)
	for _, p := range an.Parts {
		if p.unchecked != "" {
			out = append(out, p.unchecked)
		}
	}
	return out
}

// safeExec is a read-only line as it must run: git's safe settings
// exported first, git's diff commands given --no-ext-diff --no-textconv.
func safeExec(an *shellAnalysis) string { return execWith(an, gitSafeEnv()) }

// execWith is the line with git's safe options inserted, env exported
// before it.
func execWith(an *shellAnalysis, env []string) string {
	var ins []insertion
	for _, p := range an.Parts {
		if p.gitSafe != nil && !slices.Contains(ins, *p.gitSafe) {
			ins = append(ins, *p.gitSafe)
		}
	}
	slices.SortFunc(ins, func(a, b insertion) int { return b.at - a.at })
	line := an.src
	for _, in := range ins {
		line = line[:in.at] + in.text + line[in.at:]
	}
	for i, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		env[i] = k + "=" + quoteWord(v)
	}
	return "export " + strings.Join(env, " ") + "; " + line
}

// decideCommand checks every part of a command line: built-in denials
// first, then what cannot be checked, then each simple command and each
// file it writes; then how it runs (confine: the profile, the network,
// secrets). Deciding also sets c.Command.Exec: the line the process runs.
func (p *Policy) decideCommand(rules []Rule, mode tools.Mode, c *tools.Call) Verdict {
	an := p.analyze(c.Command)
	cls := classOf(an)
	c.Command.Exec = cls.Exec
	return p.confine(rules, mode, c, an, cls, p.judgeLine(rules, mode, an, cls))
}

// judgeLine is the verdict on what the line does, before how it runs
// (confine) is added.
func (p *Policy) judgeLine(rules []Rule, mode tools.Mode, an *shellAnalysis, cls CommandClass) Verdict {
	if an.ParseErr != nil {
		d := Verdict{Action: Ask, Rule: "run_cmd: unparsable command: ask", Reason: "the command could not be parsed (" + an.ParseErr.Error() + "), so it cannot be checked"}
		if mode == tools.ModeReadOnly {
			d.Action, d.Rule = Deny, "mode read-only: unparsable command: deny"
		}
		return d
	}
	if cls.Denied != "" {
		return Verdict{Action: Deny, Rule: "built-in: " + cls.Denied, Reason: cls.Denied + "; no mode or rule lifts this"}
	}
	var ds []Verdict
	quiet := len(an.Writes) == 0 && len(an.NotRO) == 0
	for _, part := range an.Parts {
		ds = append(ds, decidePart(rules, mode, part, quiet))
	}
	for _, w := range an.Writes {
		ds = append(ds, p.decideRedirect(rules, mode, w))
	}
	if len(an.NotRO) > 0 { // what no part carries: `export -p`, `PATH=x` alone
		d := modeDefault(mode, tools.EffectExecute)
		d.Reason += " (" + an.NotRO[0] + ")"
		ds = append(ds, d)
	}
	d := strictest(ds)
	if len(cls.Unchecked) > 0 && d.Action != Deny {
		d = Verdict{Action: Ask, Rule: "run_cmd: cannot be checked against the built-in denials: ask",
			Reason: cls.Unchecked[0] + ", so it asks in every mode"}
		if mode == tools.ModeReadOnly {
			d.Action, d.Rule = Deny, "mode read-only: a command that cannot be checked: deny"
		}
		return d
	}
	if d.Action == Ask {
		d.Rule += grantNote(p.grantRules(rules, an, Allow, ScopeSession))
	}
	return d
}

// decidePart judges one simple command. quiet says the line writes
// nothing, so a read-only command really only reads.
func decidePart(rules []Rule, mode tools.Mode, part shellPart, quiet bool) Verdict {
	ro := quiet && part.why == "" && !part.Dynamic
	d, ok := matchPart(rules, part)
	switch {
	case ok && (d.Action != Allow || mode != tools.ModeReadOnly || ro):
		return d
	case ro:
		return Verdict{Action: Allow, Rule: fmt.Sprintf("run_cmd `%s`: allow (read-only command)", part.name()),
			Reason: part.name() + " only reads"}
	}
	d = modeDefault(mode, tools.EffectExecute)
	d.Reason += " (" + part.fullText() + ")"
	return d
}

// matchPart returns the strictest rule matching a part. A deny or ask
// rule matches the command with or without its environment; an allow
// rule with a wildcard never covers a part with an option or variable
// that runs programs (part.risky): only an exact rule does.
func matchPart(rules []Rule, part shellPart) (Verdict, bool) {
	return matchPartBy(rules, part, func(tool string) bool { return toolMatches(tool, tools.RunCmdToolName, "") })
}

// matchPartBy is matchPart over the rules whose tool ok accepts (network
// rules are command patterns too).
func matchPartBy(rules []Rule, part shellPart, ok func(tool string) bool) (Verdict, bool) {
	full, text := part.fullText(), part.text()
	return strictestRule(rules, full, func(r *Rule) bool {
		switch {
		case !ok(r.Tool):
			return false
		case r.Action != Allow:
			return matchCommand(r.Pattern, full) || matchCommand(r.Pattern, text)
		case part.risky != "":
			return !hasWildcard(r.Pattern) && matchCommand(r.Pattern, full)
		}
		return matchCommand(r.Pattern, full) || matchCommand(r.Pattern, text)
	})
}

// hasWildcard reports whether a command pattern matches more than one
// text: an unescaped * or ?, or the empty pattern.
func hasWildcard(pattern string) bool {
	if pattern == "" {
		return true
	}
	for i := 0; i < len(pattern); i++ {
		switch pattern[i] {
		case '\\':
			i++
		case '*', '?':
			return true
		}
	}
	return false
}

// decideRedirect treats a redirect or tee target as a write: confined to
// the workspace, then judged like any write.
func (p *Policy) decideRedirect(rules []Rule, mode tools.Mode, w shellWrite) Verdict {
	if w.Abs == "" {
		d := modeDefault(mode, tools.EffectExecute)
		if d.Action == Allow {
			d.Action = Ask
		}
		d.Rule = "run_cmd: write to an unresolvable path: " + string(d.Action)
		d.Reason = "the command writes to " + w.Target + ", which cannot be resolved before it runs"
		return d
	}
	for _, d := range p.private {
		if tools.Within(d, w.Abs) {
			return Verdict{Action: Deny, Rule: "built-in: agentd's own state and configuration are never written",
				Reason: "the command writes " + w.Target + ", inside " + d + " (sessions, transcripts, rules)"}
		}
	}
	_, rel, err := tools.ResolvePath(p.root, w.Abs)
	if err != nil {
		return Verdict{Action: Deny, Rule: "built-in: writes outside the workspace are denied", Reason: err.Error()}
	}
	return p.decideWrite(rules, mode, tools.RunCmdToolName, rel)
}

// dedupe keeps the first of each string, in order.
func dedupe(xs []string) []string {
	var out []string
	for _, x := range xs {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}
