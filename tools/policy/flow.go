package policy

import (
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// dirSet is where a command may run: the directories the line can have
// moved to by then (one, unless a branch moved), or unknown.
type dirSet struct {
	dirs    []string
	unknown bool
}

func known(d ...string) dirSet { return dirSet{dirs: d} }

func unknownDirs() dirSet { return dirSet{unknown: true} }

func (d dirSet) union(o dirSet) dirSet {
	if d.unknown || o.unknown {
		return unknownDirs()
	}
	out := slices.Clone(d.dirs)
	for _, x := range o.dirs {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return dirSet{dirs: out}
}

// stdinKind says what a command reading its standard input gets.
type stdinKind int

const (
	stdinNull    stdinKind = iota // nothing the line controls (/dev/null, the terminal)
	stdinText                     // a text known before the line runs
	stdinPaths                    // paths found under roots (find's output, filtered)
	stdinUnknown                  // a file or a program's output
)

type stdinSrc struct {
	kind  stdinKind
	text  string
	roots string // for stdinPaths: the roots, joined by NUL
	nul   bool   // for stdinPaths: find -print0 separates them with NUL
}

var stdinNone = stdinSrc{}

// flow is the shell's state as the analysis walks the line: working
// directory, the previous one (cd -), pushd's stack, and stdin.
type flow struct {
	cwd, old  dirSet
	stack     []dirSet
	stackLost bool
	stdin     stdinSrc
}

// sub is the flow of a subshell: it starts where fl is; nothing it does
// comes back.
func (fl *flow) sub() *flow {
	c := *fl
	c.stack = slices.Clone(fl.stack)
	return &c
}

// branch is the flow of a path that may or may not run: join it back.
func (fl *flow) branch() *flow { return fl.sub() }

func (fl *flow) withStdin(s stdinSrc) *flow {
	c := fl.sub()
	c.stdin = s
	return c
}

// adopt takes the directory state of a flow that ran in this shell (a
// command with its own stdin), keeping this flow's stdin.
func (fl *flow) adopt(o *flow) {
	in := fl.stdin
	*fl = *o
	fl.stdin = in
}

// join merges branches: the command after them may run in any directory
// one of them ended in.
func (fl *flow) join(bs ...*flow) {
	if len(bs) == 0 {
		return
	}
	cwd, old := bs[0].cwd, bs[0].old
	lost := bs[0].stackLost
	for _, b := range bs[1:] {
		cwd, old = cwd.union(b.cwd), old.union(b.old)
		lost = lost || b.stackLost || len(b.stack) != len(bs[0].stack)
	}
	fl.cwd, fl.old = cwd, old
	fl.stack, fl.stackLost = bs[0].stack, lost
}

// lose forgets where the flow is.
func (fl *flow) lose() {
	fl.cwd, fl.old, fl.stackLost = unknownDirs(), unknownDirs(), true
}

// chdir follows cd, pushd and popd.
func (a *analyzer) chdir(name string, args []word, fl *flow) {
	var opts []string
	for len(args) > 0 && args[0].lit && strings.HasPrefix(args[0].val, "-") && args[0].val != "-" {
		if args[0].val == "--" {
			args = args[1:]
			break
		}
		opts = append(opts, args[0].val)
		args = args[1:]
	}
	physicalCD := slices.Contains(opts, "-P")
	switch name {
	case "popd":
		if len(args) > 0 || len(opts) > 0 || fl.stackLost || len(fl.stack) == 0 {
			fl.lose()
			return
		}
		fl.old, fl.cwd = fl.cwd, fl.stack[len(fl.stack)-1]
		fl.stack = fl.stack[:len(fl.stack)-1]
		return
	case "pushd":
		if len(opts) > 0 || len(args) > 0 && (strings.HasPrefix(args[0].val, "+") || strings.HasPrefix(args[0].val, "-")) {
			fl.lose()
			return
		}
		if len(args) == 0 {
			if fl.stackLost || len(fl.stack) == 0 {
				fl.lose()
				return
			}
			top := fl.stack[len(fl.stack)-1]
			fl.stack[len(fl.stack)-1] = fl.cwd
			fl.old, fl.cwd = fl.cwd, top
			return
		}
		fl.stack = append(fl.stack, fl.cwd)
	}
	var next dirSet
	switch {
	case len(args) == 0:
		next = a.homeDirs()
	case args[0].lit && args[0].val == "-":
		next = fl.old
	default:
		next = a.cdTarget(args[0], fl, physicalCD)
	}
	fl.old, fl.cwd = fl.cwd, next
}

func (a *analyzer) homeDirs() dirSet {
	if a.home == "" {
		return unknownDirs()
	}
	return known(a.home)
}

// cdTarget is where cd DIR goes from each directory fl may be in.
func (a *analyzer) cdTarget(w word, fl *flow, physicalCD bool) dirSet {
	p, ok := a.expandTilde(w, fl)
	if !ok {
		return unknownDirs()
	}
	rel := !filepath.IsAbs(p)
	if rel && a.cdpath && !strings.HasPrefix(p, "./") && !strings.HasPrefix(p, "../") && p != "." && p != ".." {
		return unknownDirs()
	}
	if !rel {
		return known(a.cdResolve(p, physicalCD))
	}
	if fl.cwd.unknown {
		return unknownDirs()
	}
	var out []string
	for _, d := range fl.cwd.dirs {
		out = append(out, a.cdResolve(d+"/"+p, physicalCD))
	}
	return known(out...)
}

// cdResolve is where bash's cd ends: the logical path (.. removed
// lexically), or with -P the physical one.
func (a *analyzer) cdResolve(p string, physicalCD bool) string {
	if physicalCD {
		if r, ok := a.physical(p); ok {
			return r
		}
	}
	return filepath.Clean(p)
}

// expandTilde returns the literal value of a word with a leading ~ or
// $HOME expanded; ok is false when the value is not known before the line
// runs.
func (a *analyzer) expandTilde(w word, fl *flow) (string, bool) {
	v := w.val
	if !w.lit {
		rest, isHome := homePrefix(w)
		if !isHome || a.home == "" {
			return "", false
		}
		return a.home + rest, true
	}
	if !w.tilde {
		return v, true
	}
	name, rest, _ := strings.Cut(v[1:], "/")
	if rest != "" || strings.HasSuffix(v, "/") {
		rest = "/" + rest
	}
	switch name {
	case "":
		if a.home == "" {
			return "", false
		}
		return a.home + rest, true
	case "+", "-":
		d := fl.cwd
		if name == "-" {
			d = fl.old
		}
		if d.unknown || len(d.dirs) != 1 {
			return "", false
		}
		return d.dirs[0] + rest, true
	}
	u, err := user.Lookup(name)
	if err != nil {
		return v, true // bash leaves ~nosuchuser as written
	}
	return u.HomeDir + rest, true
}

// homePrefix recognises $HOME/… and ${HOME}/… with nothing else expanded.
func homePrefix(w word) (string, bool) {
	if len(w.params) != 1 || w.params[0] != "HOME" || w.subst || w.glob || len(w.arith) > 0 {
		return "", false
	}
	rest, ok := strings.CutPrefix(w.val, "$HOME")
	return rest, ok && (rest == "" || strings.HasPrefix(rest, "/"))
}

// paths resolves a path operand in every directory the command may run
// in, as the kernel would (symlinks followed, including links the line
// made). ok is false when it cannot be known before the line runs.
func (a *analyzer) paths(w word, cwd dirSet) ([]string, bool) {
	p, ok := a.expandTilde(w, &flow{cwd: cwd})
	if !ok || w.glob {
		return nil, false
	}
	return a.resolveIn(p, cwd)
}

func (a *analyzer) resolveIn(p string, cwd dirSet) ([]string, bool) {
	var cands []string
	switch {
	case filepath.IsAbs(p):
		cands = []string{p}
	case cwd.unknown:
		return nil, false
	default:
		for _, d := range cwd.dirs {
			cands = append(cands, d+"/"+p)
		}
	}
	var out []string
	for _, c := range cands {
		r, ok := a.physical(c)
		if !ok {
			return nil, false
		}
		out = append(out, r)
	}
	return out, true
}

// physical resolves an absolute path as the kernel would: component by
// component, following symlinks on disk and those the line makes before
// this point, .. applied to what a link resolved to. ok is false after a
// link the analysis could not follow.
func (a *analyzer) physical(p string) (string, bool) {
	if a.linksLost {
		return "", false
	}
	parts := strings.Split(p, "/")
	cur := "/"
	hops := 0
	for i := 0; i < len(parts); i++ {
		c := parts[i]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		target, isLink := a.links[next]
		if !isLink {
			if fi, err := os.Lstat(next); err == nil && fi.Mode()&os.ModeSymlink != 0 {
				if t, err := os.Readlink(next); err == nil {
					target, isLink = t, true
				}
			}
		}
		if isLink && hops < 40 {
			hops++
			rest := strings.Join(parts[i+1:], "/")
			if !filepath.IsAbs(target) {
				target = cur + "/" + target
			}
			parts = strings.Split(target+"/"+rest, "/")
			cur, i = "/", -1
			continue
		}
		cur = next
	}
	return cur, true
}

// inputOf says what a redirect feeds the command's standard input, if it
// does.
func (a *analyzer) inputOf(r *syntax.Redirect) (stdinSrc, bool) {
	if r.N != nil && r.N.Value != "0" {
		return stdinSrc{}, false
	}
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		if t, ok := heredocText(r); ok {
			return stdinSrc{kind: stdinText, text: t}, true
		}
		return stdinSrc{kind: stdinUnknown}, true
	case syntax.WordHdoc:
		if w := decodeWord(r.Word, a.src()); w.lit {
			return stdinSrc{kind: stdinText, text: w.val + "\n"}, true
		}
		return stdinSrc{kind: stdinUnknown}, true
	case syntax.RdrIn, syntax.RdrInOut, syntax.DplIn:
		if w := decodeWord(r.Word, a.src()); w.lit && (w.val == "/dev/null" || r.Op == syntax.DplIn && w.val == "-") {
			return stdinNone, true
		}
		return stdinSrc{kind: stdinUnknown}, true
	}
	return stdinSrc{}, false
}

// heredocText is a here-document's text when it has no expansion.
func heredocText(r *syntax.Redirect) (string, bool) {
	if r.Hdoc == nil {
		return "", true
	}
	quotedDelim := false
	for _, p := range r.Word.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			quotedDelim = true
		case *syntax.Lit:
			quotedDelim = quotedDelim || strings.Contains(p.Value, `\`)
		}
	}
	var b strings.Builder
	for _, p := range r.Hdoc.Parts {
		l, ok := p.(*syntax.Lit)
		if !ok {
			return "", false
		}
		if quotedDelim {
			b.WriteString(l.Value)
		} else {
			b.WriteString(unescapeDouble(l.Value))
		}
	}
	return b.String(), true
}

// pipeSource says what the right side of a pipe reads from its left
// side: echo's text, find's paths (through filters such as grep and
// sort), or something unknown.
func (a *analyzer) pipeSource(x *syntax.Stmt, in stdinSrc) stdinSrc {
	unknown := stdinSrc{kind: stdinUnknown}
	if x == nil {
		return unknown
	}
	for _, r := range x.Redirs {
		if r.N == nil || r.N.Value != "2" {
			return unknown
		}
	}
	switch c := x.Cmd.(type) {
	case *syntax.BinaryCmd:
		if c.Op != syntax.Pipe && c.Op != syntax.PipeAll {
			return unknown
		}
		return a.pipeSource(c.Y, a.pipeSource(c.X, in))
	case *syntax.CallExpr:
		if len(c.Assigns) > 0 || len(c.Args) == 0 {
			return unknown
		}
		ws := make([]word, len(c.Args))
		for i, w := range c.Args {
			ws[i] = decodeWord(w, a.src())
			if !ws[i].lit && i > 0 && ws[0].val != "find" {
				return unknown
			}
		}
		if !ws[0].lit {
			return unknown
		}
		return filterSource(ws, in)
	}
	return unknown
}

// filterSource is the output of echo, find or a line filter fed in.
func filterSource(ws []word, in stdinSrc) stdinSrc {
	unknown := stdinSrc{kind: stdinUnknown}
	args := vals(ws[1:])
	switch filepath.Base(ws[0].val) {
	case "echo":
		if len(args) > 0 && strings.HasPrefix(args[0], "-") {
			return unknown
		}
		return stdinSrc{kind: stdinText, text: strings.Join(args, " ") + "\n"}
	case "find":
		roots, _, ok := findRoots(ws[1:])
		if !ok {
			return unknown
		}
		nul := slices.ContainsFunc(ws, func(w word) bool { return w.lit && w.val == "-print0" })
		for _, r := range roots {
			if strings.HasPrefix(r.val, "-") {
				return unknown
			}
		}
		return stdinSrc{kind: stdinPaths, roots: strings.Join(vals(roots), "\x00"), nul: nul}
	case "cat", "tac", "sort", "uniq", "head", "tail":
		for _, x := range args {
			if !strings.HasPrefix(x, "-") && !isNumber(x) {
				return unknown
			}
		}
		in.nul = false
		return in
	case "grep", "egrep", "fgrep":
		operands := 0
		for _, x := range args {
			switch {
			case !strings.HasPrefix(x, "-"):
				operands++
			case strings.ContainsAny(x, "rRfedAmBC"):
				return unknown
			}
		}
		if operands != 1 {
			return unknown
		}
		in.nul = false
		return in
	}
	return unknown
}

func isNumber(s string) bool {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "+"), "-")
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func vals(ws []word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.val
	}
	return out
}

// userHome is the daemon user's home directory ("" if unknown).
func userHome() string {
	h, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Clean(h)
}

// movesDir reports whether running node may change the working directory
// of the shell it runs in: cd, pushd, popd, or a function or eval that
// could hide one.
func (a *analyzer) movesDir(n syntax.Node) bool {
	moves := false
	syntax.Walk(n, func(m syntax.Node) bool {
		switch m := m.(type) {
		case *syntax.Subshell, *syntax.CmdSubst, *syntax.ProcSubst:
			return false
		case *syntax.CallExpr:
			if len(m.Args) == 0 {
				return true
			}
			w := decodeWord(m.Args[0], a.src())
			_, defined := a.funcs[w.val]
			if !w.lit || defined ||
				slices.Contains([]string{"cd", "pushd", "popd", "eval", "source", ".", "builtin", "command"}, w.val) {
				moves = true
			}
		}
		return !moves
	})
	return moves
}
