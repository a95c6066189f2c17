package sandbox

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// A program that fails in the sandbox says so in its own words: "EACCES:
// permission denied, open '/home/u/tools/server.js'", "can't open file
// …: [Errno 2] No such file or directory" (HOME is masked: the file is not
// there for it), "Read-only file system". Refused reads those words back
// against what the command was granted, so that a server or hook the user
// configured can be told which path or right the sandbox refused, and the
// setting that grants it.

// refusedWords are what programs print when a path or a socket was
// refused (lower-cased): the kernel's words and Node's, Python's, Go's.
var (
	deniedWords  = []string{"permission denied", "eacces", "operation not permitted", "eperm"}
	missingWords = []string{"no such file or directory", "enoent", "cannot find module", "not found"}
	roWords      = []string{"read-only file system", "erofs"}
	writeWords   = []string{"mkdir", "open", "creat", "write", "rename", "unlink", "touch", "copy"}
	netWords     = []string{"network is unreachable", "enetunreach", "could not resolve", "name or service not known",
		"temporary failure in name resolution", "eai_again", "socket: permission denied", "connection refused"}
	// absPath is compiled on first use, not at every agentd's start.
	absPath = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?:^|[\s'"(=:\[,‘“])(/[^\s'"()\[\]{},;:<>|‘’“”]+)`)
	})
)

// Refused lists the rights the command seems to have lacked, from what it
// printed (its standard error, or its output): the absolute paths it
// names, and the paths among its arguments, that exist outside the sandbox
// (or whose directory does) but that it could not read or write in it; and
// the network, when it had none and says a connection failed. Call it after
// Wait, for a command that failed.
func (c *Cmd) Refused(output string) []Refusal {
	if c.spec.Profile == Full || c.plan == nil {
		return nil
	}
	low := strings.ToLower(output)
	var out []Refusal
	add := func(r Refusal) {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	if !c.spec.Network && containsAnyOf(low, netWords) {
		add(Refusal{Right: "network"})
	}
	for _, q := range c.pathsIn(output) {
		line := strings.ToLower(lineWith(output, q))
		if line == "" {
			line = low // an argument the output does not name: judge by the whole
		}
		read, write := c.plan.access(q)
		denied, missing, ro := containsAnyOf(line, deniedWords), containsAnyOf(line, missingWords), containsAnyOf(line, roWords)
		if _, err := os.Stat(q); err == nil {
			switch {
			case !read && (denied || missing):
				add(Refusal{Path: q, Right: "read"})
			case !write && (ro || denied && containsAnyOf(line, writeWords)):
				add(Refusal{Path: q, Right: "write"})
			}
			continue
		}
		// Missing outside too: something the command tried to make, in a
		// directory it may not write (or not even see: HOME is masked).
		if ro || (denied || missing) && containsAnyOf(line, writeWords) {
			if dir := existingParent(q); dir != "" && dir != "/" {
				if _, w := c.plan.access(dir); !w {
					add(Refusal{Path: q, Right: "write"})
				}
			}
		}
	}
	// A path inside another refused the same right says nothing more.
	return slices.DeleteFunc(out, func(r Refusal) bool {
		return r.Path != "" && slices.ContainsFunc(out, func(o Refusal) bool {
			return o.Right == r.Right && o.Path != r.Path && o.Path != "" && within(o.Path, r.Path)
		})
	})
}

// pathsIn are the absolute paths output names and the command's arguments
// that are paths (made absolute against its directory), cleaned.
func (c *Cmd) pathsIn(output string) []string {
	var out []string
	for _, m := range absPath().FindAllStringSubmatch(output, -1) {
		out = append(out, filepath.Clean(strings.TrimRight(m[1], ".")))
	}
	for _, a := range c.spec.Args {
		if strings.HasPrefix(a, "-") || !strings.ContainsAny(a, "/.") || strings.Contains(a, "://") {
			continue
		}
		if !filepath.IsAbs(a) {
			a = filepath.Join(c.spec.Dir, a)
		}
		out = append(out, filepath.Clean(a))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// access says whether the plan lets a command read and write q: a rule
// grants it, no hole or read-only bind covers it, and no mask hides it.
func (p *plan) access(q string) (read, write bool) {
	for _, h := range p.Hide {
		if within(h, q) {
			return false, false
		}
	}
	for _, m := range p.Masks {
		if within(m, q) && !slices.ContainsFunc(p.Keep, func(k string) bool { return within(k, q) }) &&
			!slices.ContainsFunc(p.Private, func(k string) bool { return within(k, q) }) {
			return false, false
		}
	}
	for _, r := range p.Rules {
		if !within(r.Path, q) {
			continue
		}
		read = read || r.Access&llReadFile != 0
		write = write || r.Access&llWriteFile != 0 && r.Access != accDev
	}
	if slices.ContainsFunc(p.ReadOnly, func(ro string) bool { return within(ro, q) }) {
		write = false
	}
	return read, write
}

// lineWith is the line of s that holds q, "" when none does.
func lineWith(s, q string) string {
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, q) {
			return line
		}
	}
	return ""
}

func existingParent(q string) string {
	for d := filepath.Dir(q); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			return d
		}
		if d == "/" {
			return ""
		}
	}
}

func containsAnyOf(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}
