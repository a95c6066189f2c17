package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// shellPart is one simple command of a command line, after wrappers such
// as `timeout 5` or `env X=1` are peeled off.
type shellPart struct {
	Words   []string // rendered words; expansions appear as written ($X, $(…))
	Dynamic bool     // the program name is not a literal
}

func (s shellPart) text() string { return strings.Join(s.Words, " ") }

func (s shellPart) name() string {
	if len(s.Words) == 0 {
		return ""
	}
	return filepath.Base(s.Words[0])
}

// shellWrite is a file a command line writes through a redirect or tee.
type shellWrite struct {
	Target string // as written
	Abs    string // resolved against the working directory; "" if unknown
}

// shellAnalysis is what the policy needs to know about a command line.
type shellAnalysis struct {
	Parts    []shellPart
	Writes   []shellWrite
	Subst    bool     // $(…), `…`, <(…) somewhere
	Denials  []string // built-in denials found
	ParseErr error
}

// analyzer walks a parsed command line, tracking cd so that redirect
// targets resolve where the shell would put them.
type analyzer struct {
	root, cwd string
	cwdKnown  bool
	depth     int
	out       *shellAnalysis
}

// analyzeCommand parses line with a real shell parser and collects every
// simple command of pipes, lists, subshells and substitutions, the files
// it writes and the built-in denials it trips. root and cwd are absolute.
func analyzeCommand(line, root, cwd string) *shellAnalysis {
	a := &analyzer{root: root, cwd: cwd, cwdKnown: true, out: &shellAnalysis{}}
	a.parse(line)
	return a.out
}

func (a *analyzer) parse(line string) {
	if a.depth > 4 {
		a.out.Denials = append(a.out.Denials, "shell nested too deeply to check")
		return
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		if a.out.ParseErr == nil {
			a.out.ParseErr = err
		}
		return
	}
	syntax.Walk(f, a.visit)
}

func (a *analyzer) visit(n syntax.Node) bool {
	switch n := n.(type) {
	case *syntax.CallExpr:
		a.call(n)
	case *syntax.Redirect:
		a.redirect(n)
	case *syntax.CmdSubst, *syntax.ProcSubst:
		a.out.Subst = true
	case *syntax.FuncDecl:
		if n.Name != nil && callsItself(n.Name.Value, n.Body) {
			a.out.Denials = append(a.out.Denials, fmt.Sprintf("function %q calls itself (a fork bomb)", n.Name.Value))
		}
	case *syntax.BinaryCmd:
		if (n.Op == syntax.Pipe || n.Op == syntax.PipeAll) && downloads(n.X) && isShellStmt(n.Y) {
			a.out.Denials = append(a.out.Denials, "piping a download into a shell")
		}
	}
	return true
}

func (a *analyzer) call(c *syntax.CallExpr) {
	if len(c.Args) == 0 {
		return
	}
	words := make([]string, len(c.Args))
	lit := make([]bool, len(c.Args))
	for i, w := range c.Args {
		words[i], lit[i] = renderWord(w)
	}
	if isShellName(filepath.Base(words[0])) || words[0] == "eval" || words[0] == "source" || words[0] == "." {
		for _, w := range c.Args[1:] {
			if downloads(w) {
				a.out.Denials = append(a.out.Denials, "running a download with a shell")
			}
		}
	}
	a.addPart(words, !lit[0])
}

// addPart records a simple command, then what it runs inside it: the
// string of sh -c and eval, the command after a wrapper, find -exec's.
func (a *analyzer) addPart(words []string, dynamic bool) {
	if len(words) == 0 {
		return
	}
	a.out.Parts = append(a.out.Parts, shellPart{Words: words, Dynamic: dynamic})
	name := filepath.Base(words[0])
	switch {
	case name == "cd" || name == "pushd":
		a.chdir(words[1:])
	case name == "tee":
		for _, w := range words[1:] {
			if !strings.HasPrefix(w, "-") {
				a.write(w)
			}
		}
	case shScripts[name] || name == "eval":
		if s, ok := inlineScript(words); ok {
			a.depth++
			a.parse(s)
			a.depth--
		}
	}
	if inner := unwrap(words); len(inner) > 0 {
		a.addPart(inner, strings.HasPrefix(inner[0], "$"))
	}
	for _, inner := range findExecs(words) {
		a.addPart(inner, false)
	}
}

