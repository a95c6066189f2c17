package sandbox

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// plan is everything the entry point does, decided by the daemon so that it
// can be tested without spawning anything. It travels as JSON on a pipe.
type plan struct {
	Probe bool     `json:"probe,omitempty"`
	Path  string   `json:"path"`
	Argv  []string `json:"argv"`
	Dir   string   `json:"dir"`
	Env   []string `json:"env"`

	Profile Profile `json:"profile"`
	// Terminal: the streams are a terminal the command gets as its
	// controlling terminal, in a new session.
	Terminal bool `json:"terminal,omitempty"`
	Daemon   int  `json:"daemon"` // the daemon's pid, to notice its death
	ABI      int  `json:"abi"`
	Network  bool `json:"network"`
	// Namespaces: the entry point runs in new user, mount and PID
	// namespaces and must make the mounts below.
	Namespaces bool `json:"namespaces"`
	NetNS      bool `json:"netns"`
	// Session is the session whose network namespace the command joins
	// (loopback only): TCP is left to the namespace, and seccomp lets
	// IPv4 and IPv6 sockets through.
	Session string `json:"session,omitempty"`
	// Pins are directories bound onto themselves so that they cannot be
	// renamed or removed (a .git that must stay where it is).
	Pins []string `json:"pins,omitempty"`
	// ReadOnly paths are bound read-only onto themselves.
	ReadOnly []string `json:"readOnly,omitempty"`
	// Masks are directories replaced by an empty tmpfs (/tmp, /run…);
	// Keep are paths beneath them bound back after masking.
	Masks []string `json:"masks,omitempty"`
	Keep  []string `json:"keep,omitempty"`
	// Hide are paths covered with an empty, unreadable file or directory.
	Hide []string `json:"hide,omitempty"`
	// Private are directories created inside a mask after masking.
	Private []string `json:"private,omitempty"`
	Rules   []rule   `json:"rules"`
	// Families are the socket families seccomp lets through; nil means no
	// filter.
	Families []uint32 `json:"families,omitempty"`
	// TmpSize bounds the private tmpfs (/tmp, /var/tmp, /dev/shm
	// together), in bytes; NProc is RLIMIT_NPROC for the command.
	TmpSize int64 `json:"tmpSize,omitempty"`
	NProc   int   `json:"nproc,omitempty"`
	// Absent are paths in git directories that must not appear while a
	// git command runs (Spec.Git): the daemon removes them after it.
	Absent []string `json:"-"`
	// Overlays are mounted over the user's directories (caches) so that
	// the command reads them and writes elsewhere.
	Overlays []Overlay `json:"overlays,omitempty"`
}

// rule is one Landlock path-beneath rule.
type rule struct {
	Path   string `json:"path"`
	Access uint64 `json:"access"`
}

var (
	// systemRead are the system's programs, libraries and data.
	systemRead = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/nix/store",
		"/snap", "/sys", "/var/lib/dpkg", "/var/lib/alternatives"}
	// devices every command may read and write; /dev/pts is the command's
	// own (tty_linux.go).
	devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx"}
	// masked directories (and HOME) get an empty tmpfs: other users' and
	// the daemon's temporary files, the user's private files and the
	// sockets of running services (docker, ssh-agent, gpg-agent, D-Bus,
	// X11) disappear. The writable ones are the command's private
	// temporary space.
	masked   = []string{"/tmp", "/var/tmp", "/dev/shm", "/run"}
	writable = map[string]bool{"/tmp": true, "/var/tmp": true, "/dev/shm": true}
)

// privateSub is the writable directory inside a mask when the mask itself
// cannot be writable (something read-only was bound back beneath it).
const privateSub = ".agentd-private"

