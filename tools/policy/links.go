package policy

import (
	"os"
	"path/filepath"
	"strings"
)

// The links a line makes (ln), followed so that a later write through one is
// resolved where it really goes.

// link records the links `ln` makes, so a later write through one is
// resolved where it really goes; a link it cannot follow makes every later
// path unknown.
func (a *analyzer) link(args []word, fl *flow) {
	ln, ok := parseLn(args)
	if !ok {
		a.linksLost = true
		return
	}
	for _, pr := range a.linkPairs(ln, fl) {
		a.write(pr[1], fl)
		if !a.recordLink(pr[0], pr[1], ln.symbolic, fl) {
			a.linksLost = true
			return
		}
	}
}

// lnArgs are ln's arguments as it reads them.
type lnArgs struct {
	symbolic bool
	dir      *word  // -t DIR
	ops      []word // targets, then the link name unless -t
}

// parseLn reads ln's options; ok is false when an option is not known
// before the line runs.
func parseLn(args []word) (ln lnArgs, ok bool) {
	for i := 0; i < len(args); i++ {
		w := args[i]
		switch {
		case !w.lit && (strings.HasPrefix(w.lead, "-") || w.lead == ""):
			return ln, false
		case !w.lit:
			ln.ops = append(ln.ops, w)
		case w.val == "--":
			ln.ops = append(ln.ops, args[i+1:]...)
			i = len(args)
		case w.val == "-t" || w.val == "-S" || w.val == "--suffix":
			if i+1 < len(args) {
				if w.val == "-t" {
					ln.dir = &args[i+1]
				}
				i++
			}
		case strings.HasPrefix(w.val, "--target-directory="):
			d := w
			d.val = strings.TrimPrefix(w.val, "--target-directory=")
			ln.dir = &d
		case w.val == "--symbolic" || strings.HasPrefix(w.val, "-") && !strings.HasPrefix(w.val, "--") && strings.Contains(w.val, "s"):
			ln.symbolic = true
		case strings.HasPrefix(w.val, "-"):
		default:
			ln.ops = append(ln.ops, w)
		}
	}
	return ln, true
}

// linkPairs are the (target, link) pairs ln makes: into -t's directory,
// into the last operand when it is a directory, the last operand itself,
// or the target's name in the working directory.
func (a *analyzer) linkPairs(ln lnArgs, fl *flow) [][2]word {
	ops := ln.ops
	var pairs [][2]word
	switch {
	case len(ops) == 0:
	case ln.dir != nil:
		for _, t := range ops {
			pairs = append(pairs, [2]word{t, joinWord(*ln.dir, filepath.Base(t.val))})
		}
	case len(ops) == 1:
		pairs = append(pairs, [2]word{ops[0], {val: filepath.Base(ops[0].val), lit: ops[0].lit}})
	case len(ops) == 2 && !a.isDir(ops[1], fl):
		pairs = append(pairs, [2]word{ops[0], ops[1]})
	default:
		last := ops[len(ops)-1]
		for _, t := range ops[:len(ops)-1] {
			pairs = append(pairs, [2]word{t, joinWord(last, filepath.Base(t.val))})
		}
	}
	return pairs
}

// isDir reports whether w names one existing directory.
func (a *analyzer) isDir(w word, fl *flow) bool {
	ps, ok := a.paths(w, fl.cwd)
	if !ok || len(ps) != 1 {
		return false
	}
	fi, err := os.Stat(ps[0])
	return err == nil && fi.IsDir()
}

// recordLink remembers what a link points to: a symbolic link's text, a
// hard link's file. false when it cannot be known.
func (a *analyzer) recordLink(target, link word, symbolic bool, fl *flow) bool {
	ls, ok := a.paths(link, fl.cwd)
	if !ok || !target.lit {
		return false
	}
	for _, l := range ls {
		content := target.val
		if !symbolic {
			ts, ok := a.paths(target, fl.cwd)
			if !ok || len(ts) != 1 {
				return false
			}
			content = ts[0]
		}
		a.links[l] = content
	}
	return true
}

func joinWord(dir word, base string) word {
	d := dir
	d.val = strings.TrimSuffix(dir.val, "/") + "/" + base
	return d
}