// shScripts are the shells whose -c string is shell code we can check.
var shScripts = setOf("sh", "bash", "zsh", "dash", "ksh", "mksh", "busybox")

// inlineScript is the script of `sh -c SCRIPT` or `eval ARGS`.
func inlineScript(words []string) (string, bool) {
	if filepath.Base(words[0]) == "eval" {
		return strings.Join(words[1:], " "), len(words) > 1
	}
	for i, w := range words[1:] {
		if strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") && strings.Contains(w, "c") && i+2 < len(words) {
			return words[i+2], true
		}
	}
	return "", false
}

func (a *analyzer) chdir(args []string) {
	if len(args) == 0 || strings.ContainsAny(args[0], "$`") || args[0] == "-" {
		a.cwdKnown = false
		return
	}
	a.cwd = expandPath(args[0], a.cwd)
}

func (a *analyzer) redirect(r *syntax.Redirect) {
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.RdrClob, syntax.RdrInOut:
	case syntax.DplOut:
		if t, _ := renderWord(r.Word); isFD(t) {
			return
		}
	default:
		return
	}
	t, _ := renderWord(r.Word)
	a.write(t)
}

func isFD(s string) bool {
	if s == "-" {
		return true
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// write records a file the command line writes. Harmless device files are
// not writes; block devices are a built-in denial.
func (a *analyzer) write(target string) {
	switch {
	case target == "/dev/null" || target == "/dev/stdout" || target == "/dev/stderr" || target == "/dev/tty" ||
		strings.HasPrefix(target, "/dev/fd/"):
		return
	case strings.HasPrefix(target, "/dev/"):
		a.out.Denials = append(a.out.Denials, "writing to the device "+target)
		return
	}
	w := shellWrite{Target: target}
	if a.cwdKnown && !strings.ContainsAny(target, "$`*?[") {
		w.Abs = expandPath(target, a.cwd)
	}
	a.out.Writes = append(a.out.Writes, w)
}

// expandPath resolves p as the shell would: ~ and $HOME to the home
// directory, relative paths against cwd.
func expandPath(p, cwd string) string {
	home, _ := os.UserHomeDir()
	for _, pre := range []string{"~", "$HOME", "${HOME}"} {
		if p == pre || strings.HasPrefix(p, pre+"/") {
			p = home + p[len(pre):]
			break
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	return filepath.Clean(p)
}

// renderWord prints a word as the model wrote it, quotes removed, and says
// whether it is a plain literal (no expansion).
func renderWord(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", true
	}
	var b strings.Builder
	lit := true
	var part func(p syntax.WordPart)
	part = func(p syntax.WordPart) {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				part(q)
			}
		case *syntax.ParamExp:
			lit = false
			if p.Param != nil {
				b.WriteString("$" + p.Param.Value)
			} else {
				b.WriteString("$?")
			}
		case *syntax.CmdSubst:
			lit = false
			b.WriteString("$(…)")
		case *syntax.ProcSubst:
			lit = false
			b.WriteString("<(…)")
		default:
			lit = false
			b.WriteString("$…")
		}
	}
	for _, p := range w.Parts {
		part(p)
	}
	return b.String(), lit
}

// callsItself reports whether a function body calls the function: the
// shape of a fork bomb.
func callsItself(name string, body *syntax.Stmt) bool {
	found := false
	syntax.Walk(body, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) > 0 {
			if s, _ := renderWord(c.Args[0]); s == name {
				found = true
			}
		}
		return !found
	})
	return found
}

// downloads reports whether node runs a downloader (curl, wget, …).
func downloads(node syntax.Node) bool {
	found := false
	syntax.Walk(node, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) > 0 {
			if s, _ := renderWord(c.Args[0]); downloaders[filepath.Base(s)] {
				found = true
			}
		}
		return !found
	})
	return found
}

// isShellStmt reports whether a pipeline stage's first command is a shell
// or interpreter (possibly behind sudo or env).
func isShellStmt(st *syntax.Stmt) bool {
	found := false
	syntax.Walk(st, func(n syntax.Node) bool {
		c, ok := n.(*syntax.CallExpr)
		if !ok || len(c.Args) == 0 || found {
			return !found
		}
		words := make([]string, len(c.Args))
		for i, w := range c.Args {
			words[i], _ = renderWord(w)
		}
		for len(words) > 0 {
			if isShellName(filepath.Base(words[0])) {
				found = true
				break
			}
			words = unwrap(words)
		}
		return false
	})
	return found
}
