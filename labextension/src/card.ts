/**
 * The card as DOM: the same structure and class names as grad_magic/templates/card.html.j2.
 *
 * NB: every piece of data reaches the page through `textContent` or `setAttribute`; nothing here
 * parses HTML. The buttons call the cell host (insert / replace / apply to In [k] / re-run; a live
 * card's Stop, stop.ts, interrupts) or the clipboard; nothing runs but from the Re-run button's click.
 *
 * NB: buttons only on an armed card (`ICardContext.armed`: an output of this session's kernel, or of a
 * notebook the user trusts); a card saved in a notebook from someone else shows what it proposes and
 * offers nothing to click. The diff is computed from the text the buttons would write, never read from
 * the card's JSON, and long lines wrap (style/base.css) so nothing hides to the right.
 */
import { lineDiff } from './diff';
import { highlightLines, Token } from './highlight';
import { appendProse, pythonWord } from './prose';
import { FixTarget, ICellHost, IDiagnosis, IDiffLine, IFixCell } from './types';

const CONTEXT = 2; // lines shown around each culprit line, as in render/common.py
const COLUMNS = ['name', 'shape', 'dtype', 'device', 'requires_grad', 'version'];

/** Where the card's buttons act: found when a button is clicked, since the card may move. */
export interface ICardContext {
  host: () => ICellHost | null;
  copy: (text: string) => Promise<boolean>;
  /** Buttons shown: the output is trusted (JupyterLab's `IMimeModel.trusted`: it came from this session's
   * kernel, or the notebook's signature is the user's own). */
  armed: boolean;
}

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className = '',
  text?: string
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

/** A label from the card's own catalog strings; the English word when an older kernel lacks it. */
export function label(d: IDiagnosis, key: string, fallback: string): string {
  const value = d.labels ? d.labels[key] : undefined;
  return typeof value === 'string' && value ? value : fallback;
}

function appendTokens(parent: HTMLElement, tokens: Token[]): void {
  for (const [css, text] of tokens) {
    parent.appendChild(el('span', css, text));
  }
}

/** The title: what broke, where (style/base.css marks it with the card's severity). */
function title(d: IDiagnosis): HTMLElement {
  return appendProse(el('h3', 'gm-title'), d.title);
}

/** The small footer: tool, severity, the kind's slug. */
function foot(d: IDiagnosis): HTMLElement {
  const severity = label(d, 'severity.' + d.severity, d.severity);
  const line = el('div', 'gm-foot', `grad_magic · ${severity} · `);
  line.appendChild(el('span', 'gm-kind', d.kind));
  return line;
}

function explanation(d: IDiagnosis): HTMLElement {
  const list = el('dl');
  const rows: [string, string, string][] = [
    ['what', 'What happened', d.what],
    ['why', 'Why', d.why],
    ['where', 'Where', d.where]
  ];
  for (const [key, fallback, text] of rows) {
    list.appendChild(el('dt', '', label(d, key, fallback)));
    list.appendChild(appendProse(el('dd'), text || ''));
  }
  return list;
}

/** The running cell, In [k] or a user's file, as a card names it: `In [3]`, `model.py`, "this cell". */
export function placeLabel(d: IDiagnosis, cell: number | null | undefined, file: string, isThis: boolean): string {
  if (isThis) {
    return label(d, 'this_cell', 'this cell');
  }
  if (cell !== null && cell !== undefined) {
    return `In [${cell}]`;
  }
  return file.split(/[\\/]/).pop() || file;
}

/** One cell (or file) whose lines the card shows: another cell's as it ran, or the running cell's. */
export interface IPart {
  cell: number | null;
  file: string;
  elsewhere: boolean;
  function: string; // of the first culprit line there that names one
  source: string;
  culprits: Set<number>;
}

/**
 * The cells the culprit lines are in, as render/common.py's `excerpts` groups them: other cells first,
 * in the order the lines list them, then the running cell. Schema 1 lines are all in the running cell.
 */
export function parts(d: IDiagnosis): IPart[] {
  const key = (cell: number | null | undefined, file: string | undefined) => `${cell ?? ''}\u0000${file ?? ''}`;
  const texts = new Map<string, string>();
  for (const other of d.elsewhere || []) {
    texts.set(key(other.cell, other.file), other.source || '');
  }
  const found: IPart[] = [];
  for (const line of d.lines || []) {
    const elsewhere = line.elsewhere === true;
    const cell = line.cell ?? null;
    const file = line.file || '';
    let part = found.find(p => p.elsewhere === elsewhere && p.cell === cell && p.file === file);
    if (!part) {
      const source = elsewhere ? texts.get(key(cell, file)) ?? '' : d.source || '';
      part = { cell, file, elsewhere, function: '', source, culprits: new Set() };
      found.push(part);
    }
    part.culprits.add(line.lineno);
    if (!part.function && line.function) {
      part.function = line.function;
    }
  }
  // NB: a stable sort: other cells first, each group in the order of the lines
  return found.filter(p => p.elsewhere).concat(found.filter(p => !p.elsewhere));
}

