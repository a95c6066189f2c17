package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Profile is what a confined command may do.
type Profile int

const (
	// Read reads the workspace, the system and the toolchains, writes only
	// a private temporary directory and has no network unless asked.
	Read Profile = iota + 1
	// WorkspaceWrite is Read plus writes to the workspace, except its git
	// directories (but for git itself, Spec.Git), nested repositories and
	// .agentd/.
	WorkspaceWrite
	// Full runs with the user's own rights: no confinement at all. Only an
	// explicit grant may choose it.
	Full
)

func (p Profile) String() string {
	switch p {
	case Read:
		return "read"
	case WorkspaceWrite:
		return "workspace-write"
	case Full:
		return "full"
	}
	return fmt.Sprintf("Profile(%d)", int(p))
}

// ParseProfile is the inverse of [Profile.String].
func ParseProfile(s string) (Profile, error) {
	for _, p := range []Profile{Read, WorkspaceWrite, Full} {
		if p.String() == s {
			return p, nil
		}
	}
	return 0, fmt.Errorf("unknown sandbox profile %q (want read, workspace-write or full)", s)
}

// ErrUnavailable means the kernel cannot confine a command in the profile
// asked for on this machine. The command did not run; the caller decides
// (the policy asks the user and may run it in [Full] with a grant). It is
// never turned into an unconfined run here.
var ErrUnavailable = errors.New("the kernel sandbox is not available")

// SetupError means the entry point could not build the sandbox (a mount,
// the Landlock ruleset, the command not found or not executable inside
// it). The command did not run.
type SetupError struct {
	Step string // which step failed, e.g. "landlock", "mount", "exec"
	Msg  string
}

func (e *SetupError) Error() string { return "sandbox " + e.Step + ": " + e.Msg }

// Spec describes one command to run confined.
type Spec struct {
	Profile Profile
	// Workspace is the absolute directory of the project: readable in Read,
	// writable in WorkspaceWrite.
	Workspace string
	// Network lets the command open TCP and UDP sockets in the host's
	// network. Off by default in every profile; the policy grants it per
	// command.
	Network bool
	// Session names the session the command belongs to. Without the
	// network, the commands of one session share a network namespace of
	// their own: loopback only, so a server one of them starts on
	// 127.0.0.1 is reachable from the others, from nothing else, and
	// nothing outside is reachable from it. "" leaves a command without
	// the network no socket but local ones.
	Session string
	// Args is the command and its arguments. Args[0] without a slash is
	// looked up in the PATH of Env.
	Args []string
	// Dir is the working directory; empty means Workspace.
	Dir string
	// Env is the command's whole environment (see tools.ChildEnv). TMPDIR,
	// TMP and TEMP are set to the command's private temporary directory.
	Env []string
	// Read lists more paths the command may read and execute (files or
	// directories), in every profile.
	Read []string
	// Write lists more paths the command may write, in every profile: for
	// example a build cache only sandboxed commands share.
	Write []string
	// Protect lists more paths inside the workspace that stay read-only in
	// WorkspaceWrite, for example the nested .git directories
	// [NestedGitDirs] found. Missing paths are skipped.
	Protect []string
	// Git says the command is git itself, run with git's safe settings,
	// with no option that runs a program or writes a file of its choosing
	// (the policy checked the line): in WorkspaceWrite it may write the
	// repository's objects, refs, index and logs. Any other command finds
	// the whole git directory read-only (gitdirs_linux.go).
	Git bool
	// LandlockOnly confines the command with Landlock alone, as on a
	// machine without user namespaces: no mount, PID or network
	// namespace, so no WorkspaceWrite (ErrUnavailable). For a user who
	// chose so (sandbox: landlock) and for tests.
	LandlockOnly bool
	// MaxProcs bounds the command's processes and threads together; 0 is
	// the default (4096, or less on a machine with few pids).
	MaxProcs int
	// TmpSize bounds its private /tmp, /var/tmp and /dev/shm together, in
	// bytes; 0 is the default (an eighth of the memory, 512 MiB to 4 GiB).
	TmpSize int64
	// Hide lists paths the command may neither read nor write even where
	// a grant contains them (the workspace is HOME, or holds them):
	// agentd's own state, configuration and caches. Missing paths are
	// skipped.
	Hide []string
	// Overlays show the user's directories (caches) to the command with
	// private layers over them, in every profile but Full.
	Overlays []Overlay
}

