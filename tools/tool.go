package tools

import (
	"context"
	"encoding/json"
	"github.com/agentd/agentd/tools/images"
	"time"

	"github.com/agentd/agentd/rag"
)

// Tool is one thing the model can do. Implementations live one per file with
// their description beside them and a typed parameter struct.
type Tool interface {
	Info() Info
	// Prepare decodes and checks the arguments and describes what the call
	// would do, without doing it, so the policy can judge it and the user can
	// see it. A non-nil *Result is a refusal the model reads (bad arguments,
	// a path outside the workspace, a file not read first): the call is not
	// run.
	Prepare(ctx context.Context, env *Env, args json.RawMessage) (*Call, *Result)
}

// Info describes a tool to the model and to the editor.
type Info struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments object.
	Parameters json.RawMessage
	// Kind is how editors show the tool's calls.
	Kind Kind
	// Effect is what the tool's calls may do; the policy decides on it.
	// Left empty it is EffectUnknown.
	Effect  Effect
	Timeout time.Duration
}

// Call is a prepared tool call: checked, described, not yet run. Prepare
// stamps Tool, Kind and Effect from the tool's Info.
type Call struct {
	Tool      string
	Title     string
	Kind      Kind
	Effect    Effect
	Locations []Location
	// Reads lists the workspace-relative paths the call reads.
	Reads []string
	// Writes lists every file the call would change, with its unified diff.
	Writes []FileDiff
	// Command is set for calls that run a process.
	Command *Command
	// Host is the host a network tool (web_fetch) reaches, for the
	// policy, which asks per host.
	Host *HostAccess
	// Detail says, for a call that neither writes files nor runs a
	// command (an MCP tool's), what the user would approve beside its
	// arguments: whose tool it is and what its server claims it does.
	Detail string
	// Run does the work. Failures the model can act on come back as a Result
	// with IsError; a non-nil error means the infrastructure broke.
	Run func(ctx context.Context) (Result, error)
}

// Prepare prepares a call of t (Tool.Prepare) and stamps it with what t's
// Info declares, so every call carries its tool's name, kind and effect.
// The arguments are checked against t's schema first (CheckArgs): a call
// that does not fit is refused with what to change, and t never sees it.
func Prepare(ctx context.Context, t Tool, env *Env, args json.RawMessage) (*Call, *Result) {
	in := t.Info()
	if err := CheckArgs(in.Parameters, args); err != nil {
		return nil, Errorf("invalid arguments: %v", err)
	}
	c, refusal := t.Prepare(ctx, env, args)
	if c != nil {
		c.Tool, c.Kind, c.Effect = in.Name, in.Kind, in.Effect
		if c.Effect == "" {
			c.Effect = EffectUnknown
		}
	}
	return c, refusal
}

// Command is a process a call would run.
type Command struct {
	Line        string
	Cwd         string // workspace-relative; "." is the root
	Interactive bool
	// Exec is the line to run in place of Line, set by Policy.Decide when
	// it judged the line read-only: git's safe settings exported, git's
	// diff commands given --no-ext-diff --no-textconv. "" runs Line.
	Exec string
	// Network: the model said the command needs the network (run_cmd's
	// network parameter). The policy also recognises network programs.
	Network bool
	// Secrets names the run's secrets (Env.Secrets) the line uses; only
	// these reach the command's environment, and such a command is never
	// allowed without the user.
	Secrets []string
	// Confine is how the command runs: set, before Run, by whoever let it
	// run (from the policy's Verdict, or the user's decision). The zero
	// value is the narrowest: the read profile without network.
	Confine Confine
}

// Run is the line a command's process must run.
func (c *Command) Run() string {
	if c.Exec != "" {
		return c.Exec
	}
	return c.Line
}

// Confine is what the kernel lets a command do: its profile, and whether
// it may use the network.
type Confine struct {
	Profile Profile `json:"profile,omitempty"`
	Network bool    `json:"network,omitempty"`
	// Git: the line runs git and nothing else (the policy checked its
	// subcommands and options, and runs it with git's safe settings), so
	// in workspace-write it may write the repository's objects, refs and
	// index; any other command finds the git directory read-only
	// (docs/security.md).
	Git bool `json:"git,omitempty"`
}

// Result is what a tool call produced.
type Result struct {
	// Output is what the model reads: capped, with a note when cut.
	Output string
	// Full is what the editor shows when it differs from Output: the whole
	// output when Output was cut, and never the lines meant for the model
	// alone (the checkpoint line: the editor shows Checkpoint on its own).
	Full      string
	IsError   bool
	Truncated bool
	ExitCode  *int
	// Files lists the files the call changed, with their diffs.
	Files []FileDiff
	// Checkpoint names the change in the session's undo history (c3), when
	// the call changed something.
	Checkpoint string
	// Fetched says what a web fetch got, for the editors.
	Fetched *Fetched
	// Image is a picture for the model to look at (read_file of a PNG):
	// Output says what it is, the picture follows it.
	Image *images.Image
}