/** A cell's culprit lines with `context` lines around each, and a gap mark where lines are skipped. */
export function excerpt(source: string, culprits: Set<number>, context = CONTEXT): HTMLElement | null {
  const lines = (source || '').split('\n');
  if (lines.length && lines[lines.length - 1] === '' && source.endsWith('\n')) {
    lines.pop(); // NB: Python's splitlines() has no empty last line
  }
  const keep = new Set<number>();
  culprits.forEach(c => {
    for (let n = c - context; n <= c + context; n++) {
      if (n >= 1 && n <= lines.length) {
        keep.add(n);
      }
    }
  });
  if (!keep.size) {
    return null;
  }
  const tokens = highlightLines(source);
  const pre = el('pre', 'gm-excerpt');
  let last = 0;
  for (const n of Array.from(keep).sort((a, b) => a - b)) {
    if (last && n !== last + 1) {
      pre.appendChild(el('span', 'gm-gap', '     …\n'));
    }
    const line = el('span', culprits.has(n) ? 'gm-culprit' : '');
    line.appendChild(el('span', 'gm-ln', String(n)));
    appendTokens(line, tokens[n - 1] || []);
    pre.appendChild(line);
    pre.appendChild(document.createTextNode('\n'));
    last = n;
  }
  return pre;
}

/** One excerpt per cell, each titled with its place (`In [3] · Net.forward`) when it is not alone or
 * not the running cell; `context` lines around each culprit line (0: the marked lines alone). */
function excerpts(d: IDiagnosis, context = CONTEXT): HTMLElement[] {
  const all = parts(d);
  const shown: HTMLElement[] = [];
  for (const part of all) {
    const pre = excerpt(part.source, part.culprits, context);
    if (pre === null) {
      continue;
    }
    if (all.length > 1 || part.elsewhere) {
      const place = el('div', 'gm-place', placeLabel(d, part.cell, part.file, !part.elsewhere));
      if (part.function) {
        place.appendChild(document.createTextNode(' · '));
        place.appendChild(el('code', '', part.function));
      }
      shown.push(place);
    }
    shown.push(pre);
  }
  return shown;
}

function tensorTable(d: IDiagnosis): HTMLElement | null {
  if (!d.tensors || !d.tensors.length) {
    return null;
  }
  const box = el('div');
  box.appendChild(el('strong', '', label(d, 'tensors', 'Tensors involved')));
  const table = el('table');
  const headRow = table.createTHead().insertRow();
  for (const key of COLUMNS) {
    headRow.appendChild(el('th', '', label(d, 'column.' + key, key)));
  }
  const body = table.createTBody();
  for (const t of d.tensors) {
    const row = body.insertRow();
    const cells = [t.name, t.shape, t.dtype, t.device, t.requires_grad, t.version];
    for (const value of cells) {
      row.appendChild(el('td', '', pythonWord(value)));
    }
  }
  box.appendChild(table);
  return box;
}

function codeBlock(className: string, code: string): HTMLElement {
  const pre = el('pre', className);
  highlightLines(code).forEach((tokens, i) => {
    if (i > 0) {
      pre.appendChild(document.createTextNode('\n'));
    }
    appendTokens(pre, tokens);
  });
  return pre;
}

/** The diff of what ran -> the fixed text (diff.ts computes it: the card's stored `diff` is not read). */
function diffBlock(diff: IDiffLine[]): HTMLElement {
  const pre = el('pre', 'gm-diff');
  diff.forEach(({ sign, text }, i) => {
    if (sign !== '+' && sign !== '-' && i === 0) {
      return; // NB: a hunk's header says no more than the fix's sentence: a gap mark between hunks only
    }
    const line = sign === '+' || sign === '-' ? el('span', sign === '+' ? 'gm-add' : 'gm-del', `${sign} ${text}`)
      : el('span', 'gm-gap', '  …');
    pre.appendChild(line);
    pre.appendChild(document.createTextNode('\n'));
  });
  return pre;
}

