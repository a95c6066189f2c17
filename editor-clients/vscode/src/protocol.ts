// The agentd protocol (docs/protocol.md), as TypeScript types. No vscode import: the unit tests
// load this module in plain node.

export const PROTOCOL_VERSION = 1;

/** Every method name the extension uses, in one place (checked against the daemon's contract). */
export const Method = {
  initialize: 'initialize',
  initialized: 'initialized',
  shutdown: 'shutdown',
  exit: 'exit',
  run: 'agent/run',
  reply: 'agent/reply',
  confirm: 'agent/confirm',
  cancel: 'agent/cancel',
  resume: 'agent/resume',
  pending: 'agent/pending',
  events: 'agent/events',
  sessions: 'agent/sessions',
  history: 'agent/history',
  configure: 'agent/configure',
  models: 'agent/models',
  commands: 'agent/commands',
  checkpoints: 'agent/checkpoints',
  undo: 'agent/undo',
  rewind: 'agent/rewind',
  mcpStatus: 'mcp/status',
  mcpEnable: 'mcp/enable',
  mcpDisable: 'mcp/disable',
  mcpRestart: 'mcp/restart',
  rules: 'rules/list',
  revokeRule: 'rules/revoke',
  editRule: 'rules/edit',
  renameSession: 'agent/renameSession',
  deleteSession: 'agent/deleteSession',
  context: 'agent/context',
  compact: 'agent/compact',
  indexStatus: 'index/status',
  update: 'agent/update',
  inputRequest: 'agent/inputRequest',
  inputResolved: 'agent/inputResolved',
  runState: 'agent/runState',
  mcpChanged: 'mcp/changed',
  progress: '$/progress',
  progressCreate: 'window/workDoneProgress/create',
  didOpen: 'textDocument/didOpen',
  didChange: 'textDocument/didChange',
  didSave: 'textDocument/didSave',
  didClose: 'textDocument/didClose',
} as const;

/** What the extension sends and handles, by direction: the contract test checks each list. */
export const CLIENT_REQUESTS = [
  Method.initialize,
  Method.shutdown,
  Method.run,
  Method.reply,
  Method.confirm,
  Method.cancel,
  Method.resume,
  Method.pending,
  Method.events,
  Method.sessions,
  Method.history,
  Method.configure,
  Method.models,
  Method.commands,
  Method.checkpoints,
  Method.undo,
  Method.rewind,
  Method.mcpStatus,
  Method.mcpEnable,
  Method.mcpDisable,
  Method.mcpRestart,
  Method.rules,
  Method.revokeRule,
  Method.editRule,
  Method.renameSession,
  Method.deleteSession,
  Method.context,
  Method.compact,
  Method.indexStatus,
] as const;
export const CLIENT_NOTIFICATIONS = [Method.initialized, Method.exit, Method.didOpen, Method.didChange, Method.didSave, Method.didClose] as const;
export const SERVER_NOTIFICATIONS = [Method.update, Method.inputRequest, Method.inputResolved, Method.runState, Method.progress, Method.mcpChanged] as const;
export const SERVER_REQUESTS = [Method.progressCreate] as const;

export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  ServerNotInitialized: -32002,
  RequestCancelled: -32800,
  UnknownRun: -32010,
  UnknownRequest: -32011,
  AlreadyResolved: -32012,
  WrongKind: -32013,
  Expired: -32014,
  IndexUnavailable: -32015,
  SessionBusy: -32016,
  UnknownSession: -32017,
  NoModel: -32018,
  RunNotPaused: -32019,
  ShuttingDown: -32020,
  NotSaved: -32021,
  UnknownCheckpoint: -32022,
  UnknownRule: -32023,
} as const;

export const PROMPT_KINDS = ['question', 'choice', 'confirm_write', 'confirm_command', 'secret'] as const;
export type PromptKind = (typeof PROMPT_KINDS)[number];

export const DECISIONS = ['allow_once', 'allow_session', 'allow_always', 'reject_once', 'reject_always', 'allow_full'] as const;
export type Decision = (typeof DECISIONS)[number];

export const POLICIES = ['read-only', 'ask', 'auto-edit', 'full-auto'] as const;
export type ApprovalPolicy = (typeof POLICIES)[number];