// Overlay shows the directory Path to a confined command as the Lower
// directories (the topmost first) over Path's own content; the command
// writes to Upper (Work is overlayfs's scratch directory, on the same file
// system), or nowhere when Upper is "". Path itself is never written, and
// keeps its name. Where the kernel cannot mount the overlay, Path is
// read-only instead.
type Overlay struct {
	Path  string   `json:"path"`
	Lower []string `json:"lower,omitempty"`
	Upper string   `json:"upper,omitempty"`
	Work  string   `json:"work,omitempty"`
}

// Confinement says what was applied to a started command, for the audit
// log and for tests.
type Confinement struct {
	Profile Profile `json:"profile"`
	// Landlock is the ABI version of the ruleset applied; 0 for Full.
	Landlock int `json:"landlock"`
	// Namespaces: the command has its own user, mount and PID namespaces
	// (read-only binds, a private /tmp and /proc, no leftovers).
	Namespaces bool `json:"namespaces"`
	// PrivateProc: /proc shows only the command's own PID namespace.
	PrivateProc bool `json:"privateProc"`
	// NetNamespace: the command has a network namespace of its own, or
	// its session's (SessionNetwork).
	NetNamespace bool `json:"netNamespace"`
	// SessionNetwork: the command is in its session's network namespace,
	// where only the loopback exists.
	SessionNetwork bool `json:"sessionNetwork,omitempty"`
	// Seccomp: sockets other than AF_UNIX/AF_NETLINK (and IPv4 and IPv6
	// in a session's network) are refused.
	Seccomp bool `json:"seccomp"`
	// Filter: a seccomp filter refuses TIOCSTI and TIOCLINUX (typing into
	// a terminal), io_uring and foreign system calls.
	Filter bool `json:"filter"`
	// Limits: the command has control groups of its own: a process limit
	// and a CPU weight (limits_linux.go).
	Limits bool `json:"limits"`
	// Network is allowed.
	Network bool `json:"network"`
	// Protected are the paths made read-only inside the workspace.
	Protected []string `json:"protected,omitempty"`
	// Overlays are the paths the command sees with private layers over
	// them; OverlayErrors say why others are read-only instead.
	Overlays      []string `json:"overlays,omitempty"`
	OverlayErrors []string `json:"overlayErrors,omitempty"`
}

func (s *Spec) validate() error {
	switch s.Profile {
	case Read, WorkspaceWrite, Full:
	default:
		return fmt.Errorf("sandbox: unknown profile %d", int(s.Profile))
	}
	if len(s.Args) == 0 || s.Args[0] == "" {
		return errors.New("sandbox: no command")
	}
	if !filepath.IsAbs(s.Workspace) {
		return fmt.Errorf("sandbox: workspace %q is not an absolute path", s.Workspace)
	}
	s.Workspace = filepath.Clean(s.Workspace)
	if s.Dir == "" {
		s.Dir = s.Workspace
	}
	for _, o := range s.Overlays {
		if o.Path == "" || (o.Upper == "") != (o.Work == "") {
			return fmt.Errorf("sandbox: overlay on %q needs an upper and a work directory, or neither", o.Path)
		}
		for _, q := range append([]string{o.Path, o.Upper, o.Work}, o.Lower...) {
			if q != "" && !filepath.IsAbs(q) {
				return fmt.Errorf("sandbox: overlay path %q is not absolute", q)
			}
		}
	}
	for _, list := range [][]string{{s.Dir}, s.Read, s.Write, s.Protect, s.Hide} {
		for _, p := range list {
			if !filepath.IsAbs(p) {
				return fmt.Errorf("sandbox: path %q is not absolute", p)
			}
		}
	}
	return nil
}

// toolchainDirs are the variables that name a toolchain's directory,
// which commands may read.
var toolchainDirs = []string{"GOROOT", "GOMODCACHE", "GOCACHE", "GOBIN", "RUSTUP_HOME", "NVM_DIR", "PYENV_ROOT",
	"VIRTUAL_ENV", "CONDA_PREFIX", "JAVA_HOME", "VOLTA_HOME", "BUN_INSTALL", "DENO_DIR", "PNPM_HOME"}

// PathVariables are the environment variables of a Spec's Env the sandbox
// takes paths from: what they name becomes readable (the toolchains, the
// PATH) or stays visible (HOME is what is masked). An environment that
// someone other than the user wrote must not set them.
func PathVariables() []string {
	return append([]string{"HOME", "PATH", "GOPATH", "CARGO_HOME"}, toolchainDirs...)
}

// envGet returns the last value of name in env.
func envGet(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

// envSet returns env with name set to value, replacing earlier values.
func envSet(env []string, name, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != name {
			out = append(out, kv)
		}
	}
	return append(out, name+"="+value)
}