function button(className: string, text: string, onClick: () => void): HTMLButtonElement {
  const node = el('button', `gm-button ${className}`, text);
  node.type = 'button';
  node.addEventListener('click', event => {
    event.preventDefault();
    event.stopPropagation(); // NB: the notebook must not treat the click as a click on the output
    onClick();
  });
  return node;
}

/**
 * The fixed cells, schema 1 and 2 alike: schema 2's `fix.cells` (other cells first), or schema 1's one
 * fixed running cell (a saved notebook's card).
 */
export function fixCells(d: IDiagnosis): IFixCell[] {
  const fix = d.fix;
  if (!fix) {
    return [];
  }
  if (Array.isArray(fix.cells)) {
    return fix.cells;
  }
  if (typeof fix.source !== 'string') {
    return [];
  }
  return [{ target: 'this', source: fix.source, original: d.source, edits: fix.edits || [], diff: fix.diff || [] }];
}

/** The In [k] a fixed cell replaces, or null (the running cell, a file). */
export function targetCount(target: FixTarget): number | null {
  if (typeof target === 'object' && target !== null && 'execution_count' in target) {
    const count = target.execution_count;
    return typeof count === 'number' ? count : null;
  }
  return null;
}

function targetFile(target: FixTarget): string | null {
  if (typeof target === 'object' && target !== null && 'file' in target && typeof target.file === 'string') {
    return target.file;
  }
  return null;
}

/** The status line of one fixed cell's buttons, and how it says a label (`{place}` filled in). */
class Status {
  readonly node = el('span', 'gm-status');

  constructor(
    private readonly _d: IDiagnosis,
    private readonly _place: string
  ) {
    this.node.setAttribute('role', 'status');
    this.node.setAttribute('aria-live', 'polite');
  }

  text(key: string, fallback: string, place = this._place): string {
    return label(this._d, key, fallback).split('{place}').join(place);
  }

  say(key: string, fallback: string, place = this._place): void {
    this.node.textContent = this.text(key, fallback, place);
  }
}

function copier(source: string, status: Status, context: ICardContext): () => void {
  return () => {
    context.copy(source).then(
      ok => (ok ? status.say('copied', 'Copied.') : status.say('copy_failed', 'Copy failed.')),
      () => status.say('copy_failed', 'Copy failed.')
    );
  };
}

/** The running cell's buttons: Insert below, Replace, Copy (as before schema 2). */
function thisCellActions(box: HTMLElement, source: string, status: Status, context: ICardContext): void {
  const copy = copier(source, status, context);
  const act = (what: 'insertBelow' | 'replace', key: string, fallback: string) => () => {
    const host = context.host();
    if (host === null) {
      copy(); // NB: not in a notebook cell (an output view, a console): the clipboard is the way
      return;
    }
    host[what](source);
    status.say(key, fallback);
  };
  box.appendChild(
    button('gm-insert', status.text('insert', 'Insert fixed cell below'), act('insertBelow', 'inserted', 'Inserted.'))
  );
  box.appendChild(
    button('gm-replace', status.text('replace', 'Replace this cell'), act('replace', 'replaced', 'Replaced.'))
  );
  box.appendChild(button('gm-copy', status.text('copy', 'Copy fixed cell'), copy));
}

/**
 * An earlier cell's buttons: Apply to In [k] (only where the cell still holds what ran), then, as a
 * separate click, Re-run In [k] and this cell; Copy always.
 */
