package tools

import "strings"

// The tools' words: how a call is shown (Kind), what it may do (Effect),
// what it touches (FileDiff, Location), the answers a prompt offers
// (Option), the approval modes and the user's decisions on a confirmation.
// The wire carries them as they are; docs/protocol.md lists them.

// Kind is how an editor shows a tool call; the names are ACP's, so editors
// can pick icons.
type Kind string

// Tool kinds.
const (
	KindRead    Kind = "read"
	KindEdit    Kind = "edit"
	KindSearch  Kind = "search"
	KindExecute Kind = "execute"
	KindFetch   Kind = "fetch"
	KindThink   Kind = "think"
	KindOther   Kind = "other"
)

// Kinds lists every tool kind.
var Kinds = []Kind{KindRead, KindEdit, KindSearch, KindExecute, KindFetch, KindThink, KindOther}

// Effect is what a call may do to the world. The policy decides on it: a
// tool that does not say what it does is EffectUnknown, which asks in every
// mode but full-auto and is refused in read-only.
type Effect string

// Effects, from the most to the least harmless.
const (
	// EffectRead reads the workspace and changes nothing.
	EffectRead Effect = "read"
	// EffectEdit changes workspace files; the call lists them in Writes.
	EffectEdit Effect = "edit"
	// EffectExecute runs a process; the call names it in Command.
	EffectExecute Effect = "execute"
	// EffectNetwork reaches beyond the machine.
	EffectNetwork Effect = "network"
	// EffectUnknown may do anything.
	EffectUnknown Effect = "unknown"
)

// Effects lists every effect.
var Effects = []Effect{EffectRead, EffectEdit, EffectExecute, EffectNetwork, EffectUnknown}

// FileDiff is one file a change touches. Path is relative to the workspace.
type FileDiff struct {
	Path string `json:"path"`
	// Status is added, modified, deleted or moved.
	Status  string `json:"status"`
	OldPath string `json:"oldPath,omitempty"`
	// Diff is a unified diff of the file.
	Diff    string  `json:"diff"`
	OldText *string `json:"oldText,omitempty"`
	NewText *string `json:"newText,omitempty"`
	// RunsLater says who runs the file later, outside any sandbox, and
	// when (VS Code's tasks when the folder opens, direnv's .envrc, a git
	// hook, CI): a change the user should look at (RunsLater).
	RunsLater string `json:"runsLater,omitempty"`
}

// Location points the editor at a place a tool touched.
type Location struct {
	Path string `json:"path"`
	Line int    `json:"line,omitempty"`
}

// Option is one answer a choice or a confirmation offers.
type Option struct {
	OptionID    string `json:"optionId"`
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
}

// Mode is an approval policy: how freely calls run.
type Mode string

// Approval modes, from the strictest.
const (
	ModeReadOnly Mode = "read-only"
	// ModePlan is a session's mode, not the policy's: the agent reads as in
	// read-only (the policy judges its calls as read-only's) and ends by
	// putting a plan to the user, who approves it into another mode or asks
	// for changes. It is not in Modes, the policy's modes.
	ModePlan     Mode = "plan"
	ModeAsk      Mode = "ask"
	ModeAutoEdit Mode = "auto-edit"
	ModeFullAuto Mode = "full-auto"
)

// Modes lists the modes in the order editors show them.
var Modes = []Mode{ModeReadOnly, ModeAsk, ModeAutoEdit, ModeFullAuto}

// Decision is the user's answer to a write or command confirmation.
type Decision string

// Decisions on a confirmation.
const (
	AllowOnce    Decision = "allow_once"
	AllowSession Decision = "allow_session"
	AllowAlways  Decision = "allow_always"
	RejectOnce   Decision = "reject_once"
	RejectAlways Decision = "reject_always"
	// AllowFull runs a command once outside the kernel sandbox, with the
	// user's own rights (ProfileFull). It is the only way to that profile
	// and is never stored as a rule.
	AllowFull Decision = "allow_full"
)

// Decisions lists the decisions in the order editors show them.
var Decisions = []Decision{AllowOnce, AllowSession, AllowAlways, RejectOnce, RejectAlways, AllowFull}

// Allows reports whether the decision lets the call run.
func (d Decision) Allows() bool {
	return d == AllowOnce || d == AllowSession || d == AllowAlways || d == AllowFull
}

// Lasts reports whether the decision outlives the call: it becomes a rule
// (Policy.Grant).
func (d Decision) Lasts() bool { return d == AllowSession || d == AllowAlways || d == RejectAlways }

// Profile is what the kernel lets a command do (docs/security.md): the
// policy picks one for every command it allows or asks about.
type Profile string

// Sandbox profiles, from the narrowest.
const (
	// ProfileRead reads the workspace, the system and the toolchains and
	// writes only a private temporary directory.
	ProfileRead Profile = "read"
	// ProfileWorkspaceWrite also writes the workspace, except the git
	// configuration and hooks, nested git directories and .agentd/.
	ProfileWorkspaceWrite Profile = "workspace-write"
	// ProfileFull is the user's own rights: no confinement. Only the
	// user's explicit choice (AllowFull) gives it, or an approval that
	// says the sandbox is not available.
	ProfileFull Profile = "full"
)

// Profiles lists the profiles, from the narrowest.
var Profiles = []Profile{ProfileRead, ProfileWorkspaceWrite, ProfileFull}

// ModeList names the modes for a message: "read-only, ask, auto-edit, full-auto".
func ModeList() string {
	names := make([]string, len(Modes))
	for i, m := range Modes {
		names[i] = string(m)
	}
	return strings.Join(names, ", ")
}
