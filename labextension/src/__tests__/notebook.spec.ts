/**
 * The buttons on a real JupyterLab notebook (widget and shared model) in jsdom: the owning cell is found
 * by DOM containment, Insert adds exactly the fixed cell below it, Replace is one undoable step.
 */
import { CodeCell, ICodeCellModel } from '@jupyterlab/cells';
import { INotebookTracker, Notebook, NotebookActions, NotebookModel } from '@jupyterlab/notebook';
import { NBTestUtils } from '@jupyterlab/notebook/lib/testutils';
import { Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

import { cellHostFinder, findOwner } from '../notebook';
import { createRendererFactory } from '../renderer';
import { MIME_TYPE, RANK } from '../types';
import { FIXED, LABELS, MODEL, MODEL_FIXED, sample, sample2, sampleLive, settle, SOURCE, TRAIN } from './sample';

/** A tracker over one notebook (and its panel's kernel session, if given): all `findOwner` uses of it. */
function trackerOf(notebook: Notebook, sessionContext?: unknown): INotebookTracker {
  const panel = { content: notebook, sessionContext };
  return { forEach: (fn: (panel: any) => void) => fn(panel) } as unknown as INotebookTracker;
}

function cardBundle(d = sample()) {
  return {
    output_type: 'display_data',
    data: {
      'text/plain': 'grad_magic card',
      'text/html': '<div class="gm-card">the HTML card</div>',
      [MIME_TYPE]: d as any
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
    (notebook.widgets[1] as CodeCell).model.trusted = true; // NB: as running the cell makes it (CodeCell.execute)
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

  it("a card among a notebook's saved outputs (its cell not trusted) offers no button", () => {
    const saved = notebook.widgets[1] as CodeCell;
    saved.model.outputs.clear();
    saved.model.trusted = false;
    saved.model.outputs.add(cardBundle() as any);
    expect(card().querySelectorAll('button')).toHaveLength(0);
    expect(card().querySelector('.gm-unarmed')).not.toBeNull();
    expect(sources()).toEqual(['%load_ext grad_magic', SOURCE, 'the end']);
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

describe('a fix of an earlier cell in a notebook', () => {
  let notebook: Notebook;
  let runCells: jest.SpyInstance;

  // In [1] loads grad_magic, In [2] imports, In [3] defines the model, In [4] makes it; In [5] trains
  // and shows the card. A markdown cell sits between.
  const IMPORTS = 'import torch\nimport torch.nn as nn\ndevice = torch.device("meta")';
  const MAKE = 'model = Net().to(device)';

  beforeEach(() => {
    notebook = NBTestUtils.createNotebook();
    notebook.rendermime.addFactory(createRendererFactory(cellHostFinder(trackerOf(notebook))), RANK);
    const model = new NotebookModel();
    model.sharedModel.insertCells(0, [
      { cell_type: 'code', source: '%load_ext grad_magic', execution_count: 1 },
      { cell_type: 'code', source: IMPORTS, execution_count: 2 },
      { cell_type: 'code', source: MODEL + '\n', execution_count: 3 }, // NB: what ran, modulo a newline
      { cell_type: 'markdown', source: 'Training' },
      { cell_type: 'code', source: MAKE, execution_count: 4 },
      { cell_type: 'code', source: TRAIN.replace(/\n$/, ''), execution_count: 5 }
    ]);
    notebook.model = model;
    Widget.attach(notebook, document.body);
    (notebook.widgets[5] as CodeCell).model.trusted = true;
    (notebook.widgets[5] as CodeCell).model.outputs.add(cardBundle(sample2()) as any);
    runCells = jest.spyOn(NotebookActions, 'runCells').mockImplementation(() => Promise.resolve(true));
  });

  afterEach(() => {
    runCells.mockRestore();
    notebook.model?.dispose();
    notebook.dispose();
  });

  const card = () => notebook.node.querySelector('.gm-card') as HTMLElement;
  const click = (selector: string) => (card().querySelector(selector) as HTMLButtonElement).click();
  const status = () => card().querySelector('.gm-status')!.textContent;
  const sources = () => notebook.model!.sharedModel.cells.map(c => c.getSource());
  const model = (index: number) => notebook.widgets[index].model;

  it('Apply to In [3] replaces exactly that cell with the fixed text, runs nothing, and undo restores it', () => {
    const before = sources();
    click('.gm-apply');
    expect(sources()).toEqual([...before.slice(0, 2), MODEL_FIXED, ...before.slice(3)]);
    expect(status()).toBe('Applied to In [3] (not run; undo restores it).');
    expect(runCells).not.toHaveBeenCalled();
    expect((model(2) as ICodeCellModel).executionCount).toBe(3);
    model(2).sharedModel.undo();
    expect(sources()).toEqual(before);
  });

  it('finds In [3] by its execution count wherever it is now, and not a cell that only looks the same', () => {
    notebook.model!.sharedModel.moveCell(2, 0);
    notebook.model!.sharedModel.insertCell(0, { cell_type: 'code', source: MODEL, execution_count: 7 });
    click('.gm-apply');
    expect(sources()[0]).toBe(MODEL);
    expect(sources()[1]).toBe(MODEL_FIXED);
  });

  it('Re-run, a click of its own, runs the fixed In [3] and then this cell with the notebook run action', async () => {
    click('.gm-apply');
    click('.gm-rerun');
    await settle();
    expect(runCells).toHaveBeenCalledTimes(1);
    const [nb, cells] = runCells.mock.calls[0];
    expect(nb).toBe(notebook);
    expect(cells).toEqual([notebook.widgets[2], notebook.widgets[5]]);
    expect(status()).toBe('Ran In [3] and this cell.');
  });

  it('Re-run also runs the cells that read what the fixed cell binds (the model made from the class), named first', async () => {
    const d = sample2();
    d.fix!.cells![0].rerun = [4];
    (notebook.widgets[5] as CodeCell).model.outputs.clear();
    (notebook.widgets[5] as CodeCell).model.outputs.add(cardBundle(d) as any);
    click('.gm-apply');
    expect(card().querySelector('.gm-rerun')!.textContent).toBe('Re-run In [3], In [4] and this cell');
    click('.gm-rerun');
    await settle();
    const [, cells] = runCells.mock.calls[0];
    expect(cells).toEqual([notebook.widgets[2], notebook.widgets[4], notebook.widgets[5]]);
    expect(status()).toBe('Ran In [3], In [4] and this cell.');
  });

  it('Re-run on JupyterLab 4.0 (no runCells): the run action on In [3], then on this cell', async () => {
    (NotebookActions as any).runCells = undefined; // NB: restored by the spy's mockRestore
    const ran: number[] = [];
    const run = jest.spyOn(NotebookActions, 'run').mockImplementation(nb => {
      ran.push(nb.activeCellIndex);
      return Promise.resolve(true);
    });
    try {
      click('.gm-apply');
      click('.gm-rerun');
      await settle();
      expect(ran).toEqual([2, 5]);
      expect(status()).toBe('Ran In [3] and this cell.');
    } finally {
      run.mockRestore();
    }
  });

  it('Re-run says when the run failed', async () => {
    runCells.mockImplementation(() => Promise.resolve(false));
    click('.gm-apply');
    click('.gm-rerun');
    await settle();
    expect(status()).toContain('error');
  });

  it('Re-run runs nothing when In [3] was edited after Apply', async () => {
    click('.gm-apply');
    model(2).sharedModel.setSource(MODEL_FIXED + '\n# more');
    click('.gm-rerun');
    await settle();
    expect(runCells).not.toHaveBeenCalled();
    expect(status()).toContain('no longer holds the fix');
  });

  it('In [3] edited since it ran: says so, replaces nothing, offers Copy', () => {
    model(2).sharedModel.setSource(MODEL + '\n# my own change');
    const before = sources();
    click('.gm-apply');
    expect(sources()).toEqual(before);
    expect(status()).toContain('has changed since it ran');
    expect(card().querySelector('.gm-rerun')).toBeNull();
    expect(card().querySelector('.gm-copy')!.classList).toContain('gm-offer');
  });

  it('In [3] re-run since (another count) or deleted: says it is gone, replaces nothing', () => {
    (model(2) as ICodeCellModel).executionCount = 6;
    const before = sources();
    click('.gm-apply');
    expect(sources()).toEqual(before);
    expect(status()).toBe('No cell ran as In [3] any more: nothing was replaced.');
    expect(card().querySelector('.gm-rerun')).toBeNull();
  });

  it('In [3] holding the fix already: nothing replaced, Re-run offered', () => {
    model(2).sharedModel.setSource(MODEL_FIXED);
    click('.gm-apply');
    expect(sources()[2]).toBe(MODEL_FIXED);
    expect(status()).toBe('In [3] holds the fix already.');
    expect(card().querySelector('.gm-rerun')).not.toBeNull();
  });
});

describe('a live card in a notebook (issue 20)', () => {
  let notebook: Notebook;
  let kernel: { status: string; interrupt: jest.Mock; requestExecute: jest.Mock };
  let sessionContext: {
    session: { kernel: typeof kernel };
    statusChanged: Signal<any, string>;
    kernelChanged: Signal<any, unknown>;
  };

  const cell = () => notebook.widgets[1] as CodeCell;
  const stop = () => notebook.widgets[1].node.querySelector('.gm-stop') as HTMLButtonElement;
  const status = () => notebook.widgets[1].node.querySelector('.gm-live .gm-status')!.textContent;
  const setStatus = (value: string) => {
    kernel.status = value;
    sessionContext.statusChanged.emit(value);
  };

  beforeEach(() => {
    kernel = { status: 'busy', interrupt: jest.fn(() => Promise.resolve()), requestExecute: jest.fn() };
    sessionContext = { session: { kernel }, statusChanged: new Signal({}), kernelChanged: new Signal({}) };
    notebook = NBTestUtils.createNotebook();
    notebook.rendermime.addFactory(createRendererFactory(cellHostFinder(trackerOf(notebook, sessionContext))), RANK);
    const model = new NotebookModel();
    model.sharedModel.insertCells(0, [
      { cell_type: 'code', source: '%load_ext grad_magic', execution_count: 1 },
      { cell_type: 'code', source: SOURCE }
    ]);
    notebook.model = model;
    Widget.attach(notebook, document.body);
    // NB: as CodeCell.execute leaves a cell while the kernel runs it: trusted, [*], no count yet
    cell().model.trusted = true;
    cell().model.executionState = 'running';
    cell().model.outputs.add(cardBundle(sampleLive()) as any);
  });

  afterEach(() => {
    notebook.model?.dispose();
    notebook.dispose();
  });

  it('offers Stop the cell while its cell runs', () => {
    expect(stop()).not.toBeNull();
    expect(stop().hidden).toBe(false);
    expect(stop().textContent).toBe('Stop the cell');
  });

  it("Stop interrupts the panel's kernel, as the toolbar's stop does, and runs nothing", async () => {
    const before = notebook.model!.sharedModel.cells.map(c => c.getSource());
    stop().click();
    await settle();
    expect(kernel.interrupt).toHaveBeenCalledTimes(1);
    expect(kernel.requestExecute).not.toHaveBeenCalled();
    expect(stop().disabled).toBe(true);
    expect(status()).toBe('Interrupt sent.');
    expect(notebook.model!.sharedModel.cells.map(c => c.getSource())).toEqual(before);
  });

  it('goes away when the cell ends (its count set), the kernel idle', () => {
    cell().model.executionCount = 2; // NB: the cell widget sets executionState back to idle then
    setStatus('idle');
    expect(stop().hidden).toBe(true);
  });

  it('goes away when the kernel dies or restarts under the running cell', () => {
    setStatus('restarting');
    expect(stop().hidden).toBe(true);
  });

  it('is kept through the busy/idle flicker of the running kernel', () => {
    setStatus('idle');
    setStatus('busy');
    expect(stop().hidden).toBe(false);
  });

  it('a live card of a cell that is done, or saved in an untrusted notebook, offers no Stop', () => {
    cell().model.executionState = 'idle';
    expect(stop().hidden).toBe(true);
    cell().model.outputs.clear();
    cell().model.trusted = false;
    cell().model.executionState = 'running';
    cell().model.outputs.add(cardBundle(sampleLive()) as any);
    expect(stop()).toBeNull();
    expect(notebook.widgets[1].node.querySelectorAll('.gm-card button')).toHaveLength(0);
  });

  it('a card that is not live offers no Stop, running or not', () => {
    cell().model.outputs.clear();
    cell().model.outputs.add(cardBundle(sample()) as any);
    expect(notebook.widgets[1].node.querySelector('.gm-card')).not.toBeNull();
    expect(stop()).toBeNull();
  });
});
