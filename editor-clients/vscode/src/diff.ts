// Line diffs for reviewing a change where the code is: the hunks between a file's text and a
// proposed one (Myers' algorithm), a unified diff of them for the panel, and the text that results
// from keeping some hunks and rejecting the others. No vscode import: unit-tested in node.

/** One change: `oldLines` at `oldStart` (0-based) became `newLines` at `newStart`. */
export interface Hunk {
  oldStart: number;
  oldLines: string[];
  newStart: number;
  newLines: string[];
}

/** Splits text into lines, keeping whether it ended with a newline (the last, empty, element). */
export function splitLines(text: string): string[] {
  return text.split('\n');
}

/** Above this many differences the diff is one hunk (the whole text replaced): fast, and honest. */
const MAX_EDITS = 4000;

/** The hunks that turn `a` into `b`, in order; none when they are equal. */
export function diffLines(a: string, b: string): Hunk[] {
  if (a === b) return [];
  const x = splitLines(a);
  const y = splitLines(b);
  // Common head and tail first: most changes are small, in a long file.
  let head = 0;
  while (head < x.length && head < y.length && x[head] === y[head]) head++;
  let tail = 0;
  while (tail < x.length - head && tail < y.length - head && x[x.length - 1 - tail] === y[y.length - 1 - tail]) tail++;
  const xs = x.slice(head, x.length - tail);
  const ys = y.slice(head, y.length - tail);
  const ops = myers(xs, ys);
  if (!ops) return [{ oldStart: head, oldLines: xs, newStart: head, newLines: ys }];
  const hunks: Hunk[] = [];
  let i = 0;
  let j = 0;
  let cur: Hunk | undefined;
  for (const op of ops) {
    if (op === '=') {
      if (cur) hunks.push(cur);
      cur = undefined;
      i++;
      j++;
      continue;
    }
    cur ??= { oldStart: head + i, oldLines: [], newStart: head + j, newLines: [] };
    if (op === '-') cur.oldLines.push(xs[i++]);
    else cur.newLines.push(ys[j++]);
  }
  if (cur) hunks.push(cur);
  return hunks;
}

/** The edit script from xs to ys ('=' keep, '-' delete, '+' insert), or undefined when too long. */
function myers(xs: string[], ys: string[]): ('=' | '-' | '+')[] | undefined {
  const n = xs.length;
  const m = ys.length;
  const max = n + m;
  if (max === 0) return [];
  const offset = max + 1;
  let v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  for (let d = 0; d <= max; d++) {
    if (d > MAX_EDITS) return undefined;
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let xPos = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]) ? v[offset + k + 1] : v[offset + k - 1] + 1;
      let yPos = xPos - k;
      while (xPos < n && yPos < m && xs[xPos] === ys[yPos]) {
        xPos++;
        yPos++;
      }
      v[offset + k] = xPos;
      if (xPos >= n && yPos >= m) return backtrack(trace, v, n, m, offset, d);
    }
    v = v.slice();
  }
  return undefined;
}

function backtrack(trace: Int32Array[], last: Int32Array, n: number, m: number, offset: number, dEnd: number): ('=' | '-' | '+')[] {
  const ops: ('=' | '-' | '+')[] = [];
  let x = n;
  let y = m;
  for (let d = dEnd; d > 0; d--) {
    const v = trace[d];
    const k = x - y;
    const prevK = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]) ? k + 1 : k - 1;
    const prevX = v[offset + prevK];
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push('=');
      x--;
      y--;
    }
    if (x === prevX) {
      ops.push('+');
      y--;
    } else {
      ops.push('-');
      x--;
    }
  }
  while (x > 0 && y > 0) {
    ops.push('=');
    x--;
    y--;
  }
  void last;
  return ops.reverse();
}

/**
 * The text of `a` with the hunks of `diffLines(a, b)` for which `keep(i)` is true applied: kept
 * hunks take the new lines, the others keep the old ones.
 */
export function applyHunks(a: string, hunks: Hunk[], keep: (i: number) => boolean): string {
  const x = splitLines(a);
  const out: string[] = [];
  let i = 0;
  hunks.forEach((h, n) => {
    while (i < h.oldStart) out.push(x[i++]);
    if (keep(n)) out.push(...h.newLines);
    else out.push(...h.oldLines);
    i += h.oldLines.length;
  });
  while (i < x.length) out.push(x[i++]);
  return out.join('\n');
}

/** A unified diff of `a` → `b` (as agentd writes them: `--- a/path`, `+++ b/path`, 3 lines of context). */
export function unifiedDiff(path: string, a: string, b: string, context = 3): string {
  const hunks = diffLines(a, b);
  if (!hunks.length) return '';
  const x = splitLines(a);
  const y = splitLines(b);
  // Lines of the last, empty element (a final newline) are not lines of the file.
  const xLen = x[x.length - 1] === '' ? x.length - 1 : x.length;
  const yLen = y[y.length - 1] === '' ? y.length - 1 : y.length;
  const out = [`--- a/${path}`, `+++ b/${path}`];
  let g = 0;
  while (g < hunks.length) {
    // Hunks closer than twice the context share one @@ block.
    let end = g;
    while (end + 1 < hunks.length && hunks[end + 1].oldStart - (hunks[end].oldStart + hunks[end].oldLines.length) <= 2 * context) end++;
    const first = hunks[g];
    const last = hunks[end];
    const oFrom = Math.max(0, first.oldStart - context);
    const nFrom = Math.max(0, first.newStart - context);
    const oTo = Math.min(xLen, last.oldStart + last.oldLines.length + context);
    const nTo = Math.min(yLen, last.newStart + last.newLines.length + context);
    out.push(`@@ -${range(oFrom, oTo - oFrom)} +${range(nFrom, nTo - nFrom)} @@`);
    let i = oFrom;
    for (let h = g; h <= end; h++) {
      const hk = hunks[h];
      while (i < hk.oldStart) out.push(` ${x[i++]}`);
      for (const l of hk.oldLines) if (i++ < xLen) out.push(`-${l}`);
      for (let n = 0; n < hk.newLines.length; n++) if (hk.newStart + n < yLen) out.push(`+${hk.newLines[n]}`);
    }
    while (i < oTo) out.push(` ${x[i++]}`);
    g = end + 1;
  }
  return `${out.join('\n')}\n`;
}

function range(start: number, count: number): string {
  return count === 1 ? `${start + 1}` : `${count === 0 ? start : start + 1},${count}`;
}

/** Lines added and removed. */
export function hunkStat(hunks: Hunk[]): { added: number; removed: number } {
  return hunks.reduce((s, h) => ({ added: s.added + h.newLines.length, removed: s.removed + h.oldLines.length }), { added: 0, removed: 0 });
}
