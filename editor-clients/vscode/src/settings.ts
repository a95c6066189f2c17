// The model, effort and mode pickers next to the prompt box. No vscode import.
//
// With a session open they show its settings (agent/history, agent/sessions, agent/configure say
// which) and a change goes to the daemon at once with agent/configure: the session's unfinished
// run takes it from its next step, no restart. With no session open they hold what the next new
// conversation starts with, sent in its agent/run. A daemon that offers no per-session settings
// (no reasoningEfforts in initialize) gets the mode with every run, as before, and no model or
// effort picker.

import { Rpc } from './daemon';
import { ApprovalPolicy, ConfigureParams, ConfigureResult, Method, ModelsResult, POLICIES, RunParams, SessionSettings } from './protocol';
import { effortLabel, modeLabel } from './words';

export type SettingField = 'model' | 'reasoningEffort' | 'approvalPolicy';

export interface PickerOption {
  value: string;
  label: string;
}

export interface Picker {
  value: string;
  options: PickerOption[];
}

export interface PickersView {
  /** Absent when the daemon has no per-session models (or none configured). */
  model?: Picker;
  effort?: Picker;
  mode: Picker;
  /** A change that did not go through (the picker shows the value in effect again). */
  error?: string;
}

export interface PickersDeps {
  rpc: Rpc;
  /** The open session, if any, and the settings this editor knows it has. */
  current: () => { sessionId?: string; settings?: SessionSettings };
  /** The session's settings changed (agent/configure answered). */
  applied: (sessionId: string, result: ConfigureResult) => void;
  /** The user's defaults for a new conversation (the agentd.approvalPolicy setting). */
  defaults: () => { approvalPolicy?: string };
  changed?: () => void;
  log?: (line: string) => void;
}

export class SessionPickers {
  /** The efforts and modes the daemon takes; efforts undefined: no per-session settings. */
  private efforts?: string[];
  private policies: string[] = [...POLICIES];
  private models?: ModelsResult;
  /** What a new conversation starts with; "" is the daemon's default. */
  private draft: SessionSettings = {};
  /** Changes on their way to the daemon, shown meanwhile. */
  private readonly inFlight = new Map<SettingField, string>();
  private error?: string;

  constructor(private readonly d: PickersDeps) {}

  /** From initialize's capabilities.experimental.agentd. */
  setCapabilities(caps: { reasoningEfforts?: string[]; policies?: string[] } | undefined): void {
    this.efforts = Array.isArray(caps?.reasoningEfforts) ? [...caps!.reasoningEfforts] : undefined;
    if (Array.isArray(caps?.policies) && caps!.policies.length) this.policies = [...caps!.policies];
    this.changed();
  }

  /** Whether the daemon keeps settings per session (agent/configure, agent/models). */
  get perSession(): boolean {
    return this.efforts !== undefined;
  }

  /** Asks agent/models for the picker's list; a failure leaves the configured model alone. */
  async refreshModels(): Promise<void> {
    if (!this.perSession) return;
    try {
      this.models = await this.d.rpc.request<ModelsResult>(Method.models, {});
      if (this.models.error) this.d.log?.(`agent/models: ${this.models.error}`);
    } catch (e) {
      this.d.log?.(`agent/models: ${e instanceof Error ? e.message : e}`);
    }
    this.changed();
  }

  /** The settings a new conversation starts with: those of the session open until now, if any. */
  newConversation(from?: SessionSettings): void {
    if (from) {
      this.draft = {
        model: this.isDefaultModel(from.model) ? '' : (from.model ?? ''),
        reasoningEffort: from.reasoningEffort ?? '',
        approvalPolicy: from.approvalPolicy,
      };
    }
    this.error = undefined;
    this.changed();
  }

  /** The agentd.model.name setting changed: new conversations use it, without a daemon restart. */
  defaultModelChanged(name: string | undefined): void {
    this.draft.model = !name || this.isDefaultModel(name) ? '' : name;
    this.changed();
  }

