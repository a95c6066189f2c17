package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentd/agentd/tools"
	"github.com/agentd/agentd/tools/lsp"
	"github.com/agentd/agentd/tools/mcp"
)

// Config sets up an Agent. Its settings are declared once, in the settings
// table below, with where each is read from; cmd builds the Config from
// them once (DefaultConfig, then LoadJSON and LoadEnv), and each front end
// copies it and fills what is its own: the workspace, the state directory,
// the listener, the file system and the request kinds it can show.
//
// A new setting is a field here, a row in settings, the code that uses it,
// and its line in README.md (go test . -run TestSettingsDoc -update).
type Config struct {
	// The user's settings (see settings).
	Model           ModelConfig
	Policy          tools.Mode    // default approval mode
	QuestionTimeout time.Duration // 0: questions never expire
	ConfirmTimeout  time.Duration // 0: confirmations never expire
	MaxSteps        int
	RetryBase       time.Duration
	// WebSearchURL is the search service of web_search; "" offers no
	// search tool.
	WebSearchURL string
	// Embeddings is the index's embedding endpoint; the agent only carries
	// it to the front ends that start the index.
	Embeddings EmbeddingsConfig
	// TeamIndex is the team index the front ends search (docs/index.md);
	// the agent only carries it.
	TeamIndex TeamIndexConfig
	// Hooks are the user's commands run on a run's events (trusted: from
	// config.json only; docs/extensions.md).
	Hooks Hooks
	// Undo bounds the checkpoints (tools/checkpoint, docs/undo.md): the
	// store a session's checkpoints may use, and the largest file whose
	// content is kept.
	UndoSessionMB, UndoMaxFileMB int
	// CommandEnv names more of the daemon's variables (globs) that commands
	// inherit, over the allow-list (tools.ChildEnv).
	CommandEnv []string
	// Sandbox is "auto" (the kernel sandbox where the machine offers it) or
	// "off" (no command is confined: each asks, and runs with the user's
	// rights).
	Sandbox string
	// CommandProcesses bounds the processes and threads of one confined
	// command (tools.SandboxConfig.MaxProcs); 0 is the sandbox's default.
	CommandProcesses int
	// LanguageServers says which language servers agentd runs itself
	// (tools/lsp), for what the editor does not answer.
	LanguageServers lsp.Settings
	// DiagnosticsTimeout bounds a reply's wait for the language servers'
	// diagnostics after its last edit; LanguageTimeout a navigation
	// call's (go_to_definition, find_references, hover) wait for its server.
	DiagnosticsTimeout, LanguageTimeout time.Duration
	// MCPServers are the user's MCP servers (trusted: they start without
	// asking); the workspace's .mcp.json adds servers that start once
	// approved (docs/extensions.md).
	MCPServers []mcp.Server

	// UserConfigDir holds the user's config.json and rules.json
	// (~/.config/agentd).
	UserConfigDir string
	// FromEditor says the front end also takes settings from the editor
	// (initialize's options), so configuration errors mention them.
	FromEditor bool

	// Each front end's own.
	Root     string // workspace root, absolute
	StateDir string // per-workspace state directory
	// Listener receives every run's notifications; nil means no one listens.
	Listener Listener
	// RequestKinds are the input requests the front end can show; nil
	// means all. AnyRequestKind: it shows any kind, those it does not know
	// from their generic form (InputRequest.AnswerWith, Options, Input).
	RequestKinds   []RequestKind
	AnyRequestKind bool
	// Files returns how a session's runs read and write workspace files
	// (through the editor, for unsaved buffers); nil, or a nil result,
	// means the disk.
	Files    func(sessionID string) tools.FileSystem
	Searcher tools.Searcher
	// Language is the front end's language intelligence (the editor's
	// language servers); nil: none. agentd's own servers answer what it
	// does not.
	Language tools.Language
	Logger   *slog.Logger

	// For tests: the model client (nil: the OpenAI-compatible one) and how
	// many times a failing model call is tried.
	NewModel      func(ModelConfig) Model
	ModelAttempts int
}

