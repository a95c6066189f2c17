package policy

import (
	"fmt"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// shellPart is one simple command of a command line, after wrappers such
// as `timeout 5` or `env X=1` are peeled off, with the analysis's
// judgement of it.
type shellPart struct {
	Words   []string // values after quote removal; expansions as written ($X, $(…))
	words   []word
	assigns []assignment // environment the command gets from the line (X=1 cmd, env X=1 cmd)
	// Dynamic: the program name is not known before the line runs.
	Dynamic bool
	// why says why the part is not read-only; "" means it only reads.
	why string
	// network: the part is known to need the network.
	network bool
	// risky names an option or assignment that runs programs or writes
	// files: a rule with a wildcard does not cover the part.
	risky string
	// unchecked says what hides the part from the built-in denials.
	unchecked string
	// appended: xargs adds arguments from its input.
	appended bool
	// gitSafe is where git's safe options go in the line, for a read-only
	// git part written in the line itself.
	gitSafe *insertion
}

// text is the part as rule patterns see it: its words, quoted where the
// shell needs it, without the environment.
func (s shellPart) text() string {
	ts := make([]string, len(s.words))
	for i, w := range s.words {
		ts[i] = w.text
		if ts[i] == "" {
			ts[i] = w.val
		}
	}
	return strings.Join(ts, " ")
}

// fullText is text with the environment the line gives the command.
func (s shellPart) fullText() string {
	var ts []string
	for _, a := range s.assigns {
		ts = append(ts, a.name+"="+a.value.text)
	}
	if t := s.text(); t != "" {
		ts = append(ts, t)
	}
	return strings.Join(ts, " ")
}

func (s shellPart) name() string {
	if len(s.Words) == 0 {
		return ""
	}
	return filepath.Base(s.Words[0])
}

// assignment is NAME=value given to a command or to the shell.
type assignment struct {
	name  string
	value word
}

// shellWrite is a file a command line writes (a redirect, tee, sort -o,
// cp's destination …).
type shellWrite struct {
	Target string // as written
	Abs    string // resolved as the kernel would; "" if unknown
}

// insertion is text to insert into the line at a byte offset.
type insertion struct {
	at   int
	text string
}

// shellAnalysis is what the policy needs to know about a command line.
type shellAnalysis struct {
	Parts   []shellPart
	Writes  []shellWrite
	Denials []string // built-in denials found
	// NotRO lists why the line is not read-only for reasons that belong to
	// no single part (an assignment to PATH, a function definition …).
	NotRO []string
	// Unchecked lists what hides the line from the built-in denials.
	Unchecked []string
	// Network: the line opens a connection itself (bash's /dev/tcp).
	Network  bool
	ParseErr error
	src      string
}

// Limits on the work one line may cause: nested strings parsed as code,
// functions expanded at their calls, parts collected.
const (
	maxShellDepth = 6
	maxInline     = 64
	maxParts      = 2000
)

// analyzer walks a parsed command line: it follows the working directory
// through cd, pushd and the subshells that undo them, tracks where stdin
// comes from, which variables may hold code, which links the line makes,
// and which functions call which.
type analyzer struct {
	root string
	home string // "" when the line reassigns HOME
	// trust says which git configuration predates the session (nil
	// skips the check).
	trust   *gitTrustBase
	private []string // agentd's own directories: reading them is not read-only
	out     *shellAnalysis

	funcs    map[string]funcDef
	calls    map[string]map[string]bool // function → names it calls
	curFunc  []string
	inlining map[string]bool
	inlined  int

	vars       *varTaint
	links      map[string]string // links the line makes: path → what it points to
	linksLost  bool              // the line makes a link we cannot follow
	cdpath     bool              // the line sets CDPATH
	backquotes int               // depth of `…` being analysed
	srcs       []string          // sources being parsed, innermost last
	fixedDepth int               // how many expansions of the line this one is (fixed.go)
	downloaded map[string]bool   // files the line fills with a download (denials.go)
}

// analyzeCommand parses line with a real shell parser and collects every
// simple command of pipes, lists, subshells, substitutions and the strings
// the line runs as code, the files it writes and the built-in denials it
// trips. root and cwd are absolute.
func analyzeCommand(line, root, cwd string) *shellAnalysis {
	return analyzeCommandTrusting(line, root, cwd, nil, nil)
}

// trust is what the policy knew of the repositories when it loaded (nil
// skips the check); private are agentd's own directories.
func analyzeCommandTrusting(line, root, cwd string, trust *gitTrustBase, private []string) *shellAnalysis {
	a := &analyzer{
		root: root, home: userHome(), trust: trust, private: private, out: &shellAnalysis{src: line},
		funcs: map[string]funcDef{}, calls: map[string]map[string]bool{}, inlining: map[string]bool{},
		vars: newVarTaint(), links: map[string]string{},
	}
	f, err := parseShell(line)
	if err != nil {
		a.out.ParseErr = err
		return a.out
	}
	if n := countNodes(f); n > maxShellNodes {
		// The analysis costs more than linear time in the number of
		// commands: `echo a | ` 4000 times took 26 s of a core, 50 000
		// times more than minutes, in the run's goroutine. A line that
		// large is not judged: it asks in every mode, and read-only
		// refuses it.
		a.unchecked(fmt.Sprintf("the line has %d words and commands, more than the %d the policy checks: put it in a script file", n, maxShellNodes))
		return a.out
	}
	a.vars.collect(f)
	fl := &flow{cwd: known(filepath.Clean(cwd)), old: unknownDirs()}
	start := fl.sub()
	a.srcs = append(a.srcs, line)
	a.stmts(f.Stmts, fl)
	a.forkBombs()
	a.fixedDenials(f, line, start)
	return a.out
}

// maxShellNodes bounds the commands and words of a line the analysis
// judges; a here-document's body is one word, however long.
const maxShellNodes = 2000

// countNodes counts a parsed line's commands and words.
func countNodes(f *syntax.File) int {
	n := 0
	syntax.Walk(f, func(node syntax.Node) bool {
		switch node.(type) {
		case *syntax.CallExpr, *syntax.BinaryCmd, *syntax.Word, *syntax.Subshell, *syntax.CmdSubst, *syntax.ArithmExp:
			n++
		}
		return true
	})
	return n
}

func parseShell(s string) (*syntax.File, error) {
	return syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(s), "")
}

