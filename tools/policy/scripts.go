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
	sc := sedScanner{s: s}
	for sc.next() {
		if !sc.addresses() {
			return "sed's script cannot be read"
		}
		if why := sc.command(); why != "" {
			return why
		}
	}
	return ""
}

// sedScanner reads a sed script: s from byte i on.
type sedScanner struct {
	s      string
	i      int
	writes []string // the files of w, W and s///w read so far
}

func (sc *sedScanner) more() bool { return sc.i < len(sc.s) }

// next moves to the script's next command, past blanks, separators and
// comments, and says whether there is one.
func (sc *sedScanner) next() bool {
	for sc.skipSpace(); sc.more(); sc.skipSpace() {
		switch sc.s[sc.i] {
		case ';', '\n', '}':
			sc.i++
		case '#':
			sc.toEOL()
		default:
			return true
		}
	}
	return false
}

func (sc *sedScanner) skipSpace() {
	for sc.more() && (sc.s[sc.i] == ' ' || sc.s[sc.i] == '\t') {
		sc.i++
	}
}

func (sc *sedScanner) skipDigits() {
	for sc.more() && sc.s[sc.i] >= '0' && sc.s[sc.i] <= '9' {
		sc.i++
	}
}

// delimited reads a /…/ part (the delimiter is the byte at i), escapes
// included.
func (sc *sedScanner) delimited() bool {
	if !sc.more() {
		return false
	}
	d := sc.s[sc.i]
	sc.i++
	for sc.more() && sc.s[sc.i] != d {
		if sc.s[sc.i] == '\\' {
			sc.i++
		}
		sc.i++
	}
	if !sc.more() {
		return false
	}
	sc.i++
	return true
}

// address reads one address: a line number (first~step), $, /regex/
// with its flags, \cregexc, or GNU's +N and ~N.
func (sc *sedScanner) address() bool {
	s := sc.s
	switch {
	case sc.more() && s[sc.i] >= '0' && s[sc.i] <= '9':
		for sc.more() && (s[sc.i] >= '0' && s[sc.i] <= '9' || s[sc.i] == '~') {
			sc.i++
		}
	case sc.more() && s[sc.i] == '$':
		sc.i++
	case sc.more() && s[sc.i] == '/':
		if !sc.delimited() {
			return false
		}
		for sc.more() && (s[sc.i] == 'I' || s[sc.i] == 'M') {
			sc.i++
		}
	case sc.i+1 < len(s) && s[sc.i] == '\\':
		sc.i++
		return sc.delimited()
	case sc.more() && (s[sc.i] == '+' || s[sc.i] == '~'):
		sc.i++
		sc.skipDigits()
	}
	return true
}

// addresses reads a command's address or range and its negations, up to
// the command letter, which must follow.
func (sc *sedScanner) addresses() bool {
	if !sc.address() {
		return false
	}
	sc.skipSpace()
	if sc.more() && sc.s[sc.i] == ',' {
		sc.i++
		sc.skipSpace()
		if !sc.address() {
			return false
		}
	}
	sc.skipSpace()
	for sc.more() && sc.s[sc.i] == '!' {
		sc.i++
		sc.skipSpace()
	}
	return sc.more()
}

func (sc *sedScanner) toEOL() {
	for sc.more() && sc.s[sc.i] != '\n' {
		if sc.s[sc.i] == '\\' && sc.i+1 < len(sc.s) {
			sc.i++
		}
		sc.i++
	}
}

// command reads one command and its arguments; it says why the command
// writes or runs something, or is unknown, or "".
func (sc *sedScanner) command() string {
	c := sc.s[sc.i]
	sc.i++
	switch {
	case c == '{' || c == '}':
	case strings.IndexByte("=dDgGhHnNpPxzlqQFL", c) >= 0:
		sc.skipSpace()
		sc.skipDigits()
	case c == ':' || c == 'b' || c == 't' || c == 'T' || c == 'r' || c == 'R' || c == 'v':
		for sc.more() && sc.s[sc.i] != '\n' && sc.s[sc.i] != ';' {
			sc.i++
		}
	case c == 'a' || c == 'i' || c == 'c':
		sc.toEOL()
	case c == 's' || c == 'y':
		return sc.substitute(c)
	case c == 'w' || c == 'W':
		sc.file()
		return "sed's " + string(c) + " command writes a file"
	case c == 'e':
		sc.toEOL()
		return "sed's e command runs a command"
	default:
		return "sed's " + string(c) + " command is not known to be read-only"
	}
	return ""
}

// substitute reads s/…/…/flags and y/…/…/: the w, W and e flags write a
// file or run the pattern space.
func (sc *sedScanner) substitute(c byte) string {
	if !sc.delimited() { // the delimiter follows the command letter
		return "sed's script cannot be read"
	}
	sc.i-- // the closing delimiter opens the replacement
	if !sc.delimited() {
		return "sed's script cannot be read"
	}
	if c != 's' {
		return ""
	}
	for sc.more() && strings.IndexByte("gpiImM0123456789", sc.s[sc.i]) >= 0 {
		sc.i++
	}
	if sc.more() && (sc.s[sc.i] == 'w' || sc.s[sc.i] == 'e' || sc.s[sc.i] == 'W') {
		flag := sc.s[sc.i]
		sc.i++
		if flag != 'e' {
			sc.file()
		}
		return "sed's s command with the " + string(flag) + " flag writes or runs something"
	}
	return ""
}

// file reads the file name of w, W and s///w, which runs to the end of
// the line (GNU sed: a ; is part of the name), and records it.
func (sc *sedScanner) file() {
	sc.skipSpace()
	start := sc.i
	for sc.more() && sc.s[sc.i] != '\n' {
		sc.i++
	}
	if name := sc.s[start:sc.i]; name != "" {
		sc.writes = append(sc.writes, name)
	}
}

// sedWrites are the files a sed script's w, W and s///w write, so that
// they are judged like a redirect (outside the workspace: refused; a file
// that runs later: asks). ok is false when the script cannot be read to
// its end: the writes are then not known.
func sedWrites(s string) (files []string, ok bool) {
	sc := sedScanner{s: s}
	for sc.next() {
		if !sc.addresses() {
			return sc.writes, false
		}
		if why := sc.command(); strings.Contains(why, "cannot be read") || strings.Contains(why, "not known") {
			return sc.writes, false
		}
	}
	return sc.writes, true
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