// EmbeddingsConfig names an OpenAI-compatible embeddings endpoint.
type EmbeddingsConfig struct {
	BaseURL string
	APIKey  string `json:"-"`
	Model   string
}

// TeamIndexConfig names the team index: a PostgreSQL URL (a secret: it
// may hold a password) and the workspace's repository in it.
type TeamIndexConfig struct {
	URL  string `json:"-"`
	Repo string
}

// Defaults a Config left at zero gets in New.
const (
	defaultMaxSteps      = 50
	defaultModelAttempts = 3
	defaultRetryBase     = time.Second
	// defaultOpenAIURL is the endpoint when only a key is configured.
	defaultOpenAIURL = "https://api.openai.com/v1"
)

// Setting is one thing a user configures: its key in config.json (and in
// initialize's options when the editor may set it), its environment
// variable, its default and what it means.
type Setting struct {
	Key     string // dotted path: "model.baseUrl"
	Env     string // "" when it has none
	Default string // as it would be written; "" for none
	Doc     string
	// Editor says initialize's initializationOptions may set it.
	Editor bool
	// Secret values are never shown.
	Secret bool
	// Object settings take a whole JSON object (mcpServers): config.json's
	// keys below them belong to the setting, not to the table.
	Object bool
	field  func(*Config) value
}

