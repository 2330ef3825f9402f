import { buildCard, ICardContext } from '../card';
import { ApplyResult, ICellHost, RerunResult } from '../types';
import { FIXED, LABELS, LABELS_2, MODEL, MODEL_FIXED, sample, sample2, settle, SOURCE, TRAIN } from './sample';

function context(host: ICellHost | null = null, copied = true, armed = true) {
  const copy = jest.fn((_: string) => Promise.resolve(copied));
  const ctx: ICardContext = { host: () => host, copy, armed };
  return { ctx, copy };
}

function recordingHost(applied: ApplyResult = 'applied', reran: RerunResult = 'ran') {
  const calls: any[][] = [];
  const host: ICellHost = {
    insertBelow: source => calls.push(['insertBelow', source]),
    replace: source => calls.push(['replace', source]),
    applyTo: (count, original, source) => {
      calls.push(['applyTo', count, original, source]);
      return applied;
    },
    rerun: (count, source) => {
      calls.push(['rerun', count, source]);
      return Promise.resolve(reran);
    },
    running: () => false,
    watchRunning: () => () => undefined,
    interrupt: () => {
      calls.push(['interrupt']);
      return Promise.resolve();
    }
  };
  return { host, calls };
}

const texts = (card: HTMLElement, selector: string) =>
  Array.from(card.querySelectorAll(selector)).map(n => n.textContent);

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
    expect(card.querySelector('.gm-foot')!.textContent).toContain('grad_magic · error');
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
    expect(card.querySelector('.gm-foot')!.textContent).toContain('warning');
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

  it('shows the marked lines first, and in its details with two lines of context and numbers', () => {
    const d = sample({ lines: [{ lineno: 2, text: 'import torch' }, { lineno: 7, text: 'y.sum().backward()' }] });
    const card = buildCard(d, context().ctx);
    const first = card.querySelector(':scope > .gm-excerpt')!;
    const numbers = (pre: Element) => Array.from(pre.querySelectorAll('.gm-ln')).map(n => n.textContent);
    expect(numbers(first)).toEqual(['2', '7']);
    expect(first.querySelectorAll('.gm-gap')).toHaveLength(1);
    const pre = card.querySelector('.gm-more > .gm-excerpt')!;
    expect(numbers(pre)).toEqual(['1', '2', '3', '4', '5', '6', '7']);
    const culprits = Array.from(pre.querySelectorAll('.gm-culprit')).map(n => n.textContent);
    expect(culprits).toEqual(['2import torch', '7y.sum().backward()']);
    expect(pre.querySelector('.gm-gap')).toBeNull();

    const gapped = buildCard(sample({ lines: [{ lineno: 1, text: '' }, { lineno: 7, text: '' }] }), context().ctx);
    const marks = gapped.querySelectorAll('.gm-more > .gm-excerpt .gm-gap');
    expect(marks).toHaveLength(1);
  });

  it('lists the tensors under localized column names, English when the kernel sends none', () => {
    const d = sample();
    const card = buildCard(d, context().ctx);
    const heads = Array.from(card.querySelectorAll('th')).map(n => n.textContent);
    expect(heads).toEqual(['name', 'shape', 'dtype', 'device', 'requires_grad', 'version']);
    const cells = Array.from(card.querySelectorAll('tbody td')).map(n => n.textContent);
    expect(cells).toEqual(['x', '(1,)', 'float32', 'cpu', 'True', '0']);

    d.labels['column.name'] = '名称';
    const zh = buildCard(d, context().ctx);
    expect(zh.querySelector('th')!.textContent).toBe('名称');
  });

  it("keeps the original error, torch's trace and the versions in its collapsed details, the kind in its footer", () => {
    const card = buildCard(sample({ notes: ['rule x crashed'], trace: 'Error detected in MulBackward0. Traceback' }),
      context().ctx);
    const more = card.querySelector(':scope > details.gm-more:not([open])') as HTMLElement;
    expect(more.querySelector(':scope > summary')!.textContent).toBe('Details');
    expect(texts(more, ':scope > details > summary')).toEqual([
      'Original error: RuntimeError', "torch's report of the forward call"
    ]);
    expect(more.textContent).toContain('Error detected in MulBackward0');
    expect(card.lastElementChild!.className).toBe('gm-foot');
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

describe('a schema 2 card (the culprit in an earlier cell)', () => {
  it('shows an excerpt per cell, each titled with its cell and function, the earlier cell first', () => {
    const card = buildCard(sample2(), context().ctx);
    expect(texts(card, ':scope > .gm-place')).toEqual(['In [3] · Net.forward', 'this cell']);
    expect(texts(card, '.gm-more > .gm-place')).toEqual(['In [3] · Net.forward', 'this cell']);
    expect(card.querySelectorAll(':scope > .gm-excerpt')).toHaveLength(2);
    const excerpts = card.querySelectorAll('.gm-more > .gm-excerpt');
    expect(excerpts).toHaveLength(2);
    const numbers = (pre: Element) => Array.from(pre.querySelectorAll('.gm-ln')).map(n => n.textContent);
    expect(numbers(excerpts[0])).toEqual(['5', '6', '7', '8']);
    expect(Array.from(excerpts[0].querySelectorAll('.gm-culprit')).map(n => n.textContent)).toEqual([
      '7        noise = torch.randn(x.shape)',
      '8        return self.fc(x + noise)'
    ]);
    expect(numbers(excerpts[1])).toEqual(['1', '2', '3', '4', '5']);
    expect(excerpts[1].querySelector('.gm-culprit')!.textContent).toBe('3    loss = model(x).sum()');
  });

  it('titles an excerpt of a user file by the file name', () => {
    const d = sample2({
      lines: [
        { lineno: 2, text: 'b', cell: null, file: '/home/u/model.py', function: 'f', elsewhere: true, this: false }
      ],
      elsewhere: [{ cell: null, file: '/home/u/model.py', source: 'a\nb\nc' }]
    });
    const card = buildCard(d, context().ctx);
    expect(texts(card, ':scope > .gm-place')).toEqual(['model.py · f']);
  });

  it('shows one block for the fixed earlier cell: its diff, its text, Apply and Copy, no Re-run yet', () => {
    const card = buildCard(sample2(), context().ctx);
    const blocks = card.querySelectorAll('.gm-fixcell');
    expect(blocks).toHaveLength(1);
    const block = blocks[0] as HTMLElement;
    expect(block.getAttribute('data-target')).toBe('3');
    expect(block.getAttribute('data-fixed-source')).toBe(MODEL_FIXED);
    expect(block.querySelector('.gm-place')!.textContent).toBe('In [3]');
    expect(block.querySelector('summary')!.textContent).toBe('Fixed copy of In [3]');
    expect(block.querySelector('.gm-fixed')!.textContent).toBe(MODEL_FIXED);
    expect(texts(block, '.gm-diff > span')).toEqual([
      '-         noise = torch.randn(x.shape)',
      '+         noise = torch.randn(x.shape, device=device)'
    ]);
    const buttons = Array.from(block.querySelectorAll('button')).map(b => [b.className, b.textContent]);
    expect(buttons).toEqual([
      ['gm-button gm-apply', 'Apply to In [3]'],
      ['gm-button gm-copy', 'Copy fixed cell']
    ]);
  });

  it("says its labels in the kernel's words when it sends them, English otherwise", () => {
    const zh = { ...LABELS_2, apply: '应用到 {place}', this_cell: '本单元格', fixed_copy: '{place} 的修复版本' };
    const card = buildCard(sample2({ labels: zh }), context().ctx);
    expect(card.querySelector('.gm-apply')!.textContent).toBe('应用到 In [3]');
    expect(card.querySelector('.gm-fixcell summary')!.textContent).toBe('In [3] 的修复版本');
    expect(texts(card, ':scope > .gm-place')[1]).toBe('本单元格');
  });

  it('Apply hands the host the count, what ran and the fix; then offers Re-run as its own click', async () => {
    const { host, calls } = recordingHost('applied', 'ran');
    const { ctx, copy } = context(host);
    const card = buildCard(sample2(), ctx);
    click(card, '.gm-apply');
    expect(calls).toEqual([['applyTo', 3, MODEL, MODEL_FIXED]]); // NB: nothing run
    expect(card.querySelector('.gm-status')!.textContent).toBe('Applied to In [3] (not run; undo restores it).');
    const rerun = card.querySelector('.gm-rerun') as HTMLButtonElement;
    expect(rerun.textContent).toBe('Re-run In [3] and this cell');
    expect(texts(card, '.gm-fixcell button')).toEqual([
      'Apply to In [3]',
      'Re-run In [3] and this cell',
      'Copy fixed cell'
    ]);
    click(card, '.gm-apply'); // NB: a second Apply offers no second Re-run
    expect(card.querySelectorAll('.gm-rerun')).toHaveLength(1);

    click(card, '.gm-rerun');
    expect(card.querySelector('.gm-status')!.textContent).toBe('Running In [3], then this cell…');
    expect(rerun.disabled).toBe(true);
    await settle();
    expect(calls.slice(2)).toEqual([['rerun', 3, MODEL_FIXED]]);
    expect(card.querySelector('.gm-status')!.textContent).toBe('Ran In [3] and this cell.');
    expect(rerun.disabled).toBe(false);
    expect(copy).not.toHaveBeenCalled();
  });

  it('Re-run says when a cell failed, or when In [k] no longer holds the fix', async () => {
    for (const [result, said] of [
      ['failed', LABELS_2.rerun_failed],
      ['gone', 'In [3] no longer holds the fix: nothing was run.']
    ]) {
      const { host } = recordingHost('applied', result as RerunResult);
      const card = buildCard(sample2(), context(host).ctx);
      click(card, '.gm-apply');
      click(card, '.gm-rerun');
      await settle();
      expect(card.querySelector('.gm-status')!.textContent).toBe(said);
    }
  });

  it('a cell that holds the fix already is not replaced again, and can be re-run', () => {
    const { host } = recordingHost('already');
    const card = buildCard(sample2(), context(host).ctx);
    click(card, '.gm-apply');
    expect(card.querySelector('.gm-status')!.textContent).toBe('In [3] holds the fix already.');
    expect(card.querySelector('.gm-rerun')).not.toBeNull();
  });

  it.each([
    ['changed', 'In [3] has changed since it ran: nothing was replaced.'],
    ['gone', 'No cell ran as In [3] any more: nothing was replaced.']
  ])('Apply on a cell that is %s says so, offers Copy, and no Re-run', (result, said) => {
    const { host } = recordingHost(result as ApplyResult);
    const card = buildCard(sample2(), context(host).ctx);
    click(card, '.gm-apply');
    expect(card.querySelector('.gm-status')!.textContent).toBe(said);
    expect(card.querySelector('.gm-rerun')).toBeNull();
    expect(card.querySelector('.gm-copy')!.classList).toContain('gm-offer');
  });

  it('Apply outside a notebook cell copies the fixed cell instead', async () => {
    const { ctx, copy } = context(null);
    const card = buildCard(sample2(), ctx);
    click(card, '.gm-apply');
    await settle();
    expect(copy).toHaveBeenCalledWith(MODEL_FIXED);
    expect(card.querySelector('.gm-rerun')).toBeNull();
  });

  it('a fix of an earlier cell and of this cell: a block each, earlier first, this one with Insert and Replace', () => {
    const d = sample2();
    d.fix!.cells!.push({ target: 'this', source: FIXED, original: SOURCE, edits: [], diff: [] });
    d.fix!.source = FIXED;
    const { host, calls } = recordingHost();
    const card = buildCard(d, context(host).ctx);
    const blocks = Array.from(card.querySelectorAll('.gm-fixcell'));
    expect(blocks.map(b => b.getAttribute('data-target'))).toEqual(['3', 'this']);
    expect(blocks.map(b => b.querySelector('.gm-place')!.textContent)).toEqual(['In [3]', 'this cell']);
    expect(texts(blocks[1] as HTMLElement, 'button')).toEqual([
      'Insert fixed cell below',
      'Replace this cell',
      'Copy fixed cell'
    ]);
    (blocks[1].querySelector('.gm-replace') as HTMLButtonElement).click();
    expect(calls).toEqual([['replace', FIXED]]);
    expect(blocks[0].querySelector('.gm-status')!.textContent).toBe('');
    expect(blocks[1].querySelector('.gm-status')!.textContent).toBe(LABELS.replaced);
  });

  it("a user file's fix: the diff and Copy only, and where to change it", async () => {
    const d = sample2();
    d.fix!.cells = [{ ...d.fix!.cells![0], target: { file: '/home/u/nets.py' } }];
    const { host, calls } = recordingHost();
    const { ctx, copy } = context(host);
    const card = buildCard(d, ctx);
    const block = card.querySelector('.gm-fixcell')!;
    expect(block.getAttribute('data-target')).toBe('/home/u/nets.py');
    expect(block.querySelector('.gm-place')!.textContent).toBe('nets.py');
    expect(texts(block as HTMLElement, 'button')).toEqual(['Copy fixed cell']);
    expect(block.querySelector('.gm-diff')!.children.length).toBe(2); // NB: no hunk header before the first hunk
    expect(block.querySelector('.gm-meta')!.textContent).toContain('nets.py');
    click(card, '.gm-copy');
    await settle();
    expect(copy).toHaveBeenCalledWith(MODEL_FIXED);
    expect(calls).toEqual([]);
  });

  it("a user file's fix with its module loaded: Insert puts the cell that reloads it below, never the file", () => {
    const d = sample2();
    const reload = 'import importlib\nimport nets\nimportlib.reload(nets)\nfrom nets import Net';
    d.fix!.cells = [{ ...d.fix!.cells![0], target: { file: '/home/u/nets.py' }, reload }];
    const { host, calls } = recordingHost();
    const card = buildCard(d, context(host).ctx);
    const block = card.querySelector('.gm-fixcell') as HTMLElement;
    expect(texts(block, 'button')).toEqual(['Insert the cell that reloads nets.py below', 'Copy fixed cell']);
    click(card, '.gm-insert');
    expect(calls).toEqual([['insertBelow', reload]]);
    expect(block.querySelector('.gm-status')!.textContent).toContain('change nets.py as the diff shows');
  });

  it('reads a schema 1 card of a saved notebook as a fix of this cell', () => {
    const card = buildCard(sample(), context().ctx);
    const block = card.querySelector('.gm-fixcell')!;
    expect(block.getAttribute('data-target')).toBe('this');
    expect(block.querySelector('.gm-place')).toBeNull();
    expect(card.querySelector('.gm-place')).toBeNull(); // NB: one excerpt, of this cell: no title
  });

  it('never parses the other cells, functions or fixed cells as HTML', () => {
    const evil = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>';
    const d = sample2({
      elsewhere: [{ cell: 3, file: '', source: MODEL.replace('noise = ', `noise = "${evil}" and `) }]
    });
    d.lines[0].function = evil;
    d.fix!.cells![0].source = evil;
    d.fix!.cells![0].diff = [{ sign: '+', text: evil }];
    d.labels.apply = evil + '{place}';
    const card = buildCard(d, context().ctx);
    expect(card.querySelector('img')).toBeNull();
    expect(card.querySelector('script')).toBeNull();
    expect(card.querySelector('.gm-place code')!.textContent).toBe(evil);
    expect(card.querySelector('.gm-fixcell .gm-fixed')!.textContent).toBe(evil);
    expect(card.querySelector('.gm-apply')!.textContent).toBe(evil + 'In [3]');
    expect(card.querySelector('.gm-fixcell')!.getAttribute('data-fixed-source')).toBe(evil);
  });

  it('keeps the running cell the excerpt of a card whose lines are all in it', () => {
    const d = sample2({
      lines: [{ lineno: 3, text: '', cell: 5, file: '', function: '', elsewhere: false, this: true }]
    });
    const card = buildCard(d, context().ctx);
    expect(card.querySelectorAll(':scope > .gm-excerpt')).toHaveLength(1);
    expect(card.querySelector(':scope > .gm-place')).toBeNull();
    expect(card.querySelector('.gm-excerpt')!.textContent).toContain(TRAIN.split('\n')[2]);
  });

  it('says the tensor flags as Python does, as the HTML card says them', () => {
    const d = sample();
    d.tensors[0].requires_grad = false;
    const card = buildCard(d, context().ctx);
    expect(texts(card, 'tbody td')).toContain('False');
    expect(texts(card, 'tbody td')).not.toContain('false');
  });

  it('shows code in backticks as <code>, as text', () => {
    const d = sample({ title: '`w` needs <b>a</b> gradient', what: 'Line 3 makes `w` with `torch.tensor`.' });
    const card = buildCard(d, context().ctx);
    expect(card.querySelector('h3')!.textContent).toBe('w needs <b>a</b> gradient');
    expect(texts(card.querySelector('h3')!, 'code')).toEqual(['w']);
    expect(card.querySelector('b')).toBeNull();
    expect(texts(card.querySelector('dd')!, 'code')).toEqual(['w', 'torch.tensor']);
    expect(card.querySelector('dd')!.textContent).toBe('Line 3 makes w with torch.tensor.');
  });

  it('shows the diff of the text the buttons write, never the stored one', () => {
    const hidden = 'w = torch.tensor([1.0])' + ' '.repeat(300) + "; __import__('os').system('rm -rf ~')";
    const d = sample();
    d.fix!.source = SOURCE.replace('w = torch.tensor([1.0])', hidden);
    const card = buildCard(d, context().ctx);
    expect(texts(card, '.gm-diff > span')).toEqual(['- w = torch.tensor([1.0])', '+ ' + hidden]);
  });

  it('offers no button on a card it does not trust, and says so', () => {
    const { host, calls } = recordingHost();
    for (const d of [sample(), sample2()]) {
      const card = buildCard(d, context(host, true, false).ctx);
      expect(card.querySelectorAll('button')).toHaveLength(0);
      expect(card.querySelector('.gm-unarmed')!.textContent).toContain('not trusted');
      expect(card.querySelector('.gm-fixed')).not.toBeNull(); // NB: what it proposes is still shown
    }
    expect(calls).toEqual([]);
  });
});