export const UPDATE_KINDS = ['message_chunk', 'thought_chunk', 'plan', 'tool_call', 'tool_call_update', 'usage', 'files_changed', 'result', 'instructions', 'notice', 'context'] as const;
export type UpdateKind = (typeof UPDATE_KINDS)[number];

export const RUN_STATES = ['running', 'requires_action', 'paused', 'completed', 'failed', 'cancelled'] as const;
export type RunStateName = (typeof RUN_STATES)[number];
export const TERMINAL_STATES: ReadonlySet<string> = new Set<RunStateName>(['completed', 'failed', 'cancelled']);

/** The reasoning efforts a session may choose (initialize's reasoningEfforts says which the daemon takes). */
export const REASONING_EFFORTS = ['low', 'medium', 'high'] as const;

/** The kernel sandbox profiles a command runs in once allowed (confirm_command's `profile`). */
export const PROFILES = ['read', 'workspace-write', 'full'] as const;
export const UNDO_STATUSES = ['restored', 'conflicts', 'nothing', 'preview'] as const;
export const ON_CONFLICT = ['stop', 'skip', 'overwrite'] as const;
export type OnConflict = (typeof ON_CONFLICT)[number];
export const CONFLICT_KINDS = ['changed', 'missing'] as const;
export const MCP_STATES = ['idle', 'starting', 'connected', 'failed', 'needs_approval', 'rejected', 'disabled'] as const;

export const STOP_REASONS = ['end_turn', 'max_steps', 'cancelled', 'error', 'repetition', 'tool_errors'] as const;
export const RESOLVED_BY = ['user', 'timeout', 'cancel', 'policy'] as const;
export const TOOL_KINDS = ['read', 'edit', 'search', 'execute', 'think', 'other'] as const;
export const STATUSES = ['pending', 'in_progress', 'completed', 'failed'] as const;

/** The outcomes of agent/inputResolved besides the decisions. */
export const OUTCOME_ANSWERED = 'answered';
export const OUTCOME_TIMEOUT = 'timeout';
export const OUTCOME_CANCELLED = 'cancelled';

export interface ModelOptions {
  baseUrl?: string;
  apiKey?: string;
  name?: string;
  toolMode?: 'native' | 'text';
}

export interface InitializeOptions {
  model?: ModelOptions;
  approvalPolicy?: ApprovalPolicy;
}

export interface Selection {
  path: string;
  startLine: number;
  endLine: number;
  text?: string;
}

export interface RunContext {
  files?: string[];
  selection?: Selection;
}

export interface RunParams {
  prompt: string;
  sessionId?: string;
  context?: RunContext;
  /** This run's mode, model and effort; each becomes the session's. */
  approvalPolicy?: ApprovalPolicy;
  model?: string;
  reasoningEffort?: string;
}

export interface RunResult {
  runId: string;
  sessionId: string;
}

export interface ReplyParams {
  requestId: string;
  text?: string;
  optionId?: string;
  answers?: string[];
}

export interface ConfirmParams {
  requestId: string;
  decision: Decision;
  reason?: string;
  editedContent?: string;
}

export interface PlanEntry {
  content: string;
  status: 'pending' | 'in_progress' | 'completed' | 'failed' | string;
}

export interface FileDiff {
  path: string;
  status: string;
  oldPath?: string;
  diff: string;
  oldText?: string;
  newText?: string;
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** The part of the prompts the provider served from its prompt cache. */
  cachedTokens?: number;
  /** The part of the completions spent thinking. */
  reasoningTokens?: number;
}

/** An instruction file the model was given (AGENTS.md and friends). */
export interface InstructionFile {
  /** Workspace-relative, or absolute for the user's own. */
  path: string;
  scope: 'user' | 'workspace' | 'directory' | string;
  bytes: number;
  /** The model got only the first 32 KiB. */
  truncated?: boolean;
}