  /** What agent/run carries: the settings for a new conversation; for a follow-up, only what a daemon without per-session settings needs. */
  forRun(newConversation: boolean): Pick<RunParams, 'model' | 'reasoningEffort' | 'approvalPolicy'> {
    const mode = this.draftMode();
    if (!this.perSession) return mode ? { approvalPolicy: mode } : {};
    if (!newConversation) return {};
    const p: Pick<RunParams, 'model' | 'reasoningEffort' | 'approvalPolicy'> = {};
    if (mode) p.approvalPolicy = mode;
    if (this.draft.model) p.model = this.draft.model;
    if (this.draft.reasoningEffort) p.reasoningEffort = this.draft.reasoningEffort;
    return p;
  }

  /** The settings a conversation started with forRun(true) has, as far as this editor knows. */
  startedWith(): SessionSettings {
    return {
      model: this.draft.model || this.models?.default,
      reasoningEffort: this.draft.reasoningEffort || undefined,
      approvalPolicy: this.draftMode(),
    };
  }

  /** The user picked a value. */
  async choose(field: SettingField, value: string): Promise<void> {
    const { sessionId } = this.d.current();
    this.error = undefined;
    if (!sessionId || !this.perSession) {
      this.draft = { ...this.draft, [field]: value };
      this.changed();
      return;
    }
    this.inFlight.set(field, value);
    this.changed();
    const params: ConfigureParams = { sessionId, [field]: value };
    try {
      const res = await this.d.rpc.request<ConfigureResult>(Method.configure, params);
      this.d.applied(sessionId, res);
    } catch (e) {
      this.error = `Could not change the ${field === 'approvalPolicy' ? 'mode' : field === 'model' ? 'model' : 'effort'}: ${e instanceof Error ? e.message : e}`;
      this.d.log?.(this.error);
    } finally {
      if (this.inFlight.get(field) === value) this.inFlight.delete(field);
      this.changed();
    }
  }

  view(): PickersView {
    const { sessionId, settings } = this.d.current();
    const open = !!sessionId && this.perSession;
    const shown = (field: SettingField): string => {
      const pending = this.inFlight.get(field);
      if (pending !== undefined) return pending;
      if (!open) return this.draft[field] ?? '';
      return settings?.[field] ?? '';
    };
    const mode = shown('approvalPolicy') || this.draftMode() || 'ask';
    const view: PickersView = {
      mode: { value: mode, options: withValue(this.policies.map((p) => ({ value: p, label: modeLabel(p) })), mode, modeLabel(mode)) },
      error: this.error,
    };
    if (!this.perSession) return view;
    const model = shown('model');
    const modelValue = this.isDefaultModel(model) ? '' : model;
    const def = this.models?.default;
    const modelOptions: PickerOption[] = [{ value: '', label: def ? `${def} (default)` : 'Default model' }];
    for (const m of this.models?.models ?? []) if (m.id && m.id !== def) modelOptions.push({ value: m.id, label: m.id });
    view.model = { value: modelValue, options: withValue(modelOptions, modelValue, modelValue) };
    const effort = shown('reasoningEffort');
    view.effort = { value: effort, options: withValue([{ value: '', label: 'Default effort' }, ...(this.efforts ?? []).map((e) => ({ value: e, label: effortLabel(e) }))], effort, effortLabel(effort)) };
    return view;
  }

  private draftMode(): ApprovalPolicy | undefined {
    const m = this.draft.approvalPolicy ?? this.d.defaults().approvalPolicy;
    return m && this.policies.includes(m) ? (m as ApprovalPolicy) : undefined;
  }

  private isDefaultModel(model: string | undefined): boolean {
    return !model || (this.models !== undefined && model === this.models.default);
  }

  private changed(): void {
    this.d.changed?.();
  }
}

/** The options, with the current value among them (a model the list omits, an alias). */
function withValue(options: PickerOption[], value: string, label: string): PickerOption[] {
  return options.some((o) => o.value === value) ? options : [...options, { value, label: label || value }];
}
