/**
 * The diff a card shows, computed here from the text that ran and the fixed text the buttons would write:
 * never the `diff` stored in the card's JSON, which a notebook from someone else could make say anything.
 *
 * The same lines as render/common.py's `_diff` (difflib.unified_diff with no context lines): one hunk per
 * changed run, its header first (`@@ -2,2 +2,2 @@`), then the removed lines, then the added ones.
 */
import { IDiffLine } from './types';

const MAX_CELLS = 4_000_000; // a larger changed middle is shown as removed and added whole

/** A cell's lines as Python numbers them: broken at LF, CRLF or CR, no empty last line. */
export function splitLines(text: string): string[] {
  const lines = (text || '').split(/\r\n|\r|\n/);
  if (lines.length && lines[lines.length - 1] === '') {
    lines.pop();
  }
  return lines;
}

function range(start: number, stop: number): string {
  // NB: difflib's format_range_unified
  const length = stop - start;
  if (length === 1) {
    return String(start + 1);
  }
  return `${length ? start + 1 : start},${length}`;
}

type Run = [number, number, number, number]; // a[i1:i2] became b[j1:j2]

/** The changed runs between two lists of lines (a longest common subsequence of the middle). */
function changes(a: string[], b: string[]): Run[] {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) {
    head++;
  }
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) {
    tail++;
  }
  const x = a.slice(head, a.length - tail);
  const y = b.slice(head, b.length - tail);
  if (!x.length && !y.length) {
    return [];
  }
  if (!x.length || !y.length || x.length * y.length > MAX_CELLS) {
    return [[head, head + x.length, head, head + y.length]];
  }
  // lcs[i][j]: the longest common subsequence of x[i:] and y[j:]
  const lcs: number[][] = Array.from({ length: x.length + 1 }, () => new Array<number>(y.length + 1).fill(0));
  for (let i = x.length - 1; i >= 0; i--) {
    for (let j = y.length - 1; j >= 0; j--) {
      lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const runs: Run[] = [];
  let i = 0;
  let j = 0;
  let open: Run | null = null;
  const close = () => {
    if (open !== null) {
      runs.push(open);
      open = null;
    }
  };
  while (i < x.length || j < y.length) {
    if (i < x.length && j < y.length && x[i] === y[j]) {
      close();
      i++;
      j++;
      continue;
    }
    if (open === null) {
      open = [head + i, head + i, head + j, head + j];
    }
    if (j >= y.length || (i < x.length && lcs[i + 1][j] >= lcs[i][j + 1])) {
      i++;
      open[1] = head + i;
    } else {
      j++;
      open[3] = head + j;
    }
  }
  close();
  return runs;
}

/** The diff of `before` -> `after`: ('@', hunk header), ('-', removed line), ('+', added line). */
export function lineDiff(before: string, after: string): IDiffLine[] {
  const a = splitLines(before);
  const b = splitLines(after);
  const out: IDiffLine[] = [];
  for (const [i1, i2, j1, j2] of changes(a, b)) {
    out.push({ sign: '@', text: `@@ -${range(i1, i2)} +${range(j1, j2)} @@` });
    a.slice(i1, i2).forEach(text => out.push({ sign: '-', text }));
    b.slice(j1, j2).forEach(text => out.push({ sign: '+', text }));
  }
  return out;
}