// settings is the table of settings, in the order they are documented.
var settings = []Setting{
	{Key: "model.baseUrl", Env: "OPENAI_BASE_URL", Editor: true, field: func(c *Config) value { return str(&c.Model.BaseURL) },
		Doc: "OpenAI-compatible endpoint, e.g. `http://127.0.0.1:11434/v1` (OpenAI's when only a key is set)"},
	{Key: "model.apiKey", Env: "OPENAI_API_KEY", Editor: true, Secret: true, field: func(c *Config) value { return str(&c.Model.APIKey) },
		Doc: "the key; never logged, never persisted"},
	{Key: "model.name", Env: "AGENTD_MODEL", Editor: true, field: func(c *Config) value { return str(&c.Model.Name) },
		Doc: "model name, e.g. `qwen2.5-coder`"},
	{Key: "model.toolMode", Env: "AGENTD_TOOL_MODE", Default: "native", Editor: true,
		field: func(c *Config) value { return oneOf(&c.Model.ToolMode, "native", "text") },
		Doc:   "`native` (function calling) or `text` (tool calls as JSON in the reply, for models without tool calling)"},
	{Key: "model.images", Env: "AGENTD_MODEL_IMAGES", Default: ImagesAuto, Editor: true,
		field: func(c *Config) value { return oneOf(&c.Model.Images, ImagesAuto, ImagesOn, ImagesOff) },
		Doc:   "whether the model reads images: `on`, `off`, or `auto`: what the endpoint says (llama.cpp's `/props`, Ollama's `/api/show`, a model list's input modalities), else the model's name (gpt-4o, claude-3 …). A prompt's images are sent unless the model is known not to read them; `read_file` of a picture shows it only to a model known to read it"},
	{Key: "model.imageMaxSide", Env: "AGENTD_IMAGE_MAX_SIDE", Default: "2000",
		field: func(c *Config) value { return count(&c.Model.ImageMaxSide) },
		Doc:   "the longest side, in pixels, of an image sent to the model: larger ones are scaled down once, when given (and kept under 3.75 MB)"},
	{Key: "model.contextWindow", Env: "AGENTD_CONTEXT_WINDOW",
		field: func(c *Config) value { return count(&c.Model.ContextWindow) },
		Doc:   "the model's window in tokens; unset, what the endpoint says (its model list, llama.cpp's `/props`, Ollama's `/api/show`), else 128000. The conversation is compacted before it overflows"},
	{Key: "model.reasoningEffort", Env: "AGENTD_REASONING_EFFORT", Editor: true,
		field: func(c *Config) value { return oneOf(&c.Model.ReasoningEffort, "", EffortLow, EffortMedium, EffortHigh) },
		Doc:   "`low`, `medium` or `high`, sent as `reasoning_effort`; unset sends none. Streamed reasoning is shown apart and never sent back to the model"},
	{Key: "model.streamIdleTimeout", Env: "AGENTD_STREAM_IDLE_TIMEOUT", Default: DefaultStreamIdleTimeout.String(),
		field: func(c *Config) value { return duration(&c.Model.StreamIdleTimeout) },
		Doc:   "an attempt ends when the model sends no data for this long, the wait for the first byte included (reasoning models can think for minutes); keep-alive comments do not count"},
	{Key: "model.callTimeout", Env: "AGENTD_MODEL_TIMEOUT", Default: DefaultCallTimeout.String(),
		field: func(c *Config) value { return duration(&c.Model.CallTimeout) },
		Doc:   "the most one attempt may take, however lively"},
	{Key: "model.maxRetryWait", Env: "AGENTD_RETRY_MAX_WAIT", Default: DefaultMaxRetryWait.String(),
		field: func(c *Config) value { return duration(&c.Model.MaxRetryWait) },
		Doc:   "the longest wait before a retry, whether backoff or the server's `Retry-After`"},
	{Key: "approvalPolicy", Env: "AGENTD_POLICY", Default: string(tools.ModeAsk), Editor: true,
		field: func(c *Config) value { return mode(&c.Policy) },
		Doc:   "`read-only`, `plan`, `ask`, `auto-edit` or `full-auto`"},
	{Key: "questionTimeout", Env: "AGENTD_QUESTION_TIMEOUT", Default: "30m", field: func(c *Config) value { return duration(&c.QuestionTimeout) },
		Doc: "a question expires into \"no answer\" after this (`0`: never)"},
	{Key: "confirmTimeout", Env: "AGENTD_CONFIRM_TIMEOUT", Default: "0", field: func(c *Config) value { return duration(&c.ConfirmTimeout) },
		Doc: "a confirmation expires into a rejection after this (`0`: never)"},
	{Key: "maxSteps", Env: "AGENTD_MAX_STEPS", Default: strconv.Itoa(defaultMaxSteps), field: func(c *Config) value { return count(&c.MaxSteps) },
		Doc: "step limit per run; at the limit the model must answer with what it has"},
	{Key: "retryBase", Env: "AGENTD_RETRY_BASE", Default: defaultRetryBase.String(), field: func(c *Config) value { return duration(&c.RetryBase) },
		Doc: "the first wait before a failed model call is tried again; each retry doubles it"},
	{Key: "undo.sessionLimit", Env: "AGENTD_UNDO_SESSION_MB", Default: "256", field: func(c *Config) value { return count(&c.UndoSessionMB) },
		Doc: "MiB of stored contents one session's checkpoints may use; past it (or 1000 checkpoints) its oldest checkpoints expire and can no longer be undone (docs/undo.md)"},
	{Key: "undo.maxFileSize", Env: "AGENTD_UNDO_MAX_FILE_MB", Default: "8", field: func(c *Config) value { return count(&c.UndoMaxFileMB) },
		Doc: "MiB: a larger file's content is not kept, so a command's change to it is reported and cannot be undone"},
	{Key: "webSearch.url", Env: "AGENTD_WEB_SEARCH_URL", field: func(c *Config) value { return str(&c.WebSearchURL) },
		Doc: "a web search service for the `web_search` tool: a SearXNG instance's `/search` (asked for JSON), or any URL with `{query}` in it that answers SearXNG's JSON (`{\"results\": [{\"title\", \"url\", \"content\"}]}`). Unset, the model is offered no search tool; `web_fetch` is offered either way"},
	{Key: "embeddings.baseUrl", Env: "AGENTD_EMBED_BASE_URL", field: func(c *Config) value { return str(&c.Embeddings.BaseURL) },
		Doc: "optional embeddings endpoint: adds vector similarity to the search. Without one (the default) search is keyword-based; `agentd search-eval` says whether a model helps"},
	{Key: "embeddings.model", Env: "AGENTD_EMBED_MODEL", field: func(c *Config) value { return str(&c.Embeddings.Model) },
		Doc: "the embeddings model"},
	{Key: "embeddings.apiKey", Env: "AGENTD_EMBED_API_KEY", Secret: true, field: func(c *Config) value { return str(&c.Embeddings.APIKey) },
		Doc: "the embeddings endpoint's key. Unset, the model's key is sent only when the endpoint is on the model's host (same scheme, host and port); otherwise none"},
	{Key: "index.url", Env: "AGENTD_INDEX_URL", Secret: true, field: func(c *Config) value { return str(&c.TeamIndex.URL) },
		Doc: "a team index to search: PostgreSQL's URL, `postgres://user@host:5432/db` (the password from `PGPASSWORD` or `~/.pgpass` rather than here), where CI publishes the organisation's repositories (`agentd index --publish`). The daemon, `agentd search` and `agentd mcp` then search the workspace's repository there at its published commit, with the workspace's own changes since from a small local index; unreachable, the local index alone (docs/team.md). Unset: the local index alone"},
	{Key: "index.repo", Env: "AGENTD_INDEX_REPO", field: func(c *Config) value { return str(&c.TeamIndex.Repo) },
		Doc: "the workspace's repository in the team index; unset, its `upstream` (else `origin`) remote as host/path, `github.com/acme/api`, as `agentd index --publish` names it"},
	{Key: "commandEnv", Env: "AGENTD_COMMAND_ENV", field: func(c *Config) value { return list(&c.CommandEnv) },
		Doc: "more environment variables commands inherit from the daemon, over the allow-list (locale, `PATH`, `HOME`, toolchain settings): names or globs, e.g. `[\"DATABASE_URL\", \"MY_*\"]` (comma-separated in the variable). A secret named here reaches every command"},
	{Key: "sandbox", Env: "AGENTD_SANDBOX", Default: "auto", field: func(c *Config) value { return oneOf(&c.Sandbox, "auto", "off", "landlock") },
		Doc: "`auto`: every command runs in the kernel sandbox where the machine offers it (`agentd doctor`); `landlock`: with Landlock alone, without user namespaces (as where they are missing): read-only commands stay confined, the others ask and, approved, run with your full rights; `off`: none is confined, so every command asks and, approved, runs with your full rights"},
	{Key: "commandProcesses", Env: "AGENTD_COMMAND_PROCESSES", field: func(c *Config) value { return count(&c.CommandProcesses) },
		Doc: "the most processes and threads one confined command (with everything it starts) may have at once; unset, 4096 (or an eighth of the machine's `pid_max` where that is less). A fork bomb stops there; a build needing more threads fails to start them"},
	{Key: "languageServers", Env: "AGENTD_LANGUAGE_SERVERS", Default: "auto", field: func(c *Config) value { return languageServers(&c.LanguageServers) },
		Doc: "`auto`: agentd runs the language server of a workspace language when the editor does not answer for it and the server is on the PATH (gopls, typescript-language-server, pyright-langserver, rust-analyzer, clangd), in the sandbox's read profile, stopped after 10 idle minutes; `off`: none; or an object by language (`go`, `typescript`, `python`, `rust`, `c`) whose entries are `false` or `{\"command\": [\"gopls\", \"-remote=auto\"]}`"},
	{Key: "diagnosticsTimeout", Env: "AGENTD_DIAGNOSTICS_TIMEOUT", Default: defaultDiagnosticsTimeout.String(),
		field: func(c *Config) value { return duration(&c.DiagnosticsTimeout) },
		Doc:   "the most a model reply waits, after its last edit, for the language servers' diagnostics of the files it changed (`0`: don't check); a server still busy then is reported as such"},
	{Key: "languageTimeout", Env: "AGENTD_LANGUAGE_TIMEOUT", Default: tools.DefaultLanguageTimeout.String(),
		field: func(c *Config) value { return duration(&c.LanguageTimeout) },
		Doc:   "the most `go_to_definition`, `find_references` and `hover` wait for their language server (a cold one loads the workspace first)"},
	{Key: "hooks", Object: true, field: func(c *Config) value { return hooksValue(&c.Hooks) },
		Doc: "commands run on `before_tool` (may deny a call), `after_tool`, `input_requested` and `run_finished`, with the event as JSON on stdin, in the sandbox; config.json only, see docs/extensions.md"},
	{Key: "mcpServers", Object: true, field: func(c *Config) value { return mcpServers(&c.MCPServers) },
		Doc: "MCP servers by name: `{\"command\", \"args\", \"env\", \"cwd\"}` (stdio, in the sandbox) or `{\"url\", \"headers\"}` (streamable HTTP); see docs/extensions.md"},
}

