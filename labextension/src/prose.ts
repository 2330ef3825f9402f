/**
 * Text with code in backticks, as DOM: each `span` a <code>, the rest text nodes (render/common.py's
 * `code_spans`; the HTML card's template does the same). Nothing here parses HTML.
 */
export function appendProse(parent: HTMLElement, text: string): HTMLElement {
  const value = text || '';
  const code = /`([^`\n]+)`/g;
  let at = 0;
  let m: RegExpExecArray | null;
  while ((m = code.exec(value)) !== null) {
    const start = m.index;
    if (start > at) {
      parent.appendChild(document.createTextNode(value.slice(at, start)));
    }
    const node = document.createElement('code');
    node.textContent = m[1];
    parent.appendChild(node);
    at = start + m[0].length;
  }
  if (at < value.length) {
    parent.appendChild(document.createTextNode(value.slice(at)));
  }
  return parent;
}

/** A Python value as Python prints it (`True`, `False`), as the HTML and text cards say it. */
export function pythonWord(value: unknown): string {
  if (value === null || value === undefined) {
    return '';
  }
  if (typeof value === 'boolean') {
    return value ? 'True' : 'False';
  }
  return String(value);
}
