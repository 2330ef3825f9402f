/**
 * The notebook side of the card's buttons: which cell shows the card, the edits on the notebook model
 * (insert below, replace, apply to the cell that ran as In [k]), Re-run (the notebook's own run action), and
 * for a live card whether its cell still runs and the kernel's interrupt.
 *
 * A MIME renderer gets no notebook handle, so the owning cell is found by DOM containment across every
 * notebook the tracker knows, at click time (cells move, notebooks split).
 */
import { Cell, ICodeCellModel } from '@jupyterlab/cells';
import { INotebookTracker, Notebook, NotebookActions, NotebookPanel } from '@jupyterlab/notebook';

import { ApplyResult, CellHostFinder, ICellHost, RerunResult } from './types';

type ISessionContext = NotebookPanel['sessionContext'];

export interface IOwner {
  notebook: Notebook;
  cell: Cell;
  index: number;
  sessionContext?: ISessionContext; // the panel's kernel session: what Re-run runs the cells in
}

/** The notebook cell whose node contains `node`, or null. */
export function findOwner(tracker: INotebookTracker, node: HTMLElement): IOwner | null {
  let found: IOwner | null = null;
  tracker.forEach(panel => {
    const notebook = panel.content;
    if (found !== null || !notebook.node.contains(node)) {
      return;
    }
    const index = notebook.widgets.findIndex(cell => cell.node.contains(node));
    if (index >= 0) {
      found = { notebook, cell: notebook.widgets[index], index, sessionContext: panel.sessionContext };
    }
  });
  return found;
}

/** Insert a code cell holding exactly `source` below `index`; make it the active cell, not run. */
export function insertBelow(notebook: Notebook, index: number, source: string): void {
  const model = notebook.model;
  if (model === null) {
    return;
  }
  const shared = model.sharedModel;
  stopCapturing(shared); // NB: its own undo step, not merged with the edit before it
  shared.insertCell(index + 1, { cell_type: 'code', source, metadata: { trusted: true } });
  stopCapturing(shared);
  notebook.deselectAll();
  notebook.activeCellIndex = index + 1;
  notebook.mode = 'command';
  notebook.activate(); // NB: keyboard focus on the new cell: Shift+Enter runs it, Enter edits it
  const cell = notebook.widgets[index + 1];
  if (cell) {
    void notebook.scrollToCell(cell);
  }
}

/**
 * Replace the cell's source in one transaction of its shared model, so the cell editor's undo
 * (Ctrl+Z, or the notebook's undo when document-wide undo is on) brings the old source back.
 */
export function replaceSource(cell: Cell, source: string): void {
  const shared = cell.model.sharedModel;
  stopCapturing(shared);
  shared.setSource(source);
  stopCapturing(shared);
}

/** Close the open undo step: Yjs merges changes less than half a second apart into one. */
function stopCapturing(shared: object): void {
  // NB: the shared models expose their Yjs UndoManager, but the ISharedNotebook / ISharedCell
  // interfaces do not declare it.
  const manager = (shared as { undoManager?: { stopCapturing?: () => void } | null }).undoManager;
  manager?.stopCapturing?.();
}

/** A cell's text as the fix compares it: what ran equals the notebook's text modulo the newlines at its
 * end (IPython's text of a cell may end in one the notebook's does not hold). */
function sameText(a: string, b: string): boolean {
  const plain = (text: string) => text.replace(/\r\n/g, '\n').replace(/\n+$/, '');
  return plain(a) === plain(b);
}

/** The notebook's code cells that ran as In [`count`], the card's own cell left out. */
function cellsThatRan(owner: IOwner, count: number): Cell[] {
  return owner.notebook.widgets.filter(
    cell =>
      cell !== owner.cell &&
      cell.model.type === 'code' &&
      (cell.model as ICodeCellModel).executionCount === count
  );
}

/**
 * Apply a fix to the cell that ran as In [`count`]: only when it still holds `original`, what ran, and
 * as one undoable step. A cell edited since is left alone: its text is newer than the fix.
 */
export function applyTo(owner: IOwner, count: number, original: string, source: string): ApplyResult {
  const ran = cellsThatRan(owner, count);
  const target = ran.find(cell => sameText(cell.model.sharedModel.getSource(), original));
  if (target !== undefined) {
    replaceSource(target, source);
    return 'applied';
  }
  if (ran.some(cell => sameText(cell.model.sharedModel.getSource(), source))) {
    return 'already';
  }
  return ran.length ? 'changed' : 'gone';
}