// lookPath finds file in the directories of path, as a shell would.
func lookPath(file, path string, isExec func(string) bool) (string, error) {
	if strings.Contains(file, "/") {
		return file, nil
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // a relative PATH entry would depend on the working directory
		}
		if p := filepath.Join(dir, file); isExec(p) {
			return p, nil
		}
	}
	return "", &SetupError{Step: "exec", Msg: fmt.Sprintf("%s: command not found in PATH", file)}
}

// Status is what this machine offers, found once by [Check]: the daemon
// reports it (an initialize capability, `agentd doctor`) and asks for every
// command in a profile it does not [Status.Supports].
type Status struct {
	OS string `json:"os"`
	// Landlock is the kernel's Landlock ABI version, 0 when missing.
	Landlock int `json:"landlock"`
	// EntryPoint: a probe went through the entry point and confined itself.
	EntryPoint bool `json:"entryPoint"`
	// Namespaces: commands get user, mount and PID namespaces (read-only
	// binds inside the workspace, private /tmp, no leftovers).
	Namespaces bool `json:"namespaces"`
	// NetNamespace: commands without network get a network namespace of
	// their session's (loopback only), or an empty one.
	NetNamespace bool `json:"netNamespace"`
	// PrivateProc: commands see only their own processes in /proc.
	PrivateProc bool `json:"privateProc"`
	// Seccomp: commands without network cannot open non-local sockets.
	Seccomp bool `json:"seccomp"`
	// Limits: commands get a process limit and a CPU weight (cgroups).
	Limits bool `json:"limits"`
	// Problems say, one line each, what is missing and why.
	Problems []string `json:"problems,omitempty"`
}

// WithoutNamespaces is s as a Spec.LandlockOnly command sees it.
func (s Status) WithoutNamespaces() Status {
	s.Namespaces, s.NetNamespace, s.PrivateProc = false, false, false
	s.Problems = append(append([]string(nil), s.Problems...), "user namespaces: not used (sandbox: landlock in the settings)")
	return s
}

// Supports reports whether a command can run in p here. Full always can;
// Read needs Landlock and the entry point; WorkspaceWrite also needs the
// namespaces, without which .git/config and .git/hooks could not be kept
// read-only.
func (s Status) Supports(p Profile) bool {
	switch p {
	case Full:
		return true
	case Read:
		return s.Landlock > 0 && s.EntryPoint
	case WorkspaceWrite:
		return s.Landlock > 0 && s.EntryPoint && s.Namespaces
	}
	return false
}

// String is a one-paragraph summary for `agentd doctor` and the logs.
func (s Status) String() string {
	var b strings.Builder
	if s.Supports(Read) {
		state := "active"
		if !s.Supports(WorkspaceWrite) {
			state = "PARTLY active"
		}
		fmt.Fprintf(&b, "kernel sandbox: %s (Landlock ABI %d", state, s.Landlock)
		for _, m := range []struct {
			on   bool
			name string
		}{{s.Namespaces, "user, mount and PID namespaces"}, {s.PrivateProc, "private /proc"},
			{s.NetNamespace, "network namespace"}, {s.Seccomp, "seccomp socket filter"}, {s.Limits, "process limits"}} {
			if m.on {
				b.WriteString("; " + m.name)
			}
		}
		if !s.Namespaces {
			b.WriteString("; Landlock alone")
		}
		b.WriteString(")\n")
		if !s.Supports(WorkspaceWrite) {
			b.WriteString("  read-only commands run confined; workspace-write is NOT AVAILABLE (it needs user namespaces to keep\n" +
				"  the repository's git directory read-only): every other command asks, and runs with your full rights\n")
		}
	} else {
		b.WriteString("kernel sandbox: NOT AVAILABLE: every command needs the user's approval\n")
	}
	for _, p := range []Profile{Read, WorkspaceWrite, Full} {
		mark := "yes"
		if !s.Supports(p) {
			mark = "NO"
		}
		fmt.Fprintf(&b, "  %-16s %s\n", p.String()+":", mark)
	}
	for _, pr := range s.Problems {
		b.WriteString("  problem: " + pr + "\n")
	}
	return b.String()
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// Refusal is a right the sandbox did not give a command that it seems to
// have needed (Cmd.Refused): Right is "read" (and execute), "write" or
// "network"; Path is empty for the network.
type Refusal struct {
	Path  string `json:"path,omitempty"`
	Right string `json:"right"`
}
