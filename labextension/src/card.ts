/**
 * The card as DOM: the same structure and class names as grad_magic/templates/card.html.j2.
 *
 * NB: every piece of data reaches the page through `textContent` or `setAttribute`; nothing here
 * parses HTML. The buttons call the cell host (insert / replace) or the clipboard.
 */
import { highlightLines, Token } from './highlight';
import { ICellHost, IDiagnosis } from './types';

const CONTEXT = 2; // lines shown around each culprit line, as in render/common.py
const COLUMNS = ['name', 'shape', 'dtype', 'device', 'requires_grad', 'version'];

/** Where the card's buttons act: found when a button is clicked, since the card may move. */
export interface ICardContext {
  host: () => ICellHost | null;
  copy: (text: string) => Promise<boolean>;
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
function label(d: IDiagnosis, key: string, fallback: string): string {
  const value = d.labels ? d.labels[key] : undefined;
  return typeof value === 'string' && value ? value : fallback;
}

function appendTokens(parent: HTMLElement, tokens: Token[]): void {
  for (const [css, text] of tokens) {
    parent.appendChild(el('span', css, text));
  }
}

function header(d: IDiagnosis): HTMLElement {
  const head = el('div', 'gm-head');
  const severity = label(d, 'severity.' + d.severity, d.severity);
  head.appendChild(el('span', '', `grad_magic · ${severity}`));
  head.appendChild(el('span', 'gm-kind', d.kind));
  return head;
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
    list.appendChild(el('dd', '', text || ''));
  }
  return list;
}

/** The culprit lines with CONTEXT lines around each, and a gap mark where lines are skipped. */
export function excerpt(d: IDiagnosis): HTMLElement | null {
  const lines = (d.source || '').split('\n');
  if (lines.length && lines[lines.length - 1] === '' && d.source.endsWith('\n')) {
    lines.pop(); // NB: Python's splitlines() has no empty last line
  }
  const culprits = new Set((d.lines || []).map(l => l.lineno));
  const keep = new Set<number>();
  culprits.forEach(c => {
    for (let n = c - CONTEXT; n <= c + CONTEXT; n++) {
      if (n >= 1 && n <= lines.length) {
        keep.add(n);
      }
    }
  });
  if (!keep.size) {
    return null;
  }
  const tokens = highlightLines(d.source);
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
    const flag = (value: unknown) => (value === null || value === undefined ? '' : String(value));
    const cells = [t.name, t.shape, t.dtype, t.device, t.requires_grad, t.version];
    for (const value of cells) {
      row.appendChild(el('td', '', flag(value)));
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

function diffBlock(d: IDiagnosis): HTMLElement {
  const pre = el('pre', 'gm-diff');
  for (const { sign, text } of d.fix ? d.fix.diff : []) {
    const css = sign === '+' ? 'gm-add' : sign === '-' ? 'gm-del' : 'gm-gap';
    pre.appendChild(el('span', css, `${sign} ${text}`));
    pre.appendChild(document.createTextNode('\n'));
  }
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

function actions(d: IDiagnosis, source: string, context: ICardContext): HTMLElement {
  const box = el('div', 'gm-actions');
  const status = el('span', 'gm-status');
  status.setAttribute('role', 'status');
  status.setAttribute('aria-live', 'polite');
  const say = (key: string, fallback: string) => {
    status.textContent = label(d, key, fallback);
  };
  const copy = () => {
    context.copy(source).then(
      ok => (ok ? say('copied', 'Copied.') : say('copy_failed', 'Copy failed.')),
      () => say('copy_failed', 'Copy failed.')
    );
  };
  const act = (what: 'insertBelow' | 'replace', key: string, fallback: string) => () => {
    const host = context.host();
    if (host === null) {
      copy(); // NB: not in a notebook cell (an output view, a console): the clipboard is the way
      return;
    }
    host[what](source);
    say(key, fallback);
  };
  box.appendChild(
    button('gm-insert', label(d, 'insert', 'Insert fixed cell below'), act('insertBelow', 'inserted', 'Inserted.'))
  );
  box.appendChild(
    button('gm-replace', label(d, 'replace', 'Replace this cell'), act('replace', 'replaced', 'Replaced.'))
  );
  box.appendChild(button('gm-copy', label(d, 'copy', 'Copy fixed cell'), copy));
  box.appendChild(status);
  return box;
}

function fixSection(d: IDiagnosis, context: ICardContext): HTMLElement {
  const fix = d.fix!;
  const box = el('div', 'gm-fix');
  box.appendChild(el('strong', '', `${label(d, 'fix', 'Fix')}:`));
  box.appendChild(document.createTextNode(' ' + fix.description));
  box.appendChild(diffBlock(d));
  const details = el('details');
  details.open = true;
  details.appendChild(el('summary', '', label(d, 'fixed_cell', 'Fixed cell')));
  details.appendChild(codeBlock('gm-fixed', fix.source));
  box.appendChild(details);
  box.appendChild(actions(d, fix.source, context));
  if (d.labels && d.labels.gradfix_hint) {
    box.appendChild(el('div', 'gm-meta', d.labels.gradfix_hint));
  }
  return box;
}

function footer(card: HTMLElement, d: IDiagnosis): void {
  if (d.error) {
    const details = el('details');
    const title = `${label(d, 'original_error', 'Original error')}: ${d.error.type}`;
    details.appendChild(el('summary', '', title));
    details.appendChild(el('pre', '', d.error.message));
    card.appendChild(details);
  }
  const versions = Object.entries(d.versions || {}).map(([name, v]) => `${name} ${v}`);
  card.appendChild(el('div', 'gm-meta', `${label(d, 'versions', 'Versions')}: ${versions.join(' · ')}`));
  for (const note of d.notes || []) {
    card.appendChild(el('div', 'gm-meta', `${label(d, 'notes', 'Notes')}: ${note}`));
  }
}

/** The whole card. Error cards are red, warning cards amber, the generic card grey. */
export function buildCard(d: IDiagnosis, context: ICardContext): HTMLElement {
  const severity = d.severity === 'warning' ? 'warning' : 'error';
  const card = el('div', `gm-card gm-${severity}${d.kind === 'generic' ? ' gm-generic' : ''}`);
  card.setAttribute('data-kind', d.kind);
  card.setAttribute('lang', d.language === 'zh' ? 'zh-Hans' : 'en');
  card.appendChild(header(d));
  card.appendChild(el('h3', '', d.title));
  card.appendChild(el('p', 'gm-summary', d.summary));
  card.appendChild(explanation(d));
  const parts = [excerpt(d), tensorTable(d)];
  for (const part of parts) {
    if (part) {
      card.appendChild(part);
    }
  }
  if (d.fix) {
    card.appendChild(fixSection(d, context));
  } else if (severity === 'error') {
    card.appendChild(el('p', 'gm-meta', label(d, 'no_fix', 'No certain fix for this one.')));
  }
  footer(card, d);
  return card;
}
