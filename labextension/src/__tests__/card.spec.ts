import { buildCard, ICardContext } from '../card';
import { ICellHost } from '../types';
import { FIXED, LABELS, sample, settle } from './sample';

function context(host: ICellHost | null = null, copied = true) {
  const copy = jest.fn((_: string) => Promise.resolve(copied));
  const ctx: ICardContext = { host: () => host, copy };
  return { ctx, copy };
}

function recordingHost() {
  const calls: [string, string][] = [];
  const host: ICellHost = {
    insertBelow: source => calls.push(['insertBelow', source]),
    replace: source => calls.push(['replace', source])
  };
  return { host, calls };
}

function click(card: HTMLElement, selector: string): void {
  const button = card.querySelector(selector) as HTMLButtonElement;
  expect(button).not.toBeNull();
  button.click();
}

describe('the card', () => {
  it('shows the title, the explanation and the localized labels as text', () => {
    const card = buildCard(sample(), context().ctx);
    expect(card.classList).toContain('gm-card');
    expect(card.classList).toContain('gm-error');
    expect(card.getAttribute('data-kind')).toBe('backward_under_no_grad');
    expect(card.querySelector('h3')!.textContent).toBe('y was computed under torch.no_grad()');
    const terms = Array.from(card.querySelectorAll('dt')).map(n => n.textContent);
    expect(terms).toEqual(['What happened', 'Why', 'Where']);
    const texts = Array.from(card.querySelectorAll('dd')).map(n => n.textContent);
    expect(texts).toEqual([sample().what, sample().why, 'line 6']);
    expect(card.querySelector('.gm-head')!.textContent).toContain('grad_magic · error');
  });

  it('never parses data as HTML', () => {
    const evil = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>';
    const d = sample({ title: evil, what: evil, source: evil + '\n' + sample().source });
    d.fix!.source = evil;
    d.error = { type: evil, message: evil };
    d.tensors[0].name = evil;
    const card = buildCard(d, context().ctx);
    expect(card.querySelector('img')).toBeNull();
    expect(card.querySelector('script')).toBeNull();
    expect(card.querySelector('h3')!.textContent).toBe(evil);
    expect(card.querySelector('.gm-fixed')!.textContent).toBe(evil);
  });

  it('is styled as a warning for a warning', () => {
    const card = buildCard(sample({ severity: 'warning', fix: null, error: null }), context().ctx);
    expect(card.classList).toContain('gm-warning');
    expect(card.classList).not.toContain('gm-error');
    expect(card.querySelector('.gm-head')!.textContent).toContain('warning');
    // NB: a warning without a fix says nothing about fixes
    expect(card.textContent).not.toContain(LABELS.no_fix);
  });

  it('marks the generic card', () => {
    const card = buildCard(sample({ kind: 'generic', fix: null }), context().ctx);
    expect(card.classList).toContain('gm-generic');
  });

  it('shows no buttons without a fix, and says there is none', () => {
    const card = buildCard(sample({ fix: null }), context().ctx);
    expect(card.querySelectorAll('button')).toHaveLength(0);
    expect(card.querySelector('.gm-fixed')).toBeNull();
    expect(card.textContent).toContain(LABELS.no_fix);
  });

  it('shows the fixed cell exactly, with its diff and three buttons', () => {
    const card = buildCard(sample(), context().ctx);
    expect(card.querySelector('.gm-fixed')!.textContent).toBe(FIXED);
    const diff = Array.from(card.querySelectorAll('.gm-diff > span')).map(n => [n.className, n.textContent]);
    expect(diff).toEqual([
      ['gm-gap', '@ @@ -5,2 +5,1 @@'],
      ['gm-del', '- with torch.no_grad():'],
      ['gm-del', '-     y = w * x'],
      ['gm-add', '+ y = w * x']
    ]);
    const buttons = Array.from(card.querySelectorAll('button')).map(b => [b.className, b.textContent]);
    expect(buttons).toEqual([
      ['gm-button gm-insert', 'Insert fixed cell below'],
      ['gm-button gm-replace', 'Replace this cell'],
      ['gm-button gm-copy', 'Copy fixed cell']
    ]);
    expect(card.querySelector('.gm-status')!.getAttribute('role')).toBe('status');
  });

  it('shows the culprit line with two lines of context and numbers', () => {
    const d = sample({ lines: [{ lineno: 2, text: 'import torch' }, { lineno: 7, text: 'y.sum().backward()' }] });
    const pre = buildCard(d, context().ctx).querySelector('.gm-excerpt')!;
    const numbers = Array.from(pre.querySelectorAll('.gm-ln')).map(n => n.textContent);
    expect(numbers).toEqual(['1', '2', '3', '4', '5', '6', '7']);
    const culprits = Array.from(pre.querySelectorAll('.gm-culprit')).map(n => n.textContent);
    expect(culprits).toEqual(['2import torch', '7y.sum().backward()']);
    expect(pre.querySelector('.gm-gap')).toBeNull();

    const gapped = buildCard(sample({ lines: [{ lineno: 1, text: '' }, { lineno: 7, text: '' }] }), context().ctx);
    const marks = gapped.querySelectorAll('.gm-excerpt .gm-gap');
    expect(marks).toHaveLength(1);
  });

  it('lists the tensors under localized column names, English when the kernel sends none', () => {
    const d = sample();
    const card = buildCard(d, context().ctx);
    const heads = Array.from(card.querySelectorAll('th')).map(n => n.textContent);
    expect(heads).toEqual(['name', 'shape', 'dtype', 'device', 'requires_grad', 'version']);
    const cells = Array.from(card.querySelectorAll('tbody td')).map(n => n.textContent);
    expect(cells).toEqual(['x', '(1,)', 'float32', 'cpu', 'true', '0']);

    d.labels['column.name'] = '名称';
    const zh = buildCard(d, context().ctx);
    expect(zh.querySelector('th')!.textContent).toBe('名称');
  });

  it('keeps the original error and the versions', () => {
    const card = buildCard(sample({ notes: ['rule x crashed'] }), context().ctx);
    expect(card.querySelector('details:not([open]) summary')!.textContent).toBe('Original error: RuntimeError');
    expect(card.textContent).toContain('Versions: torch 2.13.0 · python 3.11.2');
    expect(card.textContent).toContain('Notes: rule x crashed');
  });
});

