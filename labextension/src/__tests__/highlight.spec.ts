import { highlightLines } from '../highlight';

const SOURCES = [
  '%%gradcheck\nimport torch\nx = torch.ones(2, requires_grad=True)  # leaf\ny = (x * 2.5e-3).sum()',
  's = """two\nlines"""\nt = f\'{x!r}\' + rb"\\x00"\n',
  'def f(a, *, b=None):\n\treturn not a or b is True\nclass Net(torch.nn.Module): pass',
  'ünïcode = "ß" ; 0x1F + .5j # ✓\n\n\n',
  "unterminated = 'abc\nnext = 1"
];

describe('highlightLines', () => {
  it.each(SOURCES)('gives back every character, line by line: %j', source => {
    const lines = highlightLines(source);
    expect(lines.map(tokens => tokens.map(([, text]) => text).join(''))).toEqual(source.split('\n'));
  });

  it('classifies like Pygments', () => {
    const tokens = highlightLines('def f(x):\n    return None if x else len(x)  # no\nclass C: pass\ny = 1.5 + 2');
    const css = (text: string) => tokens.flat().filter(([, t]) => t === text).map(([c]) => c);
    expect(css('def')).toEqual(['k']);
    expect(css('f')).toEqual(['nf']);
    expect(css('None')).toEqual(['kc']);
    expect(css('len')).toEqual(['nb']);
    expect(css('# no')).toEqual(['c1']);
    expect(css('C')).toEqual(['nc']);
    expect(css('1.5')).toEqual(['mf']);
    expect(css('2')).toEqual(['mi']);
  });
});
