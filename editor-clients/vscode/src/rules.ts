// The rules view: what agentd's policy applies (rules/list), and taking back or changing what the
// user's "always" and "for this session" answers stored (rules/revoke, rules/edit). No vscode
// import.

import { Rpc } from './daemon';
import { Method, RuleInfo, RulesResult } from './protocol';

export interface RulesState {
  list?: RuleInfo[];
  files?: RulesResult['files'];
  error?: string;
  /** The rule being edited, by id. */
  editing?: string;
  /** Why the last revoke or edit failed. */
  failed?: string;
}

/** A change to a rule; a field left out stays. */
export interface RuleChange {
  pattern?: string;
  action?: string;
}

export class RulesView {
  state: RulesState = {};

  constructor(
    private readonly rpc: Rpc,
    private readonly sessionId: () => string | undefined,
    private readonly changed: () => void,
  ) {}

  /** Asks for the rules (with the session shown's own). Never fails: the error is shown. */
  async load(): Promise<void> {
    const sid = this.sessionId();
    try {
      const res = await this.rpc.request<RulesResult>(Method.rulesList, sid ? { sessionId: sid } : {});
      this.state = { ...this.state, list: res.rules ?? [], files: res.files, error: undefined };
    } catch (e) {
      this.state = { ...this.state, error: `Could not ask agentd for its rules: ${e instanceof Error ? e.message : e}` };
    }
    this.changed();
  }

  edit(id: string | undefined): void {
    this.state = { ...this.state, editing: id, failed: undefined };
    this.changed();
  }

  async revoke(id: string): Promise<void> {
    await this.act(() => this.rpc.request(Method.rulesRevoke, this.ref(id)));
  }

  async save(id: string, change: RuleChange): Promise<void> {
    await this.act(() => this.rpc.request(Method.rulesEdit, { ...this.ref(id), ...change }), true);
  }

  private ref(id: string): { id: string; sessionId?: string } {
    const rule = this.state.list?.find((r) => r.id === id);
    const sid = this.sessionId();
    return rule?.scope === 'session' && sid ? { id, sessionId: sid } : { id };
  }

  private async act(call: () => Promise<unknown>, closeEdit = false): Promise<void> {
    try {
      await call();
      this.state = { ...this.state, failed: undefined, editing: closeEdit ? undefined : this.state.editing };
    } catch (e) {
      this.state = { ...this.state, failed: e instanceof Error ? e.message : String(e) };
    }
    await this.load();
  }
}