// Settings lists every setting, in the order they are documented.
func Settings() []Setting { return slices.Clone(settings) }

// Value shows the setting's value in c ("" when unset; secrets masked).
func (s Setting) Value(c *Config) string {
	v := s.field(c).String()
	if s.Secret && v != "" {
		return "(set)"
	}
	return v
}

// DefaultConfig is the Config of the defaults in the settings table.
func DefaultConfig() Config {
	var c Config
	for _, s := range settings {
		if s.Default != "" {
			if err := s.field(&c).set(s.Default); err != nil {
				panic(fmt.Sprintf("agent: default of %s: %v", s.Key, err)) // a mistake in the table
			}
		}
	}
	return c
}

// LoadEnv applies the settings found in the environment (lookup is
// os.LookupEnv). An empty variable counts as unset.
func (c *Config) LoadEnv(lookup func(string) (string, bool)) error {
	for _, s := range settings {
		if s.Env == "" {
			continue
		}
		if v, ok := lookup(s.Env); ok && v != "" {
			if err := s.field(c).set(v); err != nil {
				return fmt.Errorf("%s=%q: %w", s.Env, v, err)
			}
		}
	}
	c.derive()
	return nil
}

// LoadJSON applies the settings of a JSON object shaped like config.json;
// where names it in errors and warnings (a file's path, or
// "initializationOptions"). With editorOnly, only the settings an editor
// may set apply and the others are reported as not allowed there. It
// returns a warning for each key it does not know, which it ignores.
func (c *Config) LoadJSON(data []byte, where string, editorOnly bool) (warnings []string, err error) {
	if len(bytes.TrimSpace(data)) == 0 || string(bytes.TrimSpace(data)) == "null" {
		return nil, nil
	}
	leaves := map[string]json.RawMessage{}
	if err := flatten("", data, leaves, objectKeys()); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	keys := make([]string, 0, len(leaves))
	for k := range leaves {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		i := slices.IndexFunc(settings, func(s Setting) bool { return s.Key == k })
		switch {
		case i < 0 && slices.ContainsFunc(settings, func(s Setting) bool { return strings.HasPrefix(s.Key, k+".") }):
			return warnings, fmt.Errorf("%s: %s must be an object", where, k)
		case i < 0:
			warnings = append(warnings, fmt.Sprintf("%s: unknown key %q (ignored)", where, k))
		case editorOnly && !settings[i].Editor:
			warnings = append(warnings, fmt.Sprintf("%s: %q cannot be set here (ignored); set it in config.json or the environment", where, k))
		default:
			more, err := settings[i].field(c).setJSON(leaves[k])
			for _, w := range more {
				warnings = append(warnings, where+": "+w)
			}
			if err != nil {
				return warnings, fmt.Errorf("%s: %s: %w", where, k, err)
			}
		}
	}
	c.derive()
	return warnings, nil
}

