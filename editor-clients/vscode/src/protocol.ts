// The agentd protocol (docs/protocol.md) as the extension uses it. Every method name, type,
// enumeration and error code is generated from the daemon's Go types into contract.ts (regenerate:
// `go test ./rpc -run TestContract -update` at the repository's root; never edit it by hand). This
// module re-exports it, adds the names the extension's code knows some of its types by, and says
// which methods the extension sends and handles. No vscode import: the unit tests load this module
// in plain node.
import {
  FINISHED_STATES,
  Method,
  ModelList,
  Notifications,
  Outcome,
  Requests,
  RunState,
  ServerNotifications,
  ServerRequests,
  UpdateParams,
} from './contract';

export * from './contract';

/** agent/runState's params. */
export type RunStateParams = RunState;
/** agent/models' result. */
export type ModelsResult = ModelList;
/** What every run notification carries. */
export type RunNotification = Pick<UpdateParams, 'runId' | 'sessionId' | 'seq'>;

/** What the extension sends and handles, by direction: the types check each list against the contract. */
export const CLIENT_REQUESTS = [
  Method.initialize,
  Method.shutdown,
  Method.run,
  Method.steer,
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
  Method.rulesList,
  Method.rulesRevoke,
  Method.rulesEdit,
  Method.renameSession,
  Method.deleteSession,
  Method.context,
  Method.compact,
  Method.image,
  Method.indexStatus,
  Method.stopProcess,
] as const satisfies readonly (keyof Requests)[];
export const CLIENT_NOTIFICATIONS = [
  Method.initialized,
  Method.exit,
  Method.didOpen,
  Method.didChange,
  Method.didSave,
  Method.didClose,
] as const satisfies readonly (keyof Notifications)[];
export const HANDLED_NOTIFICATIONS = [
  Method.update,
  Method.inputRequest,
  Method.inputResolved,
  Method.runState,
  Method.progress,
  Method.mcpChanged,
  Method.processChanged,
] as const satisfies readonly (keyof ServerNotifications)[];
export const HANDLED_REQUESTS = [
  Method.progressCreate,
  Method.editorDiagnostics,
  Method.editorDefinition,
  Method.editorReferences,
  Method.editorHover,
  Method.editorDocumentSymbols,
  Method.editorWorkspaceSymbols,
  Method.editorContext,
  Method.editorReadFile,
] as const satisfies readonly (keyof ServerRequests)[];

/** The states after which nothing more happens to a run. */
export const TERMINAL_STATES: ReadonlySet<string> = new Set<string>(FINISHED_STATES);

/** The outcomes of agent/inputResolved besides the decisions. */
export const OUTCOME_ANSWERED: Outcome = 'answered';
export const OUTCOME_TIMEOUT: Outcome = 'timeout';
export const OUTCOME_CANCELLED: Outcome = 'cancelled';

/** A JSON-RPC error code, if err is a response error. */
export function errorCode(err: unknown): number | undefined {
  if (err && typeof err === 'object' && 'code' in err && typeof (err as { code: unknown }).code === 'number') {
    return (err as { code: number }).code;
  }
  return undefined;
}