/** Run `cells` in order with the notebook's own run action; false when one of them failed. */
async function runInOrder(notebook: Notebook, cells: Cell[], sessionContext?: ISessionContext): Promise<boolean> {
  // NB: NotebookActions.runCells is JupyterLab 4.1+; 4.0 runs the active cell, one cell at a time
  const actions = NotebookActions as unknown as {
    runCells?: (nb: Notebook, cells: readonly Cell[], sessionContext?: ISessionContext) => Promise<boolean>;
  };
  if (typeof actions.runCells === 'function') {
    return actions.runCells(notebook, cells, sessionContext);
  }
  for (const cell of cells) {
    const index = notebook.widgets.indexOf(cell);
    if (index < 0) {
      return false;
    }
    notebook.activeCellIndex = index;
    notebook.deselectAll();
    if (!(await NotebookActions.run(notebook, sessionContext))) {
      return false;
    }
  }
  return true;
}

/**
 * Run the cell that ran as In [`count`] and now holds the fix, then the cells that ran as In [`between`]
 * (the model built from the fixed class), then the card's own cell.
 */
export async function rerun(owner: IOwner, count: number, source: string, between: number[] = []): Promise<RerunResult> {
  const fixed = cellsThatRan(owner, count).find(cell => sameText(cell.model.sharedModel.getSource(), source));
  if (fixed === undefined || owner.notebook.widgets.indexOf(owner.cell) < 0) {
    return 'gone';
  }
  const later = between.map(n => cellsThatRan(owner, n)[0]).filter((cell): cell is Cell => cell !== undefined);
  return (await runInOrder(owner.notebook, [fixed, ...later, owner.cell], owner.sessionContext)) ? 'ran' : 'failed';
}

/** Kernel states in which nothing runs, or will finish: the cell's [*] is stale there. */
const DOWN = new Set(['dead', 'terminating', 'restarting', 'autorestarting']);

/**
 * True while the kernel runs the owner's cell: the cell's own [*] (`executionState`, set when the notebook
 * sends the request and cleared at its reply or when the kernel restarts or dies) on a kernel that is up.
 */
export function running(owner: IOwner): boolean {
  // NB: not the kernel's busy/idle: it flickers with the control channel's requests while a cell runs
  const model = owner.cell.model;
  const kernel = owner.sessionContext?.session?.kernel;
  return (
    model.type === 'code' &&
    (model as ICodeCellModel).executionState === 'running' &&
    !!kernel &&
    !DOWN.has(kernel.status)
  );
}

/** Call `changed` when the owner's cell or its kernel changes state; returns the disconnect. */
export function watchRunning(owner: IOwner, changed: () => void): () => void {
  const onChange = () => changed();
  const model = owner.cell.model;
  const session = owner.sessionContext;
  model.stateChanged.connect(onChange);
  session?.statusChanged.connect(onChange);
  session?.kernelChanged.connect(onChange);
  return () => {
    model.stateChanged.disconnect(onChange);
    session?.statusChanged.disconnect(onChange);
    session?.kernelChanged.disconnect(onChange);
  };
}

/** Interrupt the notebook's kernel exactly as the toolbar's stop button does (apputils' interrupt item). */
export async function interrupt(owner: IOwner): Promise<void> {
  const kernel = owner.sessionContext?.session?.kernel;
  if (!kernel) {
    throw new Error('no kernel');
  }
  await kernel.interrupt();
}

export function cellHostFinder(tracker: INotebookTracker | null): CellHostFinder {
  return (node: HTMLElement): ICellHost | null => {
    const owner = tracker ? findOwner(tracker, node) : null;
    if (owner === null) {
      return null;
    }
    return {
      insertBelow: source => insertBelow(owner.notebook, owner.index, source),
      replace: source => replaceSource(owner.cell, source),
      applyTo: (count, original, source) => applyTo(owner, count, original, source),
      rerun: (count, source, between) => rerun(owner, count, source, between),
      running: () => running(owner),
      watchRunning: changed => watchRunning(owner, changed),
      interrupt: () => interrupt(owner)
    };
  };
}
