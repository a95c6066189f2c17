// What VS Code's language features give, in LSP's shapes, for the daemon's editor/* requests
// (docs/protocol.md "Language intelligence"). No vscode import: the functions take VS Code's
// objects by their shape (a vscode.Range has start.line and start.character), so the unit tests
// feed them plain objects.

export interface Pos {
  line: number;
  character: number;
}
export interface Rng {
  start: Pos;
  end: Pos;
}
interface UriLike {
  toString(): string;
}

export const pos = (p: Pos): Pos => ({ line: p.line, character: p.character });
export const rng = (r: Rng): Rng => ({ start: pos(r.start), end: pos(r.end) });

/** VS Code's DiagnosticSeverity (Error 0 … Hint 3) is LSP's (1 … 4) less one. */
export function severity(s: number | undefined): number {
  return typeof s === 'number' && s >= 0 && s <= 3 ? s + 1 : 1;
}

export interface VsDiagnostic {
  range: Rng;
  message: string;
  severity?: number;
  source?: string;
  code?: string | number | { value: string | number; target?: UriLike };
  tags?: number[];
}

export function diagnostic(d: VsDiagnostic): Record<string, unknown> {
  const out: Record<string, unknown> = { range: rng(d.range), severity: severity(d.severity), message: d.message };
  if (d.source) out.source = d.source;
  const code = typeof d.code === 'object' && d.code !== null ? d.code.value : d.code;
  if (code !== undefined && code !== '') out.code = code;
  if (d.tags?.length) out.tags = d.tags;
  return out;
}

export interface VsLocation {
  uri: UriLike;
  range: Rng;
}
export interface VsLocationLink {
  targetUri: UriLike;
  targetRange: Rng;
  targetSelectionRange?: Rng;
  originSelectionRange?: Rng;
}

/** Locations or location links, as VS Code's definition and reference providers return them. */
export function locations(list: (VsLocation | VsLocationLink)[] | undefined): unknown[] {
  return (list ?? []).map((l) =>
    'targetUri' in l
      ? {
          targetUri: l.targetUri.toString(),
          targetRange: rng(l.targetRange),
          targetSelectionRange: rng(l.targetSelectionRange ?? l.targetRange),
          ...(l.originSelectionRange ? { originSelectionRange: rng(l.originSelectionRange) } : {}),
        }
      : { uri: l.uri.toString(), range: rng(l.range) },
  );
}

/** The hovers' contents joined, as one MarkupContent. */
export function hover(list: { contents: (string | { value: string; language?: string })[] }[] | undefined): { contents: { kind: 'markdown'; value: string } } | null {
  const parts: string[] = [];
  for (const h of list ?? []) {
    for (const c of h.contents ?? []) {
      if (typeof c === 'string') parts.push(c);
      else if (c.language) parts.push(`\`\`\`${c.language}\n${c.value}\n\`\`\``);
      else parts.push(c.value);
    }
  }
  const value = parts.filter((p) => p.trim()).join('\n\n---\n\n');
  return value ? { contents: { kind: 'markdown', value } } : null;
}

export interface VsDocumentSymbol {
  name: string;
  detail?: string;
  kind: number;
  range: Rng;
  selectionRange: Rng;
  children?: VsDocumentSymbol[];
}
export interface VsSymbolInformation {
  name: string;
  kind: number;
  containerName?: string;
  location: VsLocation;
}

/** VS Code's SymbolKind is LSP's less one. */
export function symbols(list: (VsDocumentSymbol | VsSymbolInformation)[] | undefined): unknown[] {
  const doc = (s: VsDocumentSymbol): Record<string, unknown> => {
    const out: Record<string, unknown> = { name: s.name, kind: s.kind + 1, range: rng(s.range), selectionRange: rng(s.selectionRange) };
    if (s.detail) out.detail = s.detail;
    if (s.children?.length) out.children = s.children.map(doc);
    return out;
  };
  return (list ?? []).map((s) =>
    'location' in s
      ? { name: s.name, kind: s.kind + 1, location: { uri: s.location.uri.toString(), range: rng(s.location.range) }, ...(s.containerName ? { containerName: s.containerName } : {}) }
      : doc(s),
  );
}

/** What the daemon asks of a position: its file and the place in it. */
export interface PositionParams {
  textDocument: { uri: string };
  position: Pos;
}

export function isPositionParams(p: unknown): p is PositionParams {
  const x = p as PositionParams;
  return !!x && typeof x.textDocument?.uri === 'string' && typeof x.position?.line === 'number' && typeof x.position?.character === 'number';
}

/** The least time a file's diagnostics must stay unchanged before they are taken as its answer. */
export const SETTLE_MS = 400;

/**
 * How long a file's diagnostics must stay unchanged before they are its answer, given how long its
 * servers took to publish the first report: a server reports a file's syntax first and its types a
 * moment later, and VS Code says nothing of which report is the last. One that took long for the
 * first (a cold or loaded server) is given as long again for the next; a warm one SETTLE_MS.
 */
export function quietWindow(firstReportMs: number): number {
  return Math.max(SETTLE_MS, firstReportMs);
}