function earlierCellActions(
  box: HTMLElement,
  count: number,
  cell: IFixCell,
  status: Status,
  context: ICardContext
): void {
  const copy = copier(cell.source, status, context);
  const copyButton = button('gm-copy', status.text('copy', 'Copy fixed cell'), copy);
  let rerun: HTMLButtonElement | null = null;
  // NB: the button names every cell it will run (In [2], In [3] and this cell) before it runs them
  const between = cell.rerun ?? [];
  const through = [count, ...between].map(n => `In [${n}]`).join(', ');
  const offerRerun = () => {
    if (rerun !== null) {
      return;
    }
    rerun = button('gm-rerun', status.text('rerun', 'Re-run {place} and this cell', through), () => {
      const host = context.host();
      if (host === null || rerun === null) {
        return;
      }
      const pressed = rerun;
      pressed.disabled = true;
      status.say('rerunning', 'Running {place}, then this cell…', through);
      host.rerun(count, cell.source, between).then(
        result => {
          if (result === 'ran') {
            status.say('rerun_done', 'Ran {place} and this cell.', through);
          } else if (result === 'failed') {
            status.say('rerun_failed', 'An error stopped the run: see the outputs of {place} and this cell.', through);
          } else {
            status.say('rerun_gone', '{place} no longer holds the fix: nothing was run.');
          }
          pressed.disabled = false;
        },
        () => {
          status.say('rerun_failed', 'An error stopped the run: see the outputs of {place} and this cell.', through);
          pressed.disabled = false;
        }
      );
    });
    box.insertBefore(rerun, copyButton);
  };
  const apply = () => {
    const host = context.host();
    if (host === null) {
      copy(); // NB: not in a notebook cell: the clipboard is the way
      return;
    }
    const result = host.applyTo(count, cell.original, cell.source);
    if (result === 'applied') {
      status.say('applied', 'Applied to {place} (not run; undo restores it).');
      offerRerun();
    } else if (result === 'already') {
      status.say('already_applied', '{place} holds the fix already.');
      offerRerun();
    } else {
      // NB: never a guess: the user's newer text stays, and the fix is theirs to copy
      if (result === 'changed') {
        status.say(
          'changed',
          '{place} has changed since it ran: nothing was replaced. Copy the fix and apply it by hand.'
        );
      } else {
        status.say(
          'gone',
          'No cell of this notebook ran as {place} any more (re-run or deleted): nothing was replaced. ' +
            'Copy the fix and apply it by hand.'
        );
      }
      copyButton.classList.add('gm-offer');
      copyButton.focus();
    }
  };
  box.appendChild(button('gm-apply', status.text('apply', 'Apply to {place}'), apply));
  box.appendChild(copyButton);
}

/** One fixed cell: its place, diff, full text and buttons (a file gets the diff and Copy only). */
function fixCellBlock(d: IDiagnosis, cell: IFixCell, alone: boolean, context: ICardContext): HTMLElement {
  const count = targetCount(cell.target);
  const file = targetFile(cell.target);
  const isThis = count === null && file === null;
  const place = placeLabel(d, count, file || '', isThis);
  const block = el('div', 'gm-fixcell');
  block.setAttribute('data-target', isThis ? 'this' : count !== null ? String(count) : file || '');
  block.setAttribute('data-fixed-source', cell.source);
  if (!alone || !isThis) {
    block.appendChild(el('div', 'gm-place', place));
  }
  block.appendChild(diffBlock(lineDiff(cell.original ?? d.source ?? '', cell.source)));
  const status = new Status(d, place);
  const details = el('details', 'gm-fixed-cell');
  const lines = cell.source.split('\n').length;
  const heading = isThis && alone
    ? label(d, 'fixed_cell_long', 'Fixed cell ({lines} lines)').replace('{lines}', String(lines))
    : status.text('fixed_copy', 'Fixed copy of {place}');
  details.appendChild(el('summary', '', heading));
  details.appendChild(codeBlock('gm-fixed', cell.source));
  if (!context.armed) {
    const unarmed = 'This card was saved in a notebook you have not trusted: it offers no buttons. Run the cell for a live card.';
    block.appendChild(el('div', 'gm-meta gm-unarmed', label(d, 'unarmed', unarmed)));
    block.appendChild(details);
    return block;
  }
  const box = el('div', 'gm-actions');
  if (isThis) {
    thisCellActions(box, cell.source, status, context);
  } else if (count !== null) {
    earlierCellActions(box, count, cell, status, context);
  } else {
    if (cell.reload) {
      // NB: the file is the user's to change (the diff shows how); the cell reloads its module afterwards
      const reload = cell.reload;
      box.appendChild(
        button('gm-insert', status.text('insert_reload', 'Insert the cell that reloads {place} below'), () => {
          const host = context.host();
          if (host === null) {
            copier(reload, status, context)();
            return;
          }
          host.insertBelow(reload);
          status.say('inserted_reload', 'Inserted below (not run): change {place} as the diff shows, then run it.');
        })
      );
    }
    box.appendChild(button('gm-copy', status.text('copy', 'Copy fixed cell'), copier(cell.source, status, context)));
  }
  box.appendChild(status.node);
  block.appendChild(box);
  if (file !== null) {
    const hint = status.text('file_hint', 'Change {place} itself (the diff shows how), then reload it.');
    block.appendChild(appendProse(el('div', 'gm-meta'), hint));
  }
  block.appendChild(details);
  return block;
}

