/**
 * The buttons on a real JupyterLab notebook (widget and shared model) in jsdom: the owning cell is found
 * by DOM containment, Insert adds exactly the fixed cell below it, Replace is one undoable step.
 */
import { CodeCell } from '@jupyterlab/cells';
import { INotebookTracker, Notebook, NotebookModel } from '@jupyterlab/notebook';
import { NBTestUtils } from '@jupyterlab/notebook/lib/testutils';
import { Widget } from '@lumino/widgets';

import { cellHostFinder, findOwner } from '../notebook';
import { createRendererFactory } from '../renderer';
import { MIME_TYPE, RANK } from '../types';
import { FIXED, LABELS, sample, SOURCE } from './sample';

/** A tracker over one notebook: all `findOwner` uses of it. */
function trackerOf(notebook: Notebook): INotebookTracker {
  return { forEach: (fn: (panel: any) => void) => fn({ content: notebook }) } as unknown as INotebookTracker;
}

function cardBundle() {
  return {
    output_type: 'display_data',
    data: {
      'text/plain': 'grad_magic card',
      'text/html': '<div class="gm-card">the HTML card</div>',
      [MIME_TYPE]: sample() as any
    },
    metadata: {}
  };
}

describe('the card in a notebook', () => {
  let notebook: Notebook;

  beforeEach(() => {
    notebook = NBTestUtils.createNotebook();
    notebook.rendermime.addFactory(createRendererFactory(cellHostFinder(trackerOf(notebook))), RANK);
    const model = new NotebookModel();
    model.sharedModel.insertCells(0, [
      { cell_type: 'code', source: '%load_ext grad_magic' },
      { cell_type: 'code', source: SOURCE },
      { cell_type: 'markdown', source: 'the end' }
    ]);
    notebook.model = model;
    Widget.attach(notebook, document.body);
    (notebook.widgets[1] as CodeCell).model.outputs.add(cardBundle() as any);
  });

  afterEach(() => {
    notebook.model?.dispose();
    notebook.dispose();
  });

  const card = () => notebook.widgets[1].node.querySelector('.gm-card') as HTMLElement;
  const click = (selector: string) => (card().querySelector(selector) as HTMLButtonElement).click();
  const sources = () => notebook.model!.sharedModel.cells.map(c => c.getSource());

  it('renders the card once, from the JSON, in the cell output', () => {
    const outputs = notebook.widgets[1].node.querySelectorAll('.gm-card');
    expect(outputs).toHaveLength(1);
    expect(card().closest('.jp-RenderedGradMagic')).not.toBeNull();
    expect(card().textContent).not.toContain('the HTML card');
  });

  it('finds the cell that shows the card', () => {
    const owner = findOwner(trackerOf(notebook), card().querySelector('.gm-insert') as HTMLElement);
    expect(owner?.index).toBe(1);
    expect(owner?.cell).toBe(notebook.widgets[1]);
    expect(findOwner(trackerOf(notebook), document.createElement('div'))).toBeNull();
  });

  it('Insert adds exactly the fixed cell right below, selected and not run', () => {
    notebook.activeCellIndex = 0;
    click('.gm-insert');
    expect(sources()).toEqual(['%load_ext grad_magic', SOURCE, FIXED, 'the end']);
    const inserted = notebook.widgets[2] as CodeCell;
    expect(inserted.model.type).toBe('code');
    expect(inserted.model.executionCount).toBeNull();
    expect(inserted.model.outputs.length).toBe(0);
    expect(notebook.activeCellIndex).toBe(2);
    expect(notebook.mode).toBe('command');
    expect(card().querySelector('.gm-status')!.textContent).toBe(LABELS.inserted);
  });

  it("Insert is undone by the notebook's undo", () => {
    click('.gm-insert');
    expect(sources()).toHaveLength(4);
    notebook.model!.sharedModel.undo();
    expect(sources()).toEqual(['%load_ext grad_magic', SOURCE, 'the end']);
  });

  it("Replace sets the cell's source, and the cell's undo (Ctrl+Z) brings it back", () => {
    const cell = notebook.widgets[1];
    cell.model.sharedModel.setSource(SOURCE + '\n# edited'); // NB: an edit just before the click
    click('.gm-replace');
    expect(cell.model.sharedModel.getSource()).toBe(FIXED);
    expect(sources()).toHaveLength(3);
    expect(card().querySelector('.gm-status')!.textContent).toBe(LABELS.replaced);
    expect(cell.model.sharedModel.canUndo()).toBe(true);
    cell.model.sharedModel.undo();
    expect(cell.model.sharedModel.getSource()).toBe(SOURCE + '\n# edited');
    cell.model.sharedModel.redo();
    expect(cell.model.sharedModel.getSource()).toBe(FIXED);
  });
});
