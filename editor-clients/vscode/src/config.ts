// Builds the daemon's command line, environment and initialize params from the settings.
// No vscode import. The API key comes from SecretStorage and goes only into
// initializationOptions.model.apiKey (over the pipe): never into settings, argv or the environment.

import { ApprovalPolicy, InitializeOptions, PROMPT_KINDS } from './protocol';

export interface Settings {
  daemonPath?: string;
  modelBaseUrl?: string;
  modelName?: string;
  modelToolMode?: string;
  approvalPolicy?: string;
  env?: Record<string, string>;
}

export interface WorkspaceFolderInfo {
  uri: string;
  name: string;
}

export const POLICIES: ApprovalPolicy[] = ['read-only', 'ask', 'auto-edit', 'full-auto'];

/**
 * The language intelligence the extension answers (editor/* requests, language.ts): all of it,
 * from VS Code's own providers.
 */
export const LANGUAGE_CAPABILITIES = { diagnostics: true, definition: true, references: true, hover: true, documentSymbols: true, workspaceSymbols: true, context: true, buffers: true };

export function daemonCommand(s: Settings): { command: string; args: string[] } {
  const path = (s.daemonPath ?? '').trim();
  return { command: path || 'agentd', args: ['serve'] };
}

export function daemonEnv(base: NodeJS.ProcessEnv, s: Settings): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  for (const [k, v] of Object.entries(s.env ?? {})) if (typeof v === 'string') env[k] = v;
  return env;
}

export function policyOf(s: Settings): ApprovalPolicy | undefined {
  return POLICIES.includes(s.approvalPolicy as ApprovalPolicy) ? (s.approvalPolicy as ApprovalPolicy) : undefined;
}

export function initializationOptions(s: Settings, apiKey?: string): InitializeOptions {
  const opts: InitializeOptions = {};
  const model: NonNullable<InitializeOptions['model']> = {};
  if (s.modelBaseUrl?.trim()) model.baseUrl = s.modelBaseUrl.trim();
  if (s.modelName?.trim()) model.name = s.modelName.trim();
  if (s.modelToolMode === 'native' || s.modelToolMode === 'text') model.toolMode = s.modelToolMode;
  if (apiKey) model.apiKey = apiKey;
  if (Object.keys(model).length) opts.model = model;
  const policy = policyOf(s);
  if (policy) opts.approvalPolicy = policy;
  return opts;
}

export function initializeParams(args: {
  settings: Settings;
  apiKey?: string;
  folders: WorkspaceFolderInfo[];
  clientVersion: string;
  processId?: number;
}): object {
  const root = args.folders[0];
  return {
    processId: args.processId ?? process.pid,
    clientInfo: { name: 'Visual Studio Code (agentd)', version: args.clientVersion },
    rootUri: root ? root.uri : null,
    workspaceFolders: args.folders.length ? args.folders : null,
    capabilities: {
      window: { workDoneProgress: true },
      // genericPrompts: a kind the extension has no view of its own for is shown and answered by its form.
      experimental: { agentd: { promptKinds: [...PROMPT_KINDS], genericPrompts: true, language: LANGUAGE_CAPABILITIES } },
    },
    initializationOptions: initializationOptions(args.settings, args.apiKey),
  };
}

/**
 * True if a settings change needs a daemon restart (initialize-time options). The model's name
 * does not: models are chosen per session (agent/configure, agent/run), and the setting is only
 * the default a new conversation starts with.
 */
export function needsRestart(changed: (section: string) => boolean): boolean {
  return ['agentd.daemonPath', 'agentd.model.baseUrl', 'agentd.model.toolMode', 'agentd.env', 'agentd.trace'].some(changed);
}
