/**
 * A small Python highlighter: the source as lines of (css class, text) tokens, with the class names
 * Pygments uses (`k`, `s`, `mi`, `c1`, ...), so the JupyterLab card colours code like the HTML card.
 *
 * It only classifies text; the card puts every token into the page with `textContent`.
 */

export type Token = [string, string]; // [css class ('' for plain text), text]

const KEYWORDS = new Set([
  'as', 'assert', 'async', 'await', 'break', 'class', 'continue', 'def', 'del', 'elif', 'else',
  'except', 'finally', 'for', 'from', 'global', 'if', 'import', 'lambda', 'nonlocal', 'pass',
  'raise', 'return', 'try', 'while', 'with', 'yield'
]);
const CONSTANTS = new Set(['True', 'False', 'None']);
const WORD_OPERATORS = new Set(['and', 'or', 'not', 'in', 'is']);
const BUILTINS = new Set([
  'abs', 'all', 'any', 'bool', 'dict', 'enumerate', 'float', 'getattr', 'hasattr', 'int', 'isinstance',
  'iter', 'len', 'list', 'map', 'max', 'min', 'next', 'object', 'print', 'range', 'repr', 'round',
  'set', 'setattr', 'sorted', 'str', 'sum', 'super', 'tuple', 'type', 'zip'
]);

// NB: one alternative per token kind, tried left to right at each position (sticky).
const TOKEN = new RegExp(
  [
    '(#[^\\n]*)', // 1 comment
    '((?:[rRbBuUfF]{1,2})?(?:\'\'\'[\\s\\S]*?(?:\'\'\'|$)|"""[\\s\\S]*?(?:"""|$)|\'(?:\\\\.|[^\'\\\\\\n])*\'?|"(?:\\\\.|[^"\\\\\\n])*"?))', // 2 string
    '((?:0[xXoObB][0-9a-fA-F_]+|\\d[\\d_]*(?:\\.[\\d_]*)?|\\.\\d[\\d_]*)(?:[eE][+-]?\\d+)?[jJ]?)', // 3 number
    '([A-Za-z_][A-Za-z0-9_]*)', // 4 name
    '(\\s+|.)' // 5 anything else, one character (or a run of blanks) at a time
  ].join('|'),
  'y'
);

function classify(match: RegExpExecArray, previousWord: string): string {
  if (match[1] !== undefined) {
    return 'c1';
  }
  if (match[2] !== undefined) {
    return 's';
  }
  if (match[3] !== undefined) {
    return /[.eE]/.test(match[3]) && !/^0[xX]/.test(match[3]) ? 'mf' : 'mi';
  }
  const word = match[4];
  if (word === undefined) {
    return '';
  }
  if (previousWord === 'def') {
    return 'nf';
  }
  if (previousWord === 'class') {
    return 'nc';
  }
  if (CONSTANTS.has(word)) {
    return 'kc';
  }
  if (WORD_OPERATORS.has(word)) {
    return 'ow';
  }
  if (KEYWORDS.has(word)) {
    return 'k';
  }
  return BUILTINS.has(word) ? 'nb' : 'n';
}

/** The source as lines (split on '\n') of tokens; joining every line's texts gives the line back. */
export function highlightLines(code: string): Token[][] {
  const lines: Token[][] = [[]];
  let previousWord = '';
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < code.length) {
    const match = TOKEN.exec(code);
    if (match === null) {
      break; // NB: unreachable: the last alternative matches any character
    }
    const css = classify(match, previousWord);
    if (match[4] !== undefined) {
      previousWord = match[4];
    } else if (match[5] === undefined || match[5].trim() !== '') {
      previousWord = '';
    }
    match[0].split('\n').forEach((part, i) => {
      if (i > 0) {
        lines.push([]);
      }
      if (part) {
        lines[lines.length - 1].push([css, part]);
      }
    });
  }
  return lines;
}