function fixSection(d: IDiagnosis, context: ICardContext): HTMLElement {
  const fix = d.fix!;
  const box = el('div', 'gm-fix');
  box.appendChild(el('strong', '', `${label(d, 'fix', 'Fix')}:`));
  box.appendChild(document.createTextNode(' '));
  appendProse(box, fix.description);
  const cells = fixCells(d);
  for (const cell of cells) {
    box.appendChild(fixCellBlock(d, cell, cells.length === 1, context));
  }
  if (!context.armed && d.labels && d.labels.gradfix_hint) {
    box.appendChild(appendProse(el('div', 'gm-meta gm-gradfix'), d.labels.gradfix_hint));
  }
  return box;
}

/** The collapsed part: what / why / where in full, the lines around, the tensors, the raw errors, versions. */
function details(d: IDiagnosis): HTMLElement {
  const more = el('details', 'gm-more');
  more.appendChild(el('summary', '', label(d, 'details', 'Details')));
  more.appendChild(explanation(d));
  for (const part of excerpts(d)) {
    more.appendChild(part);
  }
  const table = tensorTable(d);
  if (table) {
    more.appendChild(table);
  }
  const raw: [string, string][] = [];
  if (d.error) {
    raw.push([`${label(d, 'original_error', 'Original error')}: ${d.error.type}`, d.error.message]);
  }
  if (d.trace) {
    raw.push([label(d, 'trace', "torch's report of the forward call"), d.trace]);
  }
  for (const [summary, text] of raw) {
    const box = el('details');
    box.appendChild(el('summary', '', summary));
    box.appendChild(el('pre', '', text));
    more.appendChild(box);
  }
  const versions = Object.entries(d.versions || {}).map(([name, v]) => `${name} ${v}`);
  more.appendChild(el('div', 'gm-meta', `${label(d, 'versions', 'Versions')}: ${versions.join(' · ')}`));
  for (const note of d.notes || []) {
    more.appendChild(appendProse(el('div', 'gm-meta', `${label(d, 'notes', 'Notes')}: `), note));
  }
  return more;
}

/** Whether a card is live: the kernel displayed it while its cell was still running (issue 20). */
export function isLive(d: IDiagnosis): boolean {
  return typeof d.live === 'object' && d.live !== null;
}

/** What the HTML card says instead of a button: interrupt the kernel (I, I / Ctrl-C). */
export function interruptHint(d: IDiagnosis): HTMLElement {
  const hint = el('p', 'gm-interrupt');
  const fallback = 'To stop the cell now, interrupt it: I, I (or the stop button) in a notebook, Ctrl-C in a terminal.';
  hint.appendChild(el('strong', '', label(d, 'interrupt', fallback)));
  return hint;
}

/** A live card's note, as the HTML card's `gm-live-note`: the step's finding, its cost, then how to stop. */
function liveNote(d: IDiagnosis, stop: HTMLElement | null): HTMLElement {
  const live = d.live!;
  const note = el('div', 'gm-live-note');
  note.setAttribute('data-live-step', String(live.step));
  note.appendChild(el('strong', '', `${label(d, 'live', 'Found while the cell runs')}:`));
  for (const text of [live.found, live.cost]) {
    if (text) {
      note.appendChild(document.createTextNode(' '));
      appendProse(note, text);
    }
  }
  note.appendChild(stop ?? interruptHint(d));
  return note;
}

/**
 * The whole card: first the title, the cause, the marked lines, the fix's diff and its buttons (one screen);
 * then, collapsed, the details. Error cards are red, warning cards amber, the generic card grey. `stop`: a live armed
 * card's Stop the cell (stop.ts), in the live note right under the summary where it is seen first; an
 * unarmed live card says to interrupt instead.
 */
export function buildCard(d: IDiagnosis, context: ICardContext, stop: HTMLElement | null = null): HTMLElement {
  const severity = d.severity === 'warning' ? 'warning' : 'error';
  const card = el('div', `gm-card gm-${severity}${d.kind === 'generic' ? ' gm-generic' : ''}`);
  card.setAttribute('data-kind', d.kind);
  card.setAttribute('lang', d.language === 'zh' ? 'zh-Hans' : 'en');
  card.appendChild(title(d));
  card.appendChild(appendProse(el('p', 'gm-summary'), d.summary));
  if (isLive(d)) {
    card.appendChild(liveNote(d, stop));
  }
  for (const part of excerpts(d, 0)) {
    card.appendChild(part);
  }
  if (d.fix) {
    card.appendChild(fixSection(d, context));
  } else if (severity === 'error') {
    card.appendChild(appendProse(el('p', 'gm-meta'), label(d, 'no_fix', 'No certain fix for this one.')));
  }
  card.appendChild(details(d));
  card.appendChild(foot(d));
  return card;
}