// buildPlan turns a validated spec into the entry point's plan. tmp is the
// private temporary directory the daemon made when there are no namespaces.
func buildPlan(spec Spec, st Status, tmp string) (*plan, error) {
	p := &plan{
		Argv: spec.Args, Dir: spec.Dir, Profile: spec.Profile, Daemon: os.Getpid(), ABI: st.Landlock, Network: spec.Network,
		Namespaces: st.Namespaces, TmpSize: cmp.Or(spec.TmpSize, tmpfsSize()), NProc: cmp.Or(spec.MaxProcs, maxProcs()),
		// The seccomp filter refuses every socket but AF_UNIX and
		// AF_NETLINK, Landlock refuses TCP and scopes abstract sockets:
		// together they cover what an empty network namespace would,
		// which costs most of a millisecond to create. It stands in where
		// they are missing.
		NetNS: st.Namespaces && st.NetNamespace && !spec.Network && (!seccompSupported || st.Landlock < 6),
	}
	if spec.Session != "" && !spec.Network && st.Namespaces && st.NetNamespace {
		p.Session, p.NetNS = spec.Session, false
	}
	path, err := lookPath(spec.Args[0], envGet(spec.Env, "PATH"), isExecutable)
	if err != nil {
		return nil, err
	}
	p.Path = path
	var rules []rule
	add := func(access uint64, paths ...string) {
		for _, q := range paths {
			rules = append(rules, rule{Path: filepath.Clean(q), Access: access})
		}
	}
	add(accRead, systemRead...)
	if st.Namespaces {
		add(accRead, "/proc") // the command's own, mounted before the rules
	} else {
		add(accRead, procShared()...)
	}
	add(accRead, etcRules()...)
	add(accDev, devices...)
	if st.Namespaces {
		add(accDev, "/dev/pts") // a devpts instance of its own, mounted before the rules
	}
	add(accRead, toolchainPaths(spec.Env, spec.Workspace)...)
	add(accRead, spec.Read...)
	add(accWrite, spec.Write...)
	for _, o := range spec.Overlays {
		// Without a mount namespace there is no overlay: the user's
		// directory is only read.
		if !st.Namespaces || o.Upper == "" {
			add(accRead, o.Path)
		} else {
			add(accWrite, o.Path)
		}
		if st.Namespaces {
			p.Overlays = append(p.Overlays, o)
		}
	}
	if spec.Network {
		if target, err := filepath.EvalSymlinks("/etc/resolv.conf"); err == nil && target != "/etc/resolv.conf" {
			add(accRead, target)
		}
	}
	switch spec.Profile {
	case Read:
		add(accRead, spec.Workspace)
	case WorkspaceWrite:
		add(accWrite, spec.Workspace)
		g, err := gitProtections(spec.Workspace, spec.Git)
		if err != nil {
			return nil, err
		}
		add(accWrite, g.write...)
		p.Pins = g.pins
		p.ReadOnly = append(g.readOnly, filepath.Join(spec.Workspace, ".agentd"))
		p.Absent = g.absent
		for _, q := range spec.Protect {
			p.ReadOnly = append(p.ReadOnly, filepath.Clean(q))
		}
	}
	holes := holesIn(rules, hidden(envGet(spec.Env, "HOME"), spec.Hide))
	if st.Namespaces {
		p.Hide = append(p.Hide, holes...)
	} else {
		rules = carve(rules, holes)
	}
	env := spec.Env
	if st.Namespaces {
		if t := p.mask(rules, spec.Dir, envGet(spec.Env, "HOME")); t != "" {
			tmp = t
		}
		for _, m := range p.Masks {
			switch {
			case !writable[m]:
			case slices.Contains(p.Private, filepath.Join(m, privateSub)):
				add(accRead, m) // only the command's own files and the paths bound back
			default:
				add(accWrite, m)
			}
		}
		for _, d := range p.Private {
			add(accWrite, d)
		}
	}
	if tmp == "" {
		return nil, &SetupError{Step: "plan", Msg: "no private temporary directory"}
	}
	if !st.Namespaces || !slices.Contains(p.Masks, "/tmp") {
		add(accWrite, tmp)
	}
	for _, name := range []string{"TMPDIR", "TMP", "TEMP"} {
		env = envSet(env, name, tmp)
	}
	if spec.Git {
		// "git" is looked up in PATH: not in a directory of the workspace,
		// where a command could have put a git of its own.
		env = envSet(env, "PATH", pathOutside(envGet(env, "PATH"), spec.Workspace))
	}
	p.Env = env
	p.Rules = rules
	if !spec.Network && seccompSupported {
		// Without a mount namespace the sockets of running services
		// (docker, ssh-agent) are reachable by path, and Landlock before
		// ABI 9 does not cover connect(2): refuse Unix sockets too.
		p.Families = []uint32{afNetlink}
		if st.Namespaces {
			p.Families = append(p.Families, afUnix)
		}
		if p.Session != "" {
			// Only the loopback exists in the session's namespace; other
			// families (packet, vsock, bluetooth…) stay refused: some of
			// them are not confined by a network namespace.
			p.Families = append(p.Families, afInet, afInet6)
		}
	}
	return p, nil
}

// mask fills Masks, Keep and Private from the rules and the working
// directory, and returns the command's temporary directory ("" when /tmp
// is not masked).
func (p *plan) mask(rules []rule, dir, home string) string {
	keep := map[string]bool{} // path → bound back read-only (not writable)
	note := func(q string, ro bool) {
		if prev, ok := keep[q]; ok {
			keep[q] = prev || ro
			return
		}
		keep[q] = ro
	}
	for _, m := range masks(home) {
		if slices.ContainsFunc(rules, func(r rule) bool { return within(r.Path, m) }) {
			continue // granted whole (a workspace that is HOME): nothing to mask
		}
		p.Masks = append(p.Masks, m)
		for _, r := range rules {
			if within(m, r.Path) && r.Path != m {
				note(r.Path, r.Access != accWrite)
			}
		}
		if within(m, dir) && dir != m {
			note(dir, false)
		}
	}
	for q, ro := range keep {
		p.Keep = append(p.Keep, q)
		for _, m := range p.Masks {
			if within(m, q) && ro && writable[m] {
				sub := filepath.Join(m, privateSub)
				if !slices.Contains(p.Private, sub) {
					p.Private = append(p.Private, sub)
				}
			}
		}
	}
	p.Keep = outermost(p.Keep)
	slices.Sort(p.Private)
	if !slices.Contains(p.Masks, "/tmp") {
		return "" // the daemon's private directory stands in
	}
	if slices.Contains(p.Private, filepath.Join("/tmp", privateSub)) {
		return filepath.Join("/tmp", privateSub)
	}
	return "/tmp"
}