func (a *analyzer) src() string { return a.srcs[len(a.srcs)-1] }

// funcDef is a function the line defines, with the source its body's
// positions refer to.
type funcDef struct {
	body *syntax.Stmt
	src  string
}

func (a *analyzer) deny(why string) { a.out.Denials = append(a.out.Denials, why) }

func (a *analyzer) notRO(why string) { a.out.NotRO = append(a.out.NotRO, why) }

func (a *analyzer) unchecked(why string) { a.out.Unchecked = append(a.out.Unchecked, why) }

// script analyses a string the line runs as shell code (sh -c, eval,
// trap, a here-document fed to a shell). The code runs with fl's working
// directory; its cd does not leak out unless the caller passes its own
// flow (eval, source).
func (a *analyzer) script(code string, fl *flow, what string) {
	if a.nested() >= maxShellDepth {
		a.unchecked(what + " nests code too deeply to check")
		return
	}
	f, err := parseShell(code)
	if err != nil {
		a.unchecked(fmt.Sprintf("%s is not shell code that can be checked (%v)", what, err))
		return
	}
	a.vars.collect(f)
	start := fl.sub()
	a.within(code, func() {
		a.stmts(f.Stmts, fl)
		a.fixedDenials(f, code, start)
	})
}

// within runs f with src as the source being analysed (word positions
// refer to it).
func (a *analyzer) within(src string, f func()) {
	a.srcs = append(a.srcs, src)
	f()
	a.srcs = a.srcs[:len(a.srcs)-1]
}

// nested is how deep in strings run as code the analysis is: 0 for the
// line itself.
func (a *analyzer) nested() int { return len(a.srcs) - 1 }
