package policy

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentd/agentd/tools"
)

// A user who answers "Yes, for this session" to `go test -run X .` means
// go test, not that one line: `go test ./...`, `go test -count=1 ./...`
// and `-run Y -v` should not ask again (issue 24). For the commands below
// an allow grant stores the command with any arguments (`go test *`),
// which matchPart never lets cover a part with an option that runs
// another program or names a file to write (riskyOptions: go test -exec,
// -toolexec, -vettool, -ldflags, -o …; pytest -p; cargo --config), an
// argument not known before the line runs (which may be one), or an
// environment variable that can change what runs (GOFLAGS, RUSTC_WRAPPER):
// those still ask, and a grant of one stores it exactly. Arguments to the
// code under test (go test's -args, a script's) are the same program's
// input. A family is one subcommand: `go test` never covers `go run`,
// `npm run build` never `npm run deploy`; make, whose targets and
// variables are any command, has none.
var grantFamilies = [][]string{
	{"go", "test"}, {"go", "build"}, {"go", "vet"},
	{"cargo", "test"}, {"cargo", "build"}, {"cargo", "check"}, {"cargo", "clippy"},
	{"pytest"}, {"python", "-m", "pytest"}, {"python3", "-m", "pytest"},
	{"npm", "test"}, {"npm", "t"}, {"pnpm", "test"}, {"yarn", "test"}, {"bun", "test"},
	{"npm", "run", anyWord}, {"pnpm", "run", anyWord}, {"yarn", "run", anyWord},
}

// anyWord in a family stands for one literal word kept in the pattern:
// the script of `npm run SCRIPT`.
const anyWord = "\x00"

// familyPattern is the pattern an allow grant stores for a part of a
// family: its program and subcommand, then " *". ok is false for a part
// that is not in one, or that has what the family never covers.
func familyPattern(part shellPart) (string, bool) {
	if part.Dynamic || part.risky != "" || part.unchecked != "" || part.appended {
		return "", false
	}
	for _, f := range grantFamilies {
		if len(part.words) < len(f) {
			continue
		}
		var kept []string
		for i, w := range f {
			pw := part.words[i]
			if !pw.lit || (w != anyWord && pw.val != w) || i == 0 && filepath.Base(pw.val) != pw.val {
				kept = nil
				break
			}
			kept = append(kept, pw.text)
		}
		if kept != nil {
			return escapeGlob(strings.Join(kept, " ")) + " *", true
		}
	}
	return "", false
}

// describeRule says, for the user, what a rule an answer stores would
// allow from then on.
func describeRule(r Rule) string {
	switch {
	case r.Tool == "write":
		return "writing " + strings.TrimPrefix(unescapeGlob(r.Pattern), "./")
	case r.Tool == NetworkRuleTool:
		return "the network for `" + unescapeGlob(r.Pattern) + "`"
	case r.Tool != tools.RunCmdToolName:
		if r.Pattern == "" || r.Pattern == "*" {
			return "every call of " + r.Tool
		}
		return r.Tool + " for " + r.Pattern
	}
	cmd, family := strings.CutSuffix(r.Pattern, " *")
	if !family || !hasWildcard(r.Pattern) || hasWildcard(cmd) {
		return "`" + unescapeGlob(r.Pattern) + "` exactly"
	}
	cmd = unescapeGlob(cmd)
	prog := strings.Fields(cmd)[0]
	if strings.Contains(cmd, "-m pytest") {
		prog = "pytest"
	}
	never := "options that run another program or name a file to write"
	if opts := slices.DeleteFunc(slices.Clone(riskyOptions()[prog]), func(o string) bool { return o == "" }); len(opts) > 0 {
		never += " (" + strings.Join(opts, ", ") + ")"
	}
	return "`" + cmd + "` with any arguments, except " + never +
		", arguments not known before the line runs, and environment variables that change what runs"
}

func unescapeGlob(s string) string {
	return strings.NewReplacer(`\\`, `\`, `\*`, `*`, `\?`, `?`).Replace(s)
}

// Covers says what "allow for this session" and "always allow" would
// allow from then on, for a call that asks: one entry per rule the answer
// would store, in words a user can check (the confirmation shows them).
func (p *Policy) Covers(sessionID string, c *tools.Call) []string {
	rules, err := p.deriveRules(sessionID, c, Allow, ScopeSession)
	if err != nil {
		return nil
	}
	if c.Command != nil {
		if an := p.analyze(c.Command); an.ParseErr == nil && len(an.Denials) == 0 {
			rules = append(rules, p.networkGrantRules(p.rules(sessionID), an, c.Command.Network, ScopeSession)...)
		}
	}
	out := make([]string, 0, len(rules))
	for _, r := range rules {
		out = append(out, describeRule(r))
	}
	return out
}
