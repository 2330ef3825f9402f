import { MimeModel, RenderMimeRegistry, standardRendererFactories } from '@jupyterlab/rendermime';
import { Widget } from '@lumino/widgets';

import { createRendererFactory, RenderedDiagnosis } from '../renderer';
import { ICellHost, MIME_TYPE, RANK } from '../types';
import { sample, sampleLive } from './sample';

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

describe('a live card in the renderer (issue 20)', () => {
  /** A host whose cell runs; counts the watches open on it. */
  function runningHost() {
    const watching = { open: 0 };
    const host = {
      running: () => true,
      watchRunning: () => {
        watching.open += 1;
        return () => (watching.open -= 1);
      },
      interrupt: () => Promise.resolve()
    } as unknown as ICellHost;
    return { host, watching };
  }

  const bundle = (d: any) => ({ ...BUNDLE, [MIME_TYPE]: d });
  const stop = (renderer: Widget) => renderer.node.querySelector('.gm-stop') as HTMLButtonElement | null;

  it('follows its cell from attach to detach, and an update that is no longer live drops Stop', async () => {
    const { host, watching } = runningHost();
    const renderer = new RenderedDiagnosis(MIME_TYPE, () => host);
    await renderer.renderModel(new MimeModel({ data: bundle(sampleLive()), trusted: true }));
    expect(stop(renderer)!.hidden).toBe(true); // NB: rendered before the output area attaches it
    Widget.attach(renderer, document.body);
    expect(stop(renderer)!.hidden).toBe(false);
    expect(watching.open).toBe(1);
    // NB: update_display_data renders the attached widget again
    await renderer.renderModel(new MimeModel({ data: bundle(sampleLive({ live: { step: 4 } })), trusted: true }));
    expect(stop(renderer)!.hidden).toBe(false);
    expect(watching.open).toBe(1);
    await renderer.renderModel(new MimeModel({ data: bundle(sample()), trusted: true }));
    expect(stop(renderer)).toBeNull();
    expect(watching.open).toBe(0);
    await renderer.renderModel(new MimeModel({ data: bundle(sampleLive()), trusted: true }));
    expect(watching.open).toBe(1);
    Widget.detach(renderer);
    expect(watching.open).toBe(0);
    renderer.dispose();
  });

  it('an untrusted live card has no Stop, even in a running cell', async () => {
    const { host, watching } = runningHost();
    const renderer = new RenderedDiagnosis(MIME_TYPE, () => host);
    await renderer.renderModel(new MimeModel({ data: bundle(sampleLive()), trusted: false }));
    Widget.attach(renderer, document.body);
    expect(stop(renderer)).toBeNull();
    expect(watching.open).toBe(0);
    renderer.dispose();
  });
});
