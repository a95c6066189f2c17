package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/agentd/agentd/tools"
)

// Rule scopes, weakest to strongest in trust. Scope only labels a rule:
// the strictest matching rule wins whatever its scope, so no scope can lift
// another's deny.
const (
	ScopeBuiltin   = "built-in"
	ScopeUser      = "user"
	ScopeWorkspace = "workspace"
	ScopeGrant     = "workspace grant"
	ScopeSession   = "session"
)

// Rule maps a tool and a pattern to an action. Tool is a tool name,
// "write" (any file write, redirects included), "read" (any read) or "*".
// Pattern is a command glob for run_cmd (`go test *`: * matches anything,
// a trailing " *" also matches nothing) and a path glob for files (** spans
// directories); empty or "*" matches everything.
type Rule struct {
	Tool    string `json:"tool"`
	Pattern string `json:"pattern,omitempty"`
	Action  Action `json:"action"`
	Scope   string `json:"-"`
}

// String is how decisions name the rule.
func (r Rule) String() string {
	return fmt.Sprintf("%s `%s`: %s (%s rule)", r.Tool, r.patternOrAll(), r.Action, r.Scope)
}

func (r Rule) patternOrAll() string {
	if r.Pattern == "" {
		return "*"
	}
	return r.Pattern
}

type ruleFile struct {
	Rules []Rule `json:"rules"`
}

// builtinRules protect what the agent must not rewrite through its file
// tools and redirects: every repository's git directory (the workspace's
// and any nested one, whose configuration can make git run a program) and
// its own permissions, at any depth and, for case-insensitive file
// systems, in any case.
func builtinRules() []Rule {
	var rs []Rule
	for _, p := range []string{"**/.git/**", "**/.agentd/**", "**/.[gG][iI][tT]/**", "**/.[aA][gG][eE][nN][tT][dD]/**"} {
		rs = append(rs, Rule{Tool: "write", Pattern: p, Action: Deny, Scope: ScopeBuiltin})
	}
	return rs
}

// maxRulesFile bounds a rules file: far more rules than anyone writes.
const maxRulesFile = 8 << 20

func loadRules(path, scope string) ([]Rule, error) {
	// The workspace's file may be whatever a command left there (a named
	// pipe would hang the daemon's start): only a regular file is read.
	b, err := tools.ReadRegularFile(path, maxRulesFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading rules: %w", err)
	}
	var f ruleFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	for i := range f.Rules {
		r := &f.Rules[i]
		if r.Tool == "" || (r.Action != Allow && r.Action != Ask && r.Action != Deny) {
			return nil, fmt.Errorf("%s: rule %d needs a tool and an action of allow, ask or deny", path, i+1)
		}
		if err := tools.CheckGlob(r.Pattern); err != nil {
			// A deny that matched only its first alternatives would let
			// the rest through: refused whole, as a malformed file is.
			return nil, fmt.Errorf("%s: rule %d: %w", path, i+1, err)
		}
		r.Scope = scope
	}
	return f.Rules, nil
}

// saveRules writes rules through a temp file and a rename, so a crash never
// leaves a half-written file that would fail to load.
func saveRules(path string, rules []Rule) error {
	b, err := json.MarshalIndent(ruleFile{Rules: rules}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("saving rules: %w", err)
	}
	if err := tools.WriteAtomic(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("saving rules: %w", err)
	}
	return nil
}

// toolMatches says whether a rule for ruleTool covers a call of tool in
// class ("read", "write" or "" for commands). A rule's tool may end in *
// to cover every tool with that prefix: mcp__github__* is every tool of
// the MCP server github.
func toolMatches(ruleTool, tool, class string) bool {
	if prefix, ok := strings.CutSuffix(ruleTool, "*"); ok && prefix != "" && strings.HasPrefix(tool, prefix) {
		return true
	}
	return ruleTool == "*" || ruleTool == tool || (class != "" && ruleTool == class)
}

// matchRules returns the strictest rule matching subject.
func matchRules(rules []Rule, tool, class, subject string, match func(pattern, subject string) bool) (Verdict, bool) {
	return strictestRule(rules, subject, func(r *Rule) bool {
		return toolMatches(r.Tool, tool, class) && match(r.Pattern, subject)
	})
}

// strictestRule returns the first of the most severe rules that ok
// accepts, as a verdict about subject.
func strictestRule(rules []Rule, subject string, ok func(r *Rule) bool) (Verdict, bool) {
	var best *Rule
	for i := range rules {
		r := &rules[i]
		if ok(r) && (best == nil || r.Action.severity() > best.Action.severity()) {
			best = r
		}
	}
	if best == nil {
		return Verdict{}, false
	}
	return Verdict{Action: best.Action, Rule: best.String(), Reason: fmt.Sprintf("%s matches %s", subject, best.patternOrAll())}, true
}

// matchPath matches a workspace-relative path. A pattern without / matches
// the file name at any depth (`*.env`); ./ anchors it at the root.
func matchPath(pattern, path string) bool {
	if pattern == "" || pattern == "*" || pattern == "**" {
		return true
	}
	if !strings.Contains(pattern, "/") {
		return tools.MatchGlob("**/"+pattern, path)
	}
	return tools.MatchGlob(strings.TrimPrefix(pattern, "./"), path)
}

// pathRule is the pattern a grant stores for exactly one path.
func pathRule(rel string) string {
	p := escapeGlob(rel)
	if !strings.Contains(p, "/") {
		p = "./" + p
	}
	return p
}

// matchCommand matches a command glob: * is any text, ? one character, \
// escapes; a trailing " *" is optional so `go test *` covers `go test`.
func matchCommand(pattern, cmd string) bool {
	if pattern == "" || pattern == "*" {
		return true
	}
	var b strings.Builder
	b.WriteString("^")
	optionalTail := strings.HasSuffix(pattern, " *") && !strings.HasSuffix(pattern, `\ *`)
	if optionalTail {
		pattern = strings.TrimSuffix(pattern, " *")
	}
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; c {
		case '\\':
			if i+1 < len(pattern) {
				i++
				b.WriteString(regexp.QuoteMeta(pattern[i : i+1]))
			}
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	if optionalTail {
		b.WriteString("( .*)?")
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	return err == nil && re.MatchString(cmd)
}
