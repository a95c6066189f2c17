package agent

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/agentd/agentd/tools"
	"github.com/agentd/agentd/tools/lsp"
	"github.com/agentd/agentd/tools/mcp"
	"github.com/agentd/agentd/tools/policy"
)

// Agent runs the runs of one workspace.
type Agent struct {
	cfg      Config
	log      *slog.Logger
	listener Listener
	store    *store
	policy   *policy.Policy
	sandbox  *tools.Sandbox
	private  []string // agentd's own directories (tools.AgentDirs): no tool touches them
	tools    map[string]tools.Tool
	order    []tools.Tool
	rec      *recorder
	rmap     repoMapper
	pfx      prefixes
	hooks    *hookRunner
	warned   sync.Map // session id → told the sandbox cannot confine commands
	mcp      *mcp.Manager
	lang     tools.Language // the editor's language servers, then agentd's own; nil: none
	own      *lsp.Manager   // agentd's own language servers; nil when off
	wg       sync.WaitGroup
	open     atomic.Int64
	closing  atomic.Bool // Shutdown began: open requests stay open for the next start
	index    *sessionIndex
	saveMu   sync.Mutex // serializes session saves
	models   modelListCache
	given    givenSecrets // secret answers, hidden from every later run
	images   *imageStore
	// background runs the sessions' background processes (processes.go).
	background *tools.Background
	procMu     sync.Mutex // serializes the record's writes
	procNotes  procNotes
	webPages   *tools.WebCache // pages fetched, by session and URL
	vision     visionProbe

	// Checkpoints (undo.go): limits set once, background upkeep, stopped at
	// Shutdown.
	undoOnce    sync.Once
	maintaining atomic.Bool
	stopCtx     context.Context
	stopWork    context.CancelFunc

	// mcpTold holds the MCP failures each session was told of (session,
	// server, error): a server that keeps failing is one notice, not one
	// at every run.
	mcpTold sync.Map

	modelMu sync.Mutex // guards mdl, mcfg, named
	mdl     Model
	mcfg    ModelConfig
	named   map[string]Model // sessions' other models of the endpoint

	// inbox holds every input request of every run (inbox.go).
	inbox *inbox

	mu        sync.Mutex // guards runs, sessions, openFiles
	runs      map[string]*run
	sessions  map[string]*sessionRecord
	openFiles []string
}

// New opens the workspace's state: sessions, paused runs and their open
// requests, which wait again for their answers.
func New(cfg Config) (*Agent, error) {
	cfg.defaults()
	st, err := openStore(cfg.StateDir)
	if err != nil {
		return nil, err
	}
	sb := tools.NewSandbox(tools.SandboxConfig{Off: cfg.Sandbox == "off", LandlockOnly: cfg.Sandbox == "landlock", EnvAllow: cfg.CommandEnv, Logger: cfg.Logger,
		Own: tools.AgentDirs(ownDirs(cfg)...), MaxProcs: cfg.CommandProcesses})
	// One list of agentd's own directories: the sandbox hides them from
	// commands, the file tools and the policy keep out of them.
	private := tools.AgentDirs(sb.Hidden()...)
	pol, err := policy.Load(policy.Config{Mode: policyMode(cfg.Policy), Root: cfg.Root, StateDir: cfg.StateDir,
		UserConfigDir: cfg.UserConfigDir, Sandbox: sb, Private: private})
	if err != nil {
		return nil, fmt.Errorf("loading policy: %w", err)
	}
	for _, r := range pol.IgnoredWorkspaceRules() {
		cfg.Logger.Warn("a workspace rule that allows is ignored: the repository's .agentd/rules.json may deny or ask, never allow; "+
			"put allow rules in your own rules.json", "rule", r.String())
	}
	a := &Agent{images: newImageStore(cfg.StateDir), webPages: tools.NewWebCache(), cfg: cfg, log: cfg.Logger, listener: cfg.Listener, store: st, policy: pol, sandbox: sb, private: private, tools: map[string]tools.Tool{},
		runs: map[string]*run{}, sessions: map[string]*sessionRecord{}, inbox: newInbox(),
		rec: newRecorder(cfg.StateDir, cfg.Logger), mcfg: cfg.Model, index: newSessionIndex(st, cfg.Logger), hooks: newHookRunner(cfg, sb)}
	a.stopCtx, a.stopWork = context.WithCancel(context.Background())
	for _, t := range tools.Builtins() {
		a.tools[t.Info().Name] = t
		a.order = append(a.order, t)
	}
	a.mcp = newMCP(cfg, sb)
	a.startBackground()
	a.lang = cfg.Language
	if cfg.LanguageServers.Auto {
		a.own = lsp.New(lsp.Config{Root: cfg.Root, Sandbox: sb, Settings: cfg.LanguageServers, Logger: cfg.Logger})
		a.lang = tools.Chain(cfg.Language, a.own)
	}
	if err := a.load(); err != nil {
		a.log.Warn("loading state", "err", err)
	}
	return a, nil
}