describe('the buttons', () => {
  it('Insert gives the cell host exactly the fixed source and says so', () => {
    const { host, calls } = recordingHost();
    const { ctx, copy } = context(host);
    const card = buildCard(sample(), ctx);
    click(card, '.gm-insert');
    expect(calls).toEqual([['insertBelow', FIXED]]);
    expect(copy).not.toHaveBeenCalled();
    expect(card.querySelector('.gm-status')!.textContent).toBe(LABELS.inserted);
  });

  it('Replace gives the cell host exactly the fixed source and says undo restores it', () => {
    const { host, calls } = recordingHost();
    const card = buildCard(sample(), context(host).ctx);
    click(card, '.gm-replace');
    expect(calls).toEqual([['replace', FIXED]]);
    expect(card.querySelector('.gm-status')!.textContent).toBe(LABELS.replaced);
  });

  it('Insert outside a notebook cell copies instead', async () => {
    const { ctx, copy } = context(null);
    const card = buildCard(sample(), ctx);
    click(card, '.gm-insert');
    await settle();
    expect(copy).toHaveBeenCalledWith(FIXED);
    expect(card.querySelector('.gm-status')!.textContent).toBe(LABELS.copied);
  });

  it('Copy copies the fixed source, and says when it could not', async () => {
    const { ctx, copy } = context(null, false);
    const card = buildCard(sample(), ctx);
    click(card, '.gm-copy');
    await settle();
    expect(copy).toHaveBeenCalledWith(FIXED);
    expect(card.querySelector('.gm-status')!.textContent).toBe(LABELS.copy_failed);
  });
});