// flatten maps each leaf of a JSON object to its dotted path, and each
// object setting's key to its whole object; null leaves are left out
// (unset).
func flatten(prefix string, data []byte, out map[string]json.RawMessage, objects []string) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		if prefix == "" {
			return fmt.Errorf("not a JSON object: %w", err)
		}
		return fmt.Errorf("%s must be an object", prefix)
	}
	for k, v := range obj {
		path := k
		if prefix != "" {
			path = prefix + "." + k
		}
		switch t := bytes.TrimSpace(v); {
		case string(t) == "null":
		case slices.Contains(objects, path):
			out[path] = t
		case len(t) > 0 && t[0] == '{':
			if err := flatten(path, t, out, objects); err != nil {
				return err
			}
		default:
			out[path] = t
		}
	}
	return nil
}

// objectKeys lists the keys of the object settings.
func objectKeys() []string {
	var out []string
	for _, s := range settings {
		if s.Object {
			out = append(out, s.Key)
		}
	}
	return out
}

// derive fills the settings that follow from others: a key alone means
// OpenAI's endpoint.
func (c *Config) derive() {
	if c.Model.BaseURL == "" && c.Model.APIKey != "" {
		c.Model.BaseURL = defaultOpenAIURL
	}
}

// EmbeddingsKey is the key sent to the embeddings endpoint: its own, or
// the model's when the endpoint is on the model's host; otherwise none, so
// the model's key never goes to another host.
func (c *Config) EmbeddingsKey() string {
	if c.Embeddings.APIKey != "" {
		return c.Embeddings.APIKey
	}
	if sameOrigin(c.Embeddings.BaseURL, c.Model.BaseURL) {
		return c.Model.APIKey
	}
	return ""
}