// masks are the directories to mask that exist as real directories here:
// the fixed ones and HOME, unless HOME is "/", holds system directories or
// lies in another mask.
func masks(home string) []string {
	list := slices.Clone(masked)
	home = filepath.Clean(home)
	if filepath.IsAbs(home) && home != "/" && !slices.ContainsFunc(masked, func(m string) bool { return within(m, home) }) &&
		!slices.ContainsFunc(append([]string{"/etc"}, systemRead...), func(d string) bool { return within(home, d) }) {
		list = append(list, home)
	}
	var out []string
	for _, m := range list {
		if fi, err := os.Lstat(m); err == nil && fi.IsDir() {
			out = append(out, m)
		}
	}
	return out
}

// needsTmpDir reports whether the daemon must make the command's private
// temporary directory (no namespaces, or no /tmp to mask).
func needsTmpDir(st Status) bool {
	if !st.Namespaces {
		return true
	}
	fi, err := os.Lstat("/tmp")
	return err != nil || !fi.IsDir()
}

// outermost drops the paths that lie beneath another one of the list
// (binding the outer one back brings the inner one along) and sorts.
func outermost(paths []string) []string {
	slices.Sort(paths)
	var out []string
	for _, q := range paths {
		if len(out) > 0 && within(out[len(out)-1], q) {
			continue
		}
		out = append(out, q)
	}
	return out
}

// within reports whether q is dir or lies beneath it.
func within(dir, q string) bool {
	return q == dir || strings.HasPrefix(q, strings.TrimSuffix(dir, "/")+"/")
}

// homeTools are toolchain directories under HOME that hold programs,
// libraries and caches but no credentials (not ~/.cargo itself, which holds
// credentials.toml; not ~/.m2, whose settings.xml may hold passwords).
var homeTools = []string{"go/pkg/mod", "go/bin", ".cache/go-build", ".cargo/bin", ".cargo/registry", ".cargo/git",
	".rustup", ".nvm", ".npm/_cacache", ".cache/node", ".cache/node-gyp", ".local/bin", ".local/lib", ".pyenv",
	".volta", ".bun/bin", ".deno/bin", ".sdkman/candidates", ".m2/repository", ".cache/pip"}

// toolchainPaths are the toolchains and caches the command's environment
// points at, and the directories on its PATH, except those that would
// expose HOME or the projects around the workspace.
func toolchainPaths(env []string, workspace string) []string {
	home := envGet(env, "HOME")
	var out []string
	addAbs := func(q string) {
		if q != "" && filepath.IsAbs(q) {
			out = append(out, filepath.Clean(q))
		}
	}
	if home != "" && filepath.IsAbs(home) {
		for _, t := range homeTools {
			out = append(out, filepath.Join(home, t))
		}
	}
	for _, name := range toolchainDirs {
		addAbs(envGet(env, name))
	}
	for _, gp := range filepath.SplitList(envGet(env, "GOPATH")) {
		if filepath.IsAbs(gp) {
			out = append(out, filepath.Join(gp, "pkg", "mod"), filepath.Join(gp, "bin"))
		}
	}
	if ch := envGet(env, "CARGO_HOME"); filepath.IsAbs(ch) {
		out = append(out, filepath.Join(ch, "bin"), filepath.Join(ch, "registry"), filepath.Join(ch, "git"))
	}
	for _, dir := range filepath.SplitList(envGet(env, "PATH")) {
		if !filepath.IsAbs(dir) {
			continue
		}
		dir = filepath.Clean(dir)
		if dir == "/" || (home != "" && within(dir, home)) || within(dir, workspace) {
			continue // "/", or HOME or the workspace's parents: too much
		}
		out = append(out, dir)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (p *plan) String() string {
	return fmt.Sprintf("%s %v ns=%v netns=%v rules=%d", p.Profile, p.Argv, p.Namespaces, p.NetNS, len(p.Rules))
}

// pathOutside is path without its entries inside ws (or relative ones).
func pathOutside(path, ws string) string {
	var keep []string
	for _, dir := range filepath.SplitList(path) {
		if filepath.IsAbs(dir) && !within(ws, filepath.Clean(dir)) {
			keep = append(keep, dir)
		}
	}
	return strings.Join(keep, string(filepath.ListSeparator))
}
