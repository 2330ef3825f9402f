/** The MIME renderer for grad_magic cards: a widget that shows one card, and its factory. */
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

import type { Message } from '@lumino/messaging';

import { buildCard, isLive } from './card';
import { copyText } from './clipboard';
import { StopControl } from './stop';
import { CellHostFinder, IDiagnosis, MIME_TYPE, RANK } from './types';

export const RENDERER_CLASS = 'jp-RenderedGradMagic';

export class RenderedDiagnosis extends Widget implements IRenderMime.IRenderer {
  private _stop: StopControl | null = null; // a live card's Stop the cell, armed cards only

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
    const armed = model.trusted === true;
    this._stop?.unfollow();
    this._stop = armed && isLive(data) ? new StopControl(data) : null;
    const card = buildCard(data, { host: () => this._findHost(this.node), copy: copyText, armed }, this._stop?.node);
    this.node.replaceChildren(card);
    if (this.isAttached) {
      this._stop?.follow(this._findHost(this.node)); // NB: an update of a displayed card (update_display_data)
    }
    return Promise.resolve();
  }

  // NB: the output area renders a card before it attaches it, and the cell that shows it is found in the
  // page (cellHostFinder): so the Stop row follows its cell's run from attach to detach.
  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    this._stop?.follow(this._findHost(this.node));
  }

  protected onBeforeDetach(msg: Message): void {
    this._stop?.unfollow();
    super.onBeforeDetach(msg);
  }

  dispose(): void {
    this._stop?.unfollow();
    super.dispose();
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
