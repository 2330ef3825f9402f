/**
 * The card's data: `application/vnd.grad-magic.diagnosis+json`, as grad_magic/render/json.py writes it.
 *
 * Plain data only. Every string here is user or error text: it reaches the page through
 * `textContent`, never through `innerHTML`.
 */

export const MIME_TYPE = 'application/vnd.grad-magic.diagnosis+json';

/**
 * The rank of the card renderer. A lower rank wins in JupyterLab's RenderMimeRegistry; text/html has
 * 50 (and a factory without a rank gets 100), so the JSON card outranks the HTML card.
 */
export const RANK = 20;

export interface ISourceLine {
  lineno: number;
  text: string;
  // schema 2: the cell the line is in (`cell`: In [k]; `file`: a user's own .py file) and its function
  cell?: number | null;
  file?: string;
  function?: string;
  elsewhere?: boolean; // in another cell or file than the running one
  this?: boolean;
}

/** Schema 2: the text of another cell (or file) as it ran, for the excerpts of lines found there. */
export interface IElsewhere {
  cell: number | null;
  file: string;
  source: string;
}

export interface ITensorFact {
  name: string;
  kind?: string;
  shape?: string;
  dtype?: string;
  device?: string;
  requires_grad?: boolean | null;
  is_leaf?: boolean | null;
  grad_fn?: string | null;
  version?: number | null;
}

export interface IDiffLine {
  sign: string; // '-', '+' or '@' (a hunk header)
  text: string;
}

export interface ITextEdit {
  start: number;
  end: number;
  text: string;
}

/** Which cell a fixed cell replaces: the running cell, the cell that ran as In [k], or a user's file. */
export type FixTarget = 'this' | { execution_count: number } | { file: string };

/** Schema 2: one cell the fix changes. */
export interface IFixCell {
  target: FixTarget;
  source: string; // the complete fixed text
  original: string; // the text that ran (IPython's, not the notebook file's)
  edits: ITextEdit[];
  diff: IDiffLine[];
  rerun?: number[]; // the cells (In [k]) between it and the card's cell that read what it binds, in run order
  reload?: string; // a file's: the cell that reloads its module ("" when none was loaded from it)
}

export interface IFix {
  description: string;
  cells?: IFixCell[]; // schema 2; other cells first
  // schema 1's fields, for the running cell: `source` is null (schema 2) when the fix leaves it alone
  source: string | null; // the complete fixed cell, `%%gradcheck` line included
  edits: ITextEdit[];
  diff: IDiffLine[];
}

export interface IDiagnosis {
  schema_version?: number;
  kind: string;
  severity: string; // 'error' | 'warning'
  language?: string;
  title: string;
  summary: string;
  what: string;
  why: string;
  where: string;
  source: string;
  cell?: number | null; // schema 2: In [k] of the running cell
  lines: ISourceLine[];
  elsewhere?: IElsewhere[]; // schema 2
  names?: string[];
  tensors: ITensorFact[];
  error: { type: string; message: string } | null;
  fix: IFix | null;
  versions: { [name: string]: string };
  notes: string[];
  trace?: string; // anomaly mode's report of the failing backward, folded into the card ("" or absent: none)
  labels: { [key: string]: string };
  live?: ILive | null; // issue 20: null (or absent) for a card shown when its cell ended
}

/** Issue 20: a card displayed while its cell still ran, at the optimizer step that found it. */
export interface ILive {
  step: number;
  found?: string; // what that step found, with `code` in backticks
  cost?: string; // what it costs left running
}

/**
 * What Apply to In [k] found: `applied` (replaced), `already` (the cell holds the fix already), `changed`
 * (In [k] is there but its text is not what ran: nothing replaced), `gone` (no cell ran as In [k]).
 */
export type ApplyResult = 'applied' | 'already' | 'changed' | 'gone';

/** What Re-run did: `ran` (both cells ran, no error), `failed` (one of them raised), `gone` (In [k] no
 * longer holds the fix, or the card's cell is gone: nothing ran). */
export type RerunResult = 'ran' | 'failed' | 'gone';

/** What a card can do to the notebook cell whose output shows it. */
export interface ICellHost {
  /** Insert a new code cell holding exactly `source` right below the cell; select it, do not run it. */
  insertBelow(source: string): void;
  /** Replace the cell's source with `source`, as one undoable step. */
  replace(source: string): void;
  /**
   * Replace, as one undoable step, the source of the notebook's cell that ran as In [`count`] and still
   * holds `original` (what ran, modulo a trailing newline). Runs nothing.
   */
  applyTo(count: number, original: string, source: string): ApplyResult;
  /**
   * Run the cell that ran as In [`count`] and now holds `source` (the fix applied), then the cells that ran
   * as In [`between`] (those still in the notebook), then the card's own cell, with the notebook's own run
   * action. Only ever called from a click.
   */
  rerun(count: number, source: string, between: number[]): Promise<RerunResult>;
  /** True while the kernel runs the cell (its [*] prompt: JupyterLab's `executionState`) and is alive. */
  running(): boolean;
  /** Call `changed` whenever `running()` may have changed (the cell's state, the kernel's status); returns
   * the function that stops it. */
  watchRunning(changed: () => void): () => void;
  /** Interrupt the notebook's kernel, as the toolbar's stop button does. Runs no code. */
  interrupt(): Promise<void>;
}

/** The host of the card whose node is given, or null when the card is not in a notebook cell. */
export type CellHostFinder = (node: HTMLElement) => ICellHost | null;