// Errorf builds a refusal or failure the model reads.
func Errorf(format string, args ...any) *Result {
	r := Result{Output: sprintf(format, args...), IsError: true}
	return &r
}

// Env is what one run's tool calls share.
type Env struct {
	// Root is the workspace root, absolute with symlinks resolved.
	Root      string
	SessionID string
	RunID     string
	// StateDir is the per-workspace state directory (undo history lives
	// under it, never in the user's .git).
	StateDir string
	// Private are agentd's own directories (AgentDirs): no tool reads or
	// writes inside them, and the walks skip them, wherever the workspace
	// lies.
	Private []string
	// Reads remembers which files the run has read, and when, so an edit of
	// an unread or since-changed file is refused.
	Reads *ReadTracker
	// Asker puts an interactive command's prompt to the user.
	Asker Asker
	// Secrets are environment variables the user supplied for commands:
	// each reaches only a command whose line names it (Command.Secrets),
	// never the model.
	Secrets map[string]string
	// Searcher answers search_semantic; nil when no index is available.
	Searcher Searcher
	// Output receives a running command's output as it comes, for the editor.
	Output func(chunk string)
	// Started is told of each process a call starts, as soon as it runs,
	// so that a daemon killed meanwhile reaps it on its next start (Reap).
	Started func(ProcID)
	// Files reads and writes file content through the editor; nil means the
	// disk.
	Files FileSystem
	// OutputLimit is how many bytes of one result the model reads
	// (OutputLimitFor its context window); 0 means 16 KiB. read_file and
	// run_cmd fit their results in it, cutting at line boundaries.
	OutputLimit int
	// Sandbox confines every process the tools start; nil means the
	// machine's sandbox with the default settings (DefaultSandbox).
	Sandbox *Sandbox
	// Redactor hides the run's secrets in command output, live and whole;
	// nil hides only the secrets typed at an interactive prompt.
	Redactor *Redactor
	// Language answers the navigation tools (the editor's language
	// servers, or agentd's own); nil: none in this session.
	Language Language
	// LanguageTimeout bounds a navigation call's wait for its server; 0
	// means DefaultLanguageTimeout.
	LanguageTimeout time.Duration
	// Hosts judges the hosts a redirect leads to (the policy's rules and
	// grants); nil follows no redirect to another host.
	Hosts HostGate
	// Background is the daemon's background processes (run_cmd's
	// background, the process tool); nil offers none.
	Background *Background
	// ToolCallID is the call being run, for what it starts in the
	// background.
	ToolCallID string
	// WebSearchURL is the search service web_search asks ("" when none is
	// configured: the tool is not offered).
	WebSearchURL string
	// WebCache keeps the session's fetched pages; nil keeps none.
	WebCache *WebCache
	// Images says whether the model takes images, and how large; nil: it
	// does not, and read_file refuses pictures in one line.
	Images ImageReader
}

// ImageReader is what the agent knows of the model's eyes: asked when a
// tool meets a picture, not before (it may have to ask the endpoint).
type ImageReader interface {
	// TakesImages reports whether the model reads images, and if not why
	// (one line, naming the setting).
	TakesImages(ctx context.Context) (bool, string)
	ImageLimits() images.Limits
}

// Asker asks the human on behalf of a running tool. Secret questions get
// a value that must never be logged or shown to the model.
type Asker interface {
	Ask(ctx context.Context, q Question) (Answer, error)
}

// Question is a prompt found in an interactive command's output.
type Question struct {
	Title   string
	Message string
	// Options are the answers found in the prompt (y/n, a menu); empty for
	// a free-text field.
	Options []Option
	Secret  bool
	Command string
	// Key makes the question durable: it is kept with the run, survives a
	// restart of agentd, and asked again with the same Key by the same
	// call (made again after the restart) it gets the answer already
	// given, or waits for it. An MCP server's questions are keyed.
	Key string
	// Closed takes only one of Options (no free text); Multiple takes
	// several (Answer.OptionIDs). Both only for keyed questions.
	Closed   bool
	Multiple bool
}

// Answer is the human's reply. TimedOut or Cancelled report that no one
// answered.
type Answer struct {
	Text     string
	OptionID string
	// OptionIDs are the options picked when the question took several.
	OptionIDs []string
	TimedOut  bool
	Cancelled bool
}

// Searcher is the workspace index, as the search_semantic tool sees it.
type Searcher interface {
	Search(ctx context.Context, query string, limit int) (hits []rag.SearchHit, partial bool, err error)
}
