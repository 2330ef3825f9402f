/**
 * The notebook side of the card's buttons: which cell shows the card, and the edits on the notebook model.
 *
 * A MIME renderer gets no notebook handle, so the owning cell is found by DOM containment across every
 * notebook the tracker knows, at click time (cells move, notebooks split).
 */
import { Cell } from '@jupyterlab/cells';
import { INotebookTracker, Notebook } from '@jupyterlab/notebook';

import { CellHostFinder, ICellHost } from './types';

export interface IOwner {
  notebook: Notebook;
  cell: Cell;
  index: number;
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
      found = { notebook, cell: notebook.widgets[index], index };
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

export function cellHostFinder(tracker: INotebookTracker | null): CellHostFinder {
  return (node: HTMLElement): ICellHost | null => {
    const owner = tracker ? findOwner(tracker, node) : null;
    if (owner === null) {
      return null;
    }
    return {
      insertBelow: source => insertBelow(owner.notebook, owner.index, source),
      replace: source => replaceSource(owner.cell, source)
    };
  };
}