// load restores every unfinished run, and nothing else: sessions are read
// when first used. A run that was waiting on people waits again; one cut off
// mid-step is paused until resumed. A command a restart cut off is not run
// again (interruptedLocked).
func (a *Agent) load() error {
	recs, err := a.store.loadOpenRuns()
	// The sessions' own runs first: a subagent reports through its parent.
	slices.SortStableFunc(recs, func(x, y *runRecord) int { return cmp.Compare(depth(x), depth(y)) })
	var parents []*run
	for _, rec := range recs {
		if rec.State.Finished() {
			continue
		}
		if r := a.restore(rec); r != nil {
			parents = append(parents, r)
		}
	}
	for _, r := range parents {
		r.restoreAwaiting() // subagent.go: once its subagents are back
	}
	a.startQueuedAfterLoad()
	return err
}

// depth is 0 for a session's own run, 1 for a subagent.
func depth(rec *runRecord) int {
	if rec.Parent != nil {
		return 1
	}
	return 0
}

// restore brings back an unfinished run from its header and journal. A run
// whose task calls await subagents is returned: whether it waits or pauses
// is decided once they are restored too (restoreAwaiting).
func (a *Agent) restore(rec *runRecord) *run {
	fresh, err := a.store.restoreRun(rec)
	if err != nil {
		a.log.Error("loading run", "run_id", rec.ID, "err", err)
		return nil
	}
	if rec.State.Finished() {
		// It ended, but its header missed the news.
		if err := a.store.saveRun(rec, false); err != nil {
			a.log.Warn("mending a run's header", "run_id", rec.ID, "err", err)
			return nil
		}
		if err := a.store.markClosed(rec.ID); err != nil {
			a.log.Warn("closing run", "run_id", rec.ID, "err", err)
		}
		return nil
	}
	r := a.newRun(rec)
	r.headed = true
	if !fresh {
		r.saved = len(rec.Messages)
	} else {
		for p := range rec.Baseline {
			r.newBase = append(r.newBase, p)
		}
	}
	rec.migrateRequests()
	stream := rec.ID
	if rec.Parent != nil {
		stream = rec.Parent.RunID // a subagent's notifications are in its parent's log
	}
	last, sent := a.store.sentSeqs(stream)
	if last > rec.Seq {
		rec.Seq = last
	}
	a.runs[rec.ID] = r
	a.restoreSettings(r)
	if r.openLog() != nil {
		return nil
	}
	r.steers = a.store.loadSteers(rec.ID)
	if rec.Parent != nil && !a.linkSubagent(r) {
		return nil // its parent no longer waits for it: ended (subagent.go)
	}
	if rec.State == StateQueued {
		return nil // its turn comes when the session's runs before it end (startQueuedAfterLoad)
	}
	// Not started yet: nothing else holds r.
	r.restoreRequestsLocked(sent)
	r.interruptedLocked()
	if r.awaitsSubagents() {
		return r
	}
	waiting := len(r.openRequestsLocked()) > 0
	if waiting || rec.State == StateRequiresAction && len(rec.Pending) > 0 {
		r.start()
		return nil
	}
	r.pauseRestored()
	return nil
}

