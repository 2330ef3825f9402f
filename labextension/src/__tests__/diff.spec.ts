import { lineDiff, splitLines } from '../diff';

const diff = (a: string, b: string) => lineDiff(a, b).map(l => (l.sign === '@' ? l.text : `${l.sign} ${l.text}`));

describe("the card's own diff (render/common.py's, difflib's unified diff with no context)", () => {
  it('numbers hunks as difflib does', () => {
    expect(diff('a\nb\nc\nd\n', 'a\nB\nC\nd\n')).toEqual(['@@ -2,2 +2,2 @@', '- b', '- c', '+ B', '+ C']);
    expect(diff('a\nb\nc', 'a\nc')).toEqual(['@@ -2 +1,0 @@', '- b']);
    expect(diff('a\nc', 'a\nb\nc')).toEqual(['@@ -1,0 +2 @@', '+ b']);
    expect(diff('a\nb\nc\nd\ne', 'A\nb\nc\nd\nE')).toEqual(['@@ -1 +1 @@', '- a', '+ A', '@@ -5 +5 @@', '- e', '+ E']);
    expect(diff('a\n', 'a')).toEqual([]);
    expect(diff('', 'x')).toEqual(['@@ -0,0 +1 @@', '+ x']);
  });

  it('breaks lines where Python does (LF, CRLF, CR)', () => {
    expect(splitLines('a\r\nb\rc\nd\n')).toEqual(['a', 'b', 'c', 'd']);
  });
});
