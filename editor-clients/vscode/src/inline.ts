// The inline edit's words and checks, free of vscode: the prompt the model reads for "edit these
// lines as I say", and whether a proposed write is the one the inline edit waits for.

import { InputRequest, RunContext } from './protocol';

export interface InlineTarget {
  /** Workspace-relative path. */
  path: string;
  /** 1-based, inclusive. */
  startLine: number;
  endLine: number;
  text: string;
}

/** What the model is asked: one edit of those lines, nothing else. */
export function inlinePrompt(t: InlineTarget, instruction: string): { prompt: string; context: RunContext } {
  const lines = t.startLine === t.endLine ? `line ${t.startLine}` : `lines ${t.startLine}–${t.endLine}`;
  const prompt =
    `Edit ${lines} of ${t.path} (the selection) as follows: ${instruction.trim()}\n\n` +
    'Change only what this asks, within the selection unless it cannot be done there; make the whole change with one edit of that file, ' +
    'then say in a sentence what you changed. Do not run commands or change other files.';
  return { prompt, context: { files: [t.path], selection: { path: t.path, startLine: t.startLine, endLine: t.endLine, text: t.text } } };
}

/** The proposed write of the inline edit's file, with the whole new text (what the buffer shows). */
export function inlineWrite(req: Pick<InputRequest, 'kind' | 'diff'>, path: string): { newText: string; oldText?: string } | undefined {
  if (req.kind !== 'confirm_write' || req.diff?.length !== 1) return undefined;
  const f = req.diff[0];
  if (f.path !== path || f.newText === undefined || f.status === 'deleted') return undefined;
  return { newText: f.newText, oldText: f.oldText };
}