// pauseRestored pauses a run a restart cut off in the middle of a step: an
// editor resumes it by itself (PauseRestart).
func (r *run) pauseRestored() {
	r.mu.Lock()
	r.pauseLocked(PauseRestart, "interrupted by a daemon restart in the middle of a step")
	r.mu.Unlock()
	r.checkpoint()
}

func (a *Agent) newRun(rec *runRecord) *run {
	r := &run{a: a, rec: rec, prepared: map[*pendingCall]*tools.Call{},
		secrets: map[string]string{}, red: tools.NewRedactor(), wake: make(chan struct{}, 1), ended: make(chan struct{})}
	turn := rec.ID
	if rec.Parent != nil {
		turn = rec.Parent.RunID // a subagent's changes are its parent's turn's (undo, rewind)
	}
	r.env = &tools.Env{Root: a.cfg.Root, SessionID: rec.SessionID, RunID: turn, StateDir: a.cfg.StateDir, Private: a.private,
		Reads: tools.NewReadTracker(), Asker: r, Searcher: a.cfg.Searcher, Sandbox: a.sandbox, Redactor: r.red,
		Language: a.lang, LanguageTimeout: a.cfg.LanguageTimeout, Images: modelEyes{r},
		Hosts: r, WebCache: a.webPages, Background: a.background, WebSearchURL: a.cfg.WebSearchURL}
	if a.cfg.Files != nil {
		r.env.Files = a.cfg.Files(rec.SessionID)
	}
	for _, s := range a.given.all() {
		r.red.AddNamed(s.name, s.value)
	}
	for _, v := range tools.GitConfigSecrets(a.cfg.Root) {
		r.red.Add(v) // before Notify: the file is read again by every run
	}
	// Every secret the run learns (an answer, a value typed at a password
	// prompt) is hidden from later runs too.
	r.red.Notify(a.given.add)
	return r
}

// openLog opens the run's event log and journal for appending.
func (r *run) openLog() error {
	var f *os.File
	if r.rec.Parent == nil { // a subagent's notifications go to its parent's log
		var err error
		if f, err = r.a.store.openEventLog(r.rec.ID); err != nil {
			r.logger().Error("opening event log", "err", err)
			return fmt.Errorf("%w: %w", ErrNotSaved, err)
		}
	}
	j, err := r.a.store.openJournal(r.rec.ID)
	if err != nil {
		if f != nil {
			f.Close()
		}
		r.logger().Error("opening the run's journal", "err", err)
		return fmt.Errorf("%w: %w", ErrNotSaved, err)
	}
	r.log, r.journal = f, j
	return nil
}

// closeLogLocked closes the run's files.
func (r *run) closeLogLocked() {
	if r.log != nil {
		r.log.Close()
	}
	if r.journal != nil {
		r.journal.close()
	}
	r.log, r.journal = nil, nil
}

// SetModel replaces the model endpoint (from initialize options).
func (a *Agent) SetModel(cfg ModelConfig) {
	a.modelMu.Lock()
	defer a.modelMu.Unlock()
	a.mcfg, a.mdl, a.named = cfg, nil, nil
}

// ModelConfig returns the endpoint in use.
func (a *Agent) ModelConfig() ModelConfig {
	a.modelMu.Lock()
	defer a.modelMu.Unlock()
	return a.mcfg
}

func (a *Agent) model() Model {
	a.modelMu.Lock()
	defer a.modelMu.Unlock()
	if a.mdl == nil {
		a.mdl = a.cfg.NewModel(a.mcfg)
	}
	return a.mdl
}

func (a *Agent) textMode() bool { return a.ModelConfig().toolMode() == "text" }