// sameOrigin reports whether two URLs have the same scheme, host and port.
func sameOrigin(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	if err1 != nil || err2 != nil || ua.Host == "" {
		return false
	}
	return strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Hostname(), ub.Hostname()) && port(ua) == port(ub)
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	return map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
}

// ConfigFile is where the user's config.json is read from.
func (c *Config) ConfigFile() string {
	if c.UserConfigDir == "" {
		return ""
	}
	return filepath.Join(c.UserConfigDir, "config.json")
}

// CheckModel says exactly what is missing for the model to be called, and
// where each missing setting is read from; nil when nothing is.
func (c *Config) CheckModel() error {
	var missing []string
	if c.Model.BaseURL == "" {
		missing = append(missing, "model.baseUrl")
	}
	if c.Model.Name == "" {
		missing = append(missing, "model.name")
	}
	if len(missing) == 0 {
		return nil
	}
	var what string
	switch {
	case len(missing) == 2:
		what = "no model is configured"
	case missing[0] == "model.name":
		what = "no model name is configured (the endpoint is " + c.Model.BaseURL + ")"
	default:
		what = "no model endpoint is configured for model " + c.Model.Name
	}
	places := make([]string, len(missing))
	for i, key := range missing {
		places[i] = c.whereSet(key)
	}
	return noModelError(what + ". Set " + strings.Join(places, ", and ") +
		". For Ollama: OPENAI_BASE_URL=http://127.0.0.1:11434/v1 AGENTD_MODEL=qwen2.5-coder. `agentd search` works without a model.")
}

// noModelError is ErrNoModel with the whole story in its message.
type noModelError string

func (e noModelError) Error() string        { return string(e) }
func (e noModelError) Is(target error) bool { return target == ErrNoModel }

// whereSet names every place a setting is read from.
func (c *Config) whereSet(key string) string {
	i := slices.IndexFunc(settings, func(s Setting) bool { return s.Key == key })
	s := settings[i]
	places := []string{s.Env}
	file := c.ConfigFile()
	if file == "" {
		file = "config.json"
	}
	places = append(places, s.Key+" in "+file)
	if c.FromEditor && s.Editor {
		places = append(places, "initializationOptions."+s.Key+" in the editor's settings")
	}
	return strings.Join(places, " or ")
}

// value is a setting's field, read from text (the environment, defaults)
// or from JSON.
type value interface {
	set(string) error
	// setJSON may return warnings: keys inside an object setting that it
	// ignored.
	setJSON(json.RawMessage) ([]string, error)
	String() string
}

type textValue struct {
	get   func() string
	parse func(string) error
}

func (v textValue) set(s string) error { return v.parse(s) }
func (v textValue) String() string     { return v.get() }

// setJSON takes a JSON string, or a number for the numeric settings.
func (v textValue) setJSON(raw json.RawMessage) ([]string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return nil, v.parse(s)
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		return nil, v.parse(n.String())
	}
	return nil, fmt.Errorf("must be a string, not %s", raw)
}

