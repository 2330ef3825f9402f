/**
 * grad-magic: shows grad_magic's cards (`application/vnd.grad-magic.diagnosis+json`) in JupyterLab 4
 * and Notebook 7, with one-click "Insert fixed cell below", "Replace this cell" and "Copy", and for a fix of an
 * earlier cell "Apply to In [k]" then, as its own click, "Re-run In [k] and this cell".
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';

import { cellHostFinder } from './notebook';
import { createRendererFactory } from './renderer';
import { MIME_TYPE, RANK } from './types';

export { MIME_TYPE, RANK } from './types';
export { buildCard } from './card';
export { createRendererFactory, RenderedDiagnosis } from './renderer';

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'grad-magic:renderer',
  description: 'Renders grad_magic cards with buttons that insert, replace or apply the fixed cells.',
  autoStart: true,
  requires: [IRenderMimeRegistry],
  optional: [INotebookTracker],
  activate: (
    app: JupyterFrontEnd,
    rendermime: IRenderMimeRegistry,
    tracker: INotebookTracker | null
  ): void => {
    const factory = createRendererFactory(cellHostFinder(tracker));
    rendermime.addFactory(factory, RANK);
    // NB: each notebook renders with a clone of the global registry; a notebook opened before this
    // plugin ran would not know the card.
    const ensure = (panel: NotebookPanel) => {
      const registry = panel.content.rendermime;
      if (!registry.mimeTypes.includes(MIME_TYPE)) {
        registry.addFactory(factory, RANK);
      }
    };
    tracker?.forEach(ensure);
    tracker?.widgetAdded.connect((_, panel) => ensure(panel));
  }
};

export default plugin;