// SetOpenFiles records the files open in the editor (workspace-relative).
func (a *Agent) SetOpenFiles(paths []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.openFiles = slices.Clone(paths)
}

// ToolNames lists every tool the model can call.
func (a *Agent) ToolNames() []string {
	return append(a.toolNames(), askToolName, planToolName, proposeToolName, taskToolName)
}

func (a *Agent) toolNames() []string {
	names := make([]string, 0, len(a.order))
	for _, t := range a.order {
		names = append(names, t.Info().Name)
	}
	return names
}

func (a *Agent) renders(kind RequestKind) bool {
	return a.cfg.RequestKinds == nil || a.cfg.AnyRequestKind || slices.Contains(a.cfg.RequestKinds, kind)
}

// reviewOpenConfirms resolves open confirmations that a newly granted rule
// now allows, so parallel identical calls are approved once.
func (a *Agent) reviewOpenConfirms(ctx context.Context, sessionID string) {
	a.mu.Lock()
	var runs []*run
	for _, r := range a.runs {
		if r.rec.SessionID == sessionID {
			runs = append(runs, r)
		}
	}
	a.mu.Unlock()
	for _, r := range runs {
		r.reviewConfirms(ctx)
	}
}

// reviewConfirms judges each open confirmation of the run's step again. A
// call a restart left unprepared is prepared again first (decisionCall),
// without the lock; one whose network need the request alone cannot tell
// stays asked.
func (r *run) reviewConfirms(ctx context.Context) {
	r.mu.Lock()
	var open []*request
	for _, q := range r.openRequestsLocked() {
		if q.call != nil && requestRules[q.Req.Kind].decision {
			open = append(open, q)
		}
	}
	r.mu.Unlock()
	for _, q := range open {
		call, exact := r.decisionCall(ctx, q)
		if !exact && q.Req.Network {
			continue
		}
		r.mu.Lock()
		r.approveIfAllowedLocked(q, call)
		r.mu.Unlock()
	}
}

// approveIfAllowedLocked resolves the confirmation q, still open, when the
// policy now allows its call.
func (r *run) approveIfAllowedLocked(q *request, call *tools.Call) {
	if !q.open() {
		return // answered meanwhile
	}
	d := r.a.policy.Decide(r.rec.SessionID, policyMode(r.rec.Policy), call)
	if d.Action != policy.Allow {
		return
	}
	pc := q.call
	prev := pc.Confine
	if call.Command != nil {
		conf := d.Confine
		pc.Confine = &conf
	}
	if err := r.resolveLocked(q, &resolution{Outcome: decided(tools.AllowOnce), By: ByPolicy, Decision: tools.AllowOnce}); err != nil {
		pc.Confine = prev
		r.logger().Error("the confirmation stays open: its approval could not be saved", "request_id", q.Req.RequestID, "err", err)
		return
	}
	r.a.audit(auditEntry{Run: r.rec, Call: call, CallID: q.CallID, RequestID: q.Req.RequestID,
		Decision: string(tools.AllowOnce), By: ByPolicy, Rule: d.Rule, Confine: pc.Confine})
}

// Shutdown stops every run's work without changing what is persisted: runs
// waiting on people keep waiting, runs cut off mid-step are paused on the
// next start.
func (a *Agent) Shutdown() {
	a.closing.Store(true)
	a.mu.Lock()
	runs := make([]*run, 0, len(a.runs))
	for _, r := range a.runs {
		runs = append(runs, r)
	}
	a.mu.Unlock()
	a.hooks.close() // a run ending now does not wait for its run_finished hooks
	for _, r := range runs {
		r.stop(errShutdown)
	}
	a.rmap.stop()
	a.background.Close()
	a.stopWork()
	a.wg.Wait()
	a.closeCheckpoints()
	a.mcp.Close()
	if a.own != nil {
		a.own.Close()
	}
	for _, r := range runs {
		r.mu.Lock()
		r.closeLogLocked()
		r.mu.Unlock()
	}
	a.rec.close()
	a.index.close()
}