export interface Update {
  kind: UpdateKind | string;
  text?: string;
  explanation?: string;
  entries?: PlanEntry[];
  toolCallId?: string;
  title?: string;
  toolKind?: string;
  status?: string;
  input?: unknown;
  locations?: { path: string; line?: number }[];
  /** tool_call_update: the full output (on the final update). */
  output?: string;
  /**
   * tool_call_update with status in_progress: the next piece of a running command's output. The
   * pieces arrive in order, all before the call's final update (which carries the full `output`).
   */
  outputDelta?: string;
  isError?: boolean;
  truncated?: boolean;
  exitCode?: number;
  durationMs?: number;
  files?: FileDiff[];
  usage?: Usage;
  stopReason?: string;
  instructions?: InstructionFile[];
  /** tool_call_update: the call changed the workspace; its checkpoint (`c3`) for agent/undo. */
  checkpoint?: string;
  /** context: how full the model's context window is. */
  context?: ContextUse;
}

/** How full the model's context window is (the `context` update, agent/context). */
export interface ContextUse {
  used: number;
  window: number;
  compactAt: number;
  messages: number;
  compacted?: boolean;
}

/** agent/compact's answer: tokens before and after, messages dropped. */
export interface CompactResult {
  before: number;
  after: number;
  dropped: number;
  summary?: string;
}

/** A rule of rules/list. */
export interface RuleInfo {
  id: string;
  tool: string;
  pattern: string;
  action: RuleAction | string;
  scope: RuleScope | string;
  revocable?: boolean;
}

export interface RulesResult {
  rules: RuleInfo[];
  files: { user?: string; workspace: string; grants?: string };
}

export const RULE_SCOPES = ['built-in', 'user', 'workspace', 'always', 'session'] as const;
export type RuleScope = (typeof RULE_SCOPES)[number];
export const RULE_ACTIONS = ['allow', 'ask', 'deny'] as const;
export type RuleAction = (typeof RULE_ACTIONS)[number];

export interface RunNotification {
  runId: string;
  sessionId: string;
  seq: number;
}

export interface UpdateParams extends RunNotification {
  update: Update;
}

export interface RunStateParams extends RunNotification {
  state: RunStateName | string;
  stopReason?: string;
  error?: string;
  /** paused: `restart` (the daemon stopped mid-step: resume it) or `not_saved` (the user resumes it). */
  pauseReason?: PauseReason | string;
}

export const PAUSE_REASONS = ['restart', 'not_saved'] as const;
export type PauseReason = (typeof PAUSE_REASONS)[number];

export interface Option {
  optionId: string;
  label: string;
  description?: string;
}

export interface InputRequest extends RunNotification {
  requestId: string;
  toolCallId?: string;
  kind: PromptKind | string;
  title: string;
  message: string;
  context?: string;
  options?: Option[];
  allowOther?: boolean;
  multiple?: boolean;
  default?: string;
  diff?: FileDiff[];
  command?: string;
  cwd?: string;
  /** confirm_command: the sandbox profile it runs in once allowed (`full`: it cannot be confined here). */
  profile?: string;
  /** confirm_command: whether it gets the network. */
  network?: boolean;
  /** confirm_command: the names of the secrets the user gave that it uses (never their values). */
  secrets?: string[];
  rule?: string;
  createdAt: string;
  expiresAt?: string;
  pendingCount: number;
}

export interface InputResolved extends RunNotification {
  requestId: string;
  outcome: string;
  by: 'user' | 'timeout' | 'cancel' | 'policy' | string;
}

export interface RunEvent {
  seq: number;
  method: string;
  params: unknown;
}

export interface EventsParams {
  runId: string;
  afterSeq: number;
  limit?: number;
}

export interface EventsResult {
  events: RunEvent[];
  state: string;
  /** The limit left some out: ask again after the last one. */
  more?: boolean;
}

/** What a session's runs use; reported, the values in effect. */
export interface SessionSettings {
  model?: string;
  reasoningEffort?: string;
  approvalPolicy?: string;
}

export interface SessionInfo {
  sessionId: string;
  title: string;
  createdAt: string;
  updatedAt: string;
  /** The latest run's state, or `idle`. */
  state: string;
  lastRunId?: string;
  runCount?: number;
  settings?: SessionSettings;
  /** agent/sessions with a query: the prompt line the session was found by. */
  match?: string;
}

export interface HistoryParams {
  sessionId: string;
  beforeRunId?: string;
  limit?: number;
}

