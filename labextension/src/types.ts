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

export interface IFix {
  description: string;
  source: string; // the complete fixed cell, `%%gradcheck` line included
  edits: { start: number; end: number; text: string }[];
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
  lines: ISourceLine[];
  names?: string[];
  tensors: ITensorFact[];
  error: { type: string; message: string } | null;
  fix: IFix | null;
  versions: { [name: string]: string };
  notes: string[];
  labels: { [key: string]: string };
}

/** What a card can do to the notebook cell whose output shows it. */
export interface ICellHost {
  /** Insert a new code cell holding exactly `source` right below the cell; select it, do not run it. */
  insertBelow(source: string): void;
  /** Replace the cell's source with `source`, as one undoable step. */
  replace(source: string): void;
}

/** The host of the card whose node is given, or null when the card is not in a notebook cell. */
export type CellHostFinder = (node: HTMLElement) => ICellHost | null;
