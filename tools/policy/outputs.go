package policy

import (
	"slices"
	"strings"
	"sync"
)

// outputsOf lists the files a command writes through its arguments (tee,
// sort -o, uniq and xxd's second operand, cp and mv …), to be confined
// like redirects.
func outputsOf(p *shellPart) []word {
	if p.Dynamic || len(p.words) < 2 {
		return nil
	}
	if out, ok := outputRules()[p.name()]; ok {
		return out(argList(p.words[1:]))
	}
	return nil
}

// outputRules say, by program, which of its arguments name a file it
// writes.
var outputRules = sync.OnceValue(func() map[string]func(args argList) []word {
	return map[string]func(args argList) []word{
		"sort": func(args argList) []word { return args.optArg("o", "--output") },
		"tree": func(args argList) []word { return args.optArg("o", "--output") },
		"uniq": func(args argList) []word {
			return args.secondOperand(setOf("-f", "-s", "-w", "--skip-fields", "--skip-chars", "--check-chars"))
		},
		"xxd": func(args argList) []word {
			return args.secondOperand(setOf("-c", "-cols", "-g", "-groupsize", "-l", "-len", "-s", "-seek", "-o", "-offset", "-n", "-name", "-R"))
		},
		"cp":       func(args argList) []word { return copyOutputs(args, false) },
		"install":  func(args argList) []word { return copyOutputs(args, false) },
		"mv":       func(args argList) []word { return copyOutputs(args, true) },
		"touch":    func(args argList) []word { return args.operands() },
		"mkdir":    func(args argList) []word { return args.operands() },
		"truncate": func(args argList) []word { return args.operands() },
		"chmod":    afterFirstOperand, // the mode
		"chown":    afterFirstOperand, // the owner
		"chgrp":    afterFirstOperand,
		"dd": func(args argList) []word {
			for _, w := range args {
				if v, ok := strings.CutPrefix(w.val, "of="); ok {
					return []word{{val: v, lit: w.lit, lead: v, text: v}}
				}
			}
			return nil
		},
		"sed": sedOutputs,
		"gofmt": func(args argList) []word {
			out := args.optArg("", "-cpuprofile", "--cpuprofile")
			if hasAnyArg(vals(args), "-w") {
				out = append(out, args.operands()...)
			}
			return out
		},
		"go": func(args argList) []word {
			return args.optArg("", "-o", "-coverprofile", "-cpuprofile", "-memprofile", "-blockprofile", "-mutexprofile", "-trace")
		},
		"rsync": func(args argList) []word {
			if ops := args.operands(); len(ops) > 1 && !strings.Contains(ops[len(ops)-1].val, ":") {
				return ops[len(ops)-1:]
			}
			return nil
		},
		"tar":   tarOutputs,
		"unzip": func(args argList) []word { return args.optArg("d", "") },
		// curl and wget write more than the page: cookie jars, headers,
		// traces and logs, each to a file it is told.
		"curl": func(args argList) []word {
			return slices.Concat(args.optArg("o", "--output"), args.optArg("c", "--cookie-jar"), args.optArg("D", "--dump-header"),
				args.optArg("", "--trace", "--trace-ascii", "--stderr", "--libcurl", "--etag-save", "--hsts", "--alt-svc"))
		},
		"wget": func(args argList) []word {
			return slices.Concat(args.optArg("O", "--output-document"), args.optArg("P", "--directory-prefix"),
				args.optArg("o", "--output-file"), args.optArg("a", "--append-output"),
				args.optArg("", "--save-cookies", "--warc-file", "--hsts-file"))
		},
	}
})

func afterFirstOperand(args argList) []word {
	if ops := args.operands(); len(ops) > 0 {
		return ops[1:]
	}
	return nil
}

// copyOutputs: cp and install write their last operand or -t's
// directory; mv also removes its sources, which count as written.
func copyOutputs(args argList, move bool) []word {
	if t := args.optArg("t", "--target-directory"); len(t) > 0 {
		if move {
			return append(t, args.operands()...)
		}
		return t
	}
	ops := args.operands()
	if move {
		return ops
	}
	if len(ops) > 1 {
		return ops[len(ops)-1:]
	}
	return nil
}

// sedOutputs: sed -i rewrites the files it reads (after the script).
func sedOutputs(args argList) []word {
	for _, w := range args {
		if w.val == "--in-place" || strings.HasPrefix(w.val, "--in-place=") ||
			strings.HasPrefix(w.val, "-") && !strings.HasPrefix(w.val, "--") && strings.Contains(w.val, "i") {
			if ops := args.operands(); len(ops) > 1 {
				return ops[1:]
			}
		}
	}
	return nil
}

// tarOutputs: extracting writes under -C's directory; creating or
// appending writes the archive -f names.
func tarOutputs(args argList) []word {
	mode := ""
	if len(args) > 0 && !strings.HasPrefix(args[0].val, "-") {
		mode = args[0].val // tar xf: the first word holds the mode letters
	}
	for _, w := range args {
		if strings.HasPrefix(w.val, "-") && !strings.HasPrefix(w.val, "--") {
			mode += w.val
		}
		switch w.val {
		case "--extract", "--get":
			mode += "x"
		case "--create":
			mode += "c"
		}
	}
	switch {
	case strings.Contains(mode, "x"):
		return args.optArg("C", "--directory")
	case strings.ContainsAny(mode, "cru"):
		return args.optArg("f", "--file")
	}
	return nil
}

// argList is a program's arguments, read for the files they name.
type argList []word

// operands lists the arguments that are not options.
func (args argList) operands() []word { return args.operandsAfter(nil) }

// operandsAfter lists the operands, skipping the value of each option in
// valued.
func (args argList) operandsAfter(valued map[string]bool) []word {
	var out []word
	dashes := false
	for i := 0; i < len(args); i++ {
		w := args[i]
		switch {
		case dashes || !strings.HasPrefix(w.val, "-") || w.val == "-":
			out = append(out, w)
		case w.val == "--":
			dashes = true
		case valued[w.val]:
			i++
		}
	}
	return out
}

// secondOperand is the output file of a filter taking INPUT [OUTPUT].
func (args argList) secondOperand(valued map[string]bool) []word {
	if ops := args.operandsAfter(valued); len(ops) > 1 {
		return ops[1:2]
	}
	return nil
}

// optArg lists the values of an option: a short letter (-oFILE, -o FILE,
// in a cluster) and long names (--output=FILE, --output FILE).
func (args argList) optArg(short string, longs ...string) []word {
	var out []word
	for i, w := range args {
		for _, l := range longs {
			if v, ok := strings.CutPrefix(w.val, l+"="); ok {
				out = append(out, word{val: v, lit: w.lit, lead: v, text: v})
			}
			if w.val == l && i+1 < len(args) {
				out = append(out, args[i+1])
			}
		}
		if short == "" || !strings.HasPrefix(w.val, "-") || strings.HasPrefix(w.val, "--") {
			continue
		}
		if j := strings.Index(w.val, short); j > 0 {
			if rest := w.val[j+1:]; rest != "" {
				out = append(out, word{val: rest, lit: w.lit, lead: rest, text: rest})
			} else if i+1 < len(args) {
				out = append(out, args[i+1])
			}
		}
	}
	return out
}
