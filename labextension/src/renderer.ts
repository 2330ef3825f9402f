/** The MIME renderer for grad_magic cards: a widget that shows one card, and its factory. */
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

import { buildCard } from './card';
import { copyText } from './clipboard';
import { CellHostFinder, IDiagnosis, MIME_TYPE, RANK } from './types';

export const RENDERER_CLASS = 'jp-RenderedGradMagic';

export class RenderedDiagnosis extends Widget implements IRenderMime.IRenderer {
  constructor(
    private readonly _mimeType: string,
    private readonly _findHost: CellHostFinder
  ) {
    super();
    this.addClass(RENDERER_CLASS);
  }

  renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const data = model.data[this._mimeType] as unknown as IDiagnosis;
    // NB: `trusted` is JupyterLab's: true for an output this session's kernel sent (running a cell trusts
    // it) or one of a notebook whose signature the server verified; false for the outputs of a notebook
    // from someone else, which its file cannot change (the server overwrites each cell's trust on load).
    const card = buildCard(data, {
      host: () => this._findHost(this.node),
      copy: copyText,
      armed: model.trusted === true
    });
    this.node.replaceChildren(card);
    return Promise.resolve();
  }
}

/**
 * The renderer factory. Safe: the card builds its DOM from text nodes only, so it is shown in
 * untrusted notebooks too -- without its buttons there (see `renderModel`), as the HTML card, sanitised,
 * loses its own.
 */
export function createRendererFactory(findHost: CellHostFinder): IRenderMime.IRendererFactory {
  return {
    safe: true,
    mimeTypes: [MIME_TYPE],
    defaultRank: RANK,
    createRenderer: options => new RenderedDiagnosis(options.mimeType, findHost)
  };
}