/** One run of a history page. */
export interface HistoryRun {
  runId: string;
  prompt: string;
  context?: RunContext;
  state: string;
  stopReason?: string;
  error?: string;
  answer?: string;
  createdAt: string;
  updatedAt: string;
  settings?: SessionSettings;
  usage?: Usage;
  /** A rewind cut it from the conversation the model sees; it stays as history. */
  rewound?: boolean;
  /** Its notifications from seq 1, as agent/events returns them. */
  events: RunEvent[];
  /** Some of its events were left out: fetch them with agent/events after the last one here. */
  moreEvents?: boolean;
}

export interface HistoryResult {
  session: SessionInfo;
  /** Oldest first. */
  runs: HistoryRun[];
  /** Runs before this page: ask again with beforeRunId = runs[0].runId. */
  earlierRuns: number;
  pending: InputRequest[];
}

/** agent/configure: a field left out stays; `""` returns it to the daemon's configuration. */
export interface ConfigureParams {
  sessionId: string;
  model?: string;
  reasoningEffort?: string;
  approvalPolicy?: string;
}

export interface ConfigureResult {
  settings: SessionSettings;
  /** The session's unfinished run, which takes the settings from its next step. */
  runId?: string;
}

export interface ModelInfo {
  id: string;
  ownedBy?: string;
  contextWindow?: number;
}

export interface ModelsResult {
  models: ModelInfo[];
  /** The configured model, the one a session that chose none uses. */
  default: string;
  /** The endpoint answered GET /models. */
  listed: boolean;
  error?: string;
}

/** A custom command of agent/commands: `/name args` in a prompt runs its prompt. */
export interface CustomCommand {
  name: string;
  description?: string;
  argumentHint?: string;
  source: 'user' | 'workspace' | string;
  path: string;
  /** A user command of the same name wins: this one cannot be run. */
  shadowed?: boolean;
  /** Why the file cannot be used. */
  error?: string;
}

export interface CommandsResult {
  commands: CustomCommand[];
  directories?: { source: string; path: string }[];
}

export interface CheckpointFile {
  path: string;
  status: string;
  oldPath?: string;
}

export interface Checkpoint {
  id: string;
  runId: string;
  tool: string;
  title: string;
  time: string;
  files: CheckpointFile[];
  /** The undo that undid it. */
  undoneBy?: string;
  /** An undo's own checkpoint: what it undoes. */
  undoes?: string[];
  notes?: string[];
}

export interface UndoParams {
  sessionId: string;
  checkpoint?: string;
  runId?: string;
  paths?: string[];
  only?: boolean;
  onConflict?: OnConflict;
  dryRun?: boolean;
}

export interface RewindParams {
  sessionId: string;
  runId: string;
  keepFiles?: boolean;
  onConflict?: OnConflict;
  dryRun?: boolean;
}

export interface UndoConflict {
  path: string;
  kind: 'changed' | 'missing' | string;
  reason: string;
  diff?: FileDiff;
}

export interface UndoResult {
  status: 'restored' | 'conflicts' | 'nothing' | 'preview' | string;
  undone: string[];
  checkpoint?: string;
  files: FileDiff[];
  conflicts?: UndoConflict[];
  notes?: string[];
  /** agent/rewind: the runs cut, and how many messages the conversation keeps. */
  rewound?: string[];
  messages?: number;
}

export interface McpTool {
  name: string;
  tool: string;
  title?: string;
  description?: string;
  hints?: Record<string, boolean>;
}

export interface McpServer {
  name: string;
  origin: 'user' | 'workspace' | 'session' | string;
  transport: 'stdio' | 'http' | string;
  command?: string;
  url?: string;
  sandbox?: string;
  state: string;
  error?: string;
  tools?: McpTool[];
  toolsChanged?: boolean;
  connectedAt?: string;
  starts?: number;
}

export interface ProgressParams {
  token: string | number;
  value: {
    kind: 'begin' | 'report' | 'end';
    title?: string;
    message?: string;
    percentage?: number;
    cancellable?: boolean;
  };
}

export interface IndexStatus {
  state: 'indexing' | 'ready' | 'failed' | string;
  files: number;
  chunks: number;
  progress: number;
  embedder: string;
  error?: string;
}

/** A JSON-RPC error code, if err is a response error. */
export function errorCode(err: unknown): number | undefined {
  if (err && typeof err === 'object' && 'code' in err && typeof (err as { code: unknown }).code === 'number') {
    return (err as { code: number }).code;
  }
  return undefined;
}
