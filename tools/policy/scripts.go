package policy

import (
	"strings"
)

// sedReadOnly allows sed printing what it edits: no -i, no script file,
// and scripts (read here) without the commands that write (w, W, s///w)
// or run (e, s///e). --sandbox makes any script safe.
func sedReadOnly(args []word) string {
	var scripts []word
	sandbox, sawScript := false, false
	ops := 0
	for i := 0; i < len(args); i++ {
		w := args[i]
		v := w.val
		switch {
		case !w.lit && (w.lead == "" || strings.HasPrefix(w.lead, "-")):
			if ops == 0 && !sawScript {
				return "sed runs a script not known before the line runs"
			}
			return "sed has an argument not known before the line runs (" + w.text + "), which may be an option"
		case v == "--sandbox":
			sandbox = true
		case v == "-e" || v == "--expression":
			if i+1 < len(args) {
				scripts = append(scripts, args[i+1])
				i++
			}
			sawScript = true
		case strings.HasPrefix(v, "--expression="):
			s := w
			s.val = strings.TrimPrefix(v, "--expression=")
			scripts, sawScript = append(scripts, s), true
		case v == "-l" || v == "--line-length":
			i++
		case strings.HasPrefix(v, "--line-length="), v == "--posix", v == "--debug", v == "--quiet", v == "--silent",
			v == "--regexp-extended", v == "--separate", v == "--unbuffered", v == "--null-data", v == "--help",
			v == "--version", v == "--":
		case strings.HasPrefix(v, "--"):
			return "sed " + v + " is not known to be read-only"
		case strings.HasPrefix(v, "-") && v != "-":
			for j := 1; j < len(v); j++ {
				switch c := v[j]; {
				case c == 'e':
					rest := v[j+1:]
					if rest == "" && i+1 < len(args) {
						scripts = append(scripts, args[i+1])
						i++
					} else if rest != "" {
						scripts = append(scripts, word{val: rest, lit: true, text: rest})
					}
					sawScript = true
					j = len(v)
				case c == 'l':
					if j == len(v)-1 {
						i++
					}
					j = len(v)
				case strings.IndexByte("nErsuz", c) < 0:
					return "sed -" + string(c) + " is not known to be read-only"
				}
			}
		default:
			if !sawScript && ops == 0 {
				scripts = append(scripts, w)
			}
			ops++
		}
	}
	if sandbox {
		return ""
	}
	for _, s := range scripts {
		if !s.lit {
			return "sed runs a script not known before the line runs"
		}
		if why := sedScriptWhy(s.val); why != "" {
			return why
		}
	}
	return ""
}

// sedScriptWhy reads a sed script and says why it may write or run
// something, or "". What it cannot read counts against it.
func sedScriptWhy(s string) string {
	i := 0
	skipSpace := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	// delimited reads a /…/ part (the delimiter is s[i]), escapes included.
	delimited := func() bool {
		if i >= len(s) {
			return false
		}
		d := s[i]
		i++
		for i < len(s) && s[i] != d {
			if s[i] == '\\' {
				i++
			}
			i++
		}
		if i >= len(s) {
			return false
		}
		i++
		return true
	}
	address := func() bool {
		switch {
		case i < len(s) && s[i] >= '0' && s[i] <= '9':
			for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '~') {
				i++
			}
		case i < len(s) && s[i] == '$':
			i++
		case i < len(s) && s[i] == '/':
			if !delimited() {
				return false
			}
			for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
				i++
			}
		case i+1 < len(s) && s[i] == '\\':
			i++
			if !delimited() {
				return false
			}
		case i < len(s) && (s[i] == '+' || s[i] == '~'):
			i++
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		}
		return true
	}
	toEOL := func() {
		for i < len(s) && s[i] != '\n' {
			if s[i] == '\\' && i+1 < len(s) {
				i++
			}
			i++
		}
	}
	for i < len(s) {
		skipSpace()
		if i >= len(s) {
			break
		}
		if c := s[i]; c == ';' || c == '\n' || c == '}' {
			i++
			continue
		}
		if s[i] == '#' {
			toEOL()
			continue
		}
		if !address() {
			return "sed's script cannot be read"
		}
		skipSpace()
		if i < len(s) && s[i] == ',' {
			i++
			skipSpace()
			if !address() {
				return "sed's script cannot be read"
			}
		}
		skipSpace()
		for i < len(s) && s[i] == '!' {
			i++
			skipSpace()
		}
		if i >= len(s) {
			return "sed's script cannot be read"
		}
		c := s[i]
		i++
		switch {
		case c == '{' || c == '}':
		case strings.IndexByte("=dDgGhHnNpPxzlqQFL", c) >= 0:
			skipSpace()
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		case c == ':' || c == 'b' || c == 't' || c == 'T' || c == 'r' || c == 'R' || c == 'v':
			for i < len(s) && s[i] != '\n' && s[i] != ';' {
				i++
			}
		case c == 'a' || c == 'i' || c == 'c':
			toEOL()
		case c == 's' || c == 'y':
			if !delimited() { // the delimiter follows the command letter
				return "sed's script cannot be read"
			}
			i-- // the closing delimiter opens the replacement
			if !delimited() {
				return "sed's script cannot be read"
			}
			if c == 's' {
				for i < len(s) && strings.IndexByte("gpiImM0123456789", s[i]) >= 0 {
					i++
				}
				if i < len(s) && (s[i] == 'w' || s[i] == 'e' || s[i] == 'W') {
					return "sed's s command with the " + string(s[i]) + " flag writes or runs something"
				}
			}
		case c == 'w' || c == 'W':
			return "sed's " + string(c) + " command writes a file"
		case c == 'e':
			return "sed's e command runs a command"
		default:
			return "sed's " + string(c) + " command is not known to be read-only"
		}
	}
	return ""
}

// awkReadOnly allows awk programs that print: no system(), no pipes, no
// redirections (> and | anywhere in the program count), no gawk
// extensions that load code, no program file.
func awkReadOnly(name string, args []word) string {
	var prog *word
	sandbox := false
	sawProg, operands := false, false
	for i := 0; i < len(args); i++ {
		w := args[i]
		v := w.val
		switch {
		case operands:
			// After the program everything is an input file or an
			// assignment: awk reads no more options.
		case !w.lit && (w.lead == "" || strings.HasPrefix(w.lead, "-")):
			return name + " runs a program not known before the line runs"
		case v == "-F" || v == "-v" || v == "--field-separator" || v == "--assign":
			i++
		case strings.HasPrefix(v, "-F") || strings.HasPrefix(v, "-v") && len(v) > 2:
		case v == "-S" || v == "--sandbox":
			sandbox = true
		case v == "-e" || v == "--source":
			if i+1 < len(args) {
				prog, sawProg = &args[i+1], true
				i++
			}
		case v == "--" || v == "-b" || v == "-c" || v == "-P" || v == "-r" || v == "-N" || v == "--characters-as-bytes" ||
			v == "--traditional" || v == "--posix" || v == "--re-interval" || v == "--use-lc-numeric":
		case strings.HasPrefix(v, "-") && v != "-":
			return name + " " + v + " is not known to be read-only"
		default:
			operands = true
			if !sawProg {
				prog, sawProg = &args[i], true
			}
		}
	}
	if sandbox || prog == nil {
		return ""
	}
	if !prog.lit {
		return name + " runs a program not known before the line runs"
	}
	for _, bad := range []string{"system", "|", ">", "@", "getline", "ENVIRON", "PROCINFO"} {
		if strings.Contains(prog.val, bad) {
			return name + "'s program uses " + bad + ", which may run a command or write a file"
		}
	}
	return ""
}
