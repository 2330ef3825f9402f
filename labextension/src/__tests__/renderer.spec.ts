import { MimeModel, RenderMimeRegistry, standardRendererFactories } from '@jupyterlab/rendermime';

import { createRendererFactory, RenderedDiagnosis } from '../renderer';
import { MIME_TYPE, RANK } from '../types';
import { sample } from './sample';

const BUNDLE = {
  'text/plain': 'grad_magic · error ...',
  'text/html': '<div class="gm-card">the HTML card</div>',
  [MIME_TYPE]: sample() as any
};

describe('the renderer factory', () => {
  it('outranks the HTML card (lower rank wins), trusted or not', () => {
    const registry = new RenderMimeRegistry({ initialFactories: standardRendererFactories });
    expect(registry.preferredMimeType(BUNDLE, 'any')).toBe('text/html'); // NB: before: HTML wins
    registry.addFactory(createRendererFactory(() => null), RANK);
    expect(registry.getRank('text/html')).toBeGreaterThan(RANK);
    expect(registry.preferredMimeType(BUNDLE, 'any')).toBe(MIME_TYPE);
    expect(registry.preferredMimeType(BUNDLE, 'ensure')).toBe(MIME_TYPE);
  });

  it('is safe, so untrusted notebooks show the card too', () => {
    expect(createRendererFactory(() => null).safe).toBe(true);
  });

  it('arms the buttons of a trusted output only (this session ran it, or the user trusts the notebook)', async () => {
    const registry = new RenderMimeRegistry({ initialFactories: standardRendererFactories });
    registry.addFactory(createRendererFactory(() => null), RANK);
    for (const trusted of [false, true]) {
      const renderer = registry.createRenderer(MIME_TYPE);
      await renderer.renderModel(new MimeModel({ data: BUNDLE, trusted }));
      const buttons = Array.from(renderer.node.querySelectorAll('button')).map(b => b.className);
      expect(buttons).toEqual(trusted ? ['gm-button gm-insert', 'gm-button gm-replace', 'gm-button gm-copy'] : []);
    }
  });

  it('renders one card from the JSON', async () => {
    const registry = new RenderMimeRegistry({ initialFactories: standardRendererFactories });
    registry.addFactory(createRendererFactory(() => null), RANK);
    const renderer = registry.createRenderer(MIME_TYPE);
    expect(renderer).toBeInstanceOf(RenderedDiagnosis);
    await renderer.renderModel(new MimeModel({ data: BUNDLE, trusted: false }));
    expect(renderer.node.classList).toContain('jp-RenderedGradMagic');
    expect(renderer.node.querySelectorAll('.gm-card')).toHaveLength(1);
    expect(renderer.node.textContent).not.toContain('the HTML card');
    expect(renderer.node.querySelector('h3')!.textContent).toBe(sample().title);
  });
});