// languageServers reads the languageServers setting: a word ("auto",
// "off"), or an object by language, in config.json or, as JSON, in the
// environment.
func languageServers(p *lsp.Settings) value {
	return languageValue{p}
}

type languageValue struct{ p *lsp.Settings }

func (v languageValue) set(s string) error {
	got, _, err := lsp.ParseWord(s)
	if err == nil {
		*v.p = got
	}
	return err
}

func (v languageValue) setJSON(raw json.RawMessage) ([]string, error) {
	got, warnings, err := lsp.ParseSettings(raw)
	if err == nil {
		*v.p = got
	}
	return warnings, err
}

func (v languageValue) String() string { return v.p.String() }

// mcpServers reads config.json's mcpServers, the user's (trusted) servers.
func mcpServers(p *[]mcp.Server) value {
	return objectValue{get: func() string { return mcp.Summary(*p) }, parse: func(raw json.RawMessage) ([]string, error) {
		servers, warnings, err := mcp.ParseServers(raw, mcp.OriginUser)
		if err == nil {
			*p = servers
		}
		return warnings, err
	}}
}

// objectValue is a setting whose value is a JSON object, parsed whole.
type objectValue struct {
	get   func() string
	parse func(json.RawMessage) ([]string, error)
}

func (v objectValue) set(string) error {
	return errors.New("is an object: set it in config.json")
}
func (v objectValue) setJSON(raw json.RawMessage) ([]string, error) { return v.parse(raw) }
func (v objectValue) String() string                                { return v.get() }

func str(p *string) value {
	return textValue{get: func() string { return *p }, parse: func(s string) error { *p = s; return nil }}
}

func oneOf(p *string, allowed ...string) value {
	return textValue{get: func() string { return *p }, parse: func(s string) error {
		if !slices.Contains(allowed, s) {
			return fmt.Errorf("%q is not one of %s", s, strings.Join(allowed, ", "))
		}
		*p = s
		return nil
	}}
}

func mode(p *tools.Mode) value {
	return textValue{get: func() string { return string(*p) }, parse: func(s string) error {
		if !slices.Contains(Modes, tools.Mode(s)) {
			return fmt.Errorf("%q is not a mode: one of %s", s, ModeList())
		}
		*p = tools.Mode(s)
		return nil
	}}
}

func duration(p *time.Duration) value {
	return textValue{get: func() string { return p.String() }, parse: func(s string) error {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return fmt.Errorf("%q is not a duration such as 30s, 10m or 0", s)
		}
		*p = d
		return nil
	}}
}

// listValue is a list of names: a JSON array of strings, or a
// comma-separated string (the environment).
type listValue struct{ p *[]string }

func list(p *[]string) value { return listValue{p} }

func (v listValue) set(s string) error {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	*v.p = out
	return nil
}

func (v listValue) setJSON(raw json.RawMessage) ([]string, error) {
	var xs []string
	if err := json.Unmarshal(raw, &xs); err == nil {
		*v.p = xs
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return nil, v.set(s)
	}
	return nil, fmt.Errorf("must be a list of strings, not %s", raw)
}

func (v listValue) String() string { return strings.Join(*v.p, ",") }

func count(p *int) value {
	return textValue{get: func() string { return strconv.Itoa(*p) }, parse: func(s string) error {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			return fmt.Errorf("%q is not a positive whole number", s)
		}
		*p = n
		return nil
	}}
}

func (c *Config) defaults() {
	if c.Policy == "" {
		c.Policy = tools.ModeAsk
	}
	if c.MaxSteps <= 0 {
		c.MaxSteps = defaultMaxSteps
	}
	if c.ModelAttempts <= 0 {
		c.ModelAttempts = defaultModelAttempts
	}
	if c.RetryBase <= 0 {
		c.RetryBase = defaultRetryBase
	}
	if c.NewModel == nil {
		c.NewModel = NewOpenAIModel
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Listener == nil {
		c.Listener = nobody{}
	}
}
