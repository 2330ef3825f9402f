/** A diagnosis as grad_magic/render/json.py writes it, for the tests. */
import { IDiagnosis } from '../types';

export const SOURCE =
  '%%gradcheck\nimport torch\nw = torch.tensor([1.0])\nx = torch.tensor([2.0], requires_grad=True)\n' +
  'with torch.no_grad():\n    y = w * x\ny.sum().backward()';

export const FIXED =
  '%%gradcheck\nimport torch\nw = torch.tensor([1.0])\nx = torch.tensor([2.0], requires_grad=True)\n' +
  'y = w * x\ny.sum().backward()';

export const LABELS: { [key: string]: string } = {
  what: 'What happened',
  why: 'Why',
  where: 'Where',
  tensors: 'Tensors involved',
  fix: 'Fix',
  fixed_cell: 'Fixed cell',
  no_fix: 'No certain fix: the cell is left as it is.',
  original_error: 'Original error',
  versions: 'Versions',
  notes: 'Notes',
  insert: 'Insert fixed cell below',
  replace: 'Replace this cell',
  copy: 'Copy fixed cell',
  copied: 'Copied to the clipboard.',
  inserted: 'Inserted below (not run).',
  replaced: 'Replaced (undo restores it).',
  copy_failed: 'Could not copy.',
  'severity.error': 'error',
  'severity.warning': 'warning'
};

export function sample(overrides: Partial<IDiagnosis> = {}): IDiagnosis {
  return {
    schema_version: 1,
    kind: 'backward_under_no_grad',
    severity: 'error',
    language: 'en',
    title: 'y was computed under torch.no_grad()',
    summary: 'backward() needs a graph.',
    what: 'y.sum().backward() failed: y has no grad_fn.',
    why: 'Operations under torch.no_grad() record no graph.',
    where: 'line 6',
    source: SOURCE,
    lines: [{ lineno: 6, text: '    y = w * x' }],
    names: ['y', 'w', 'x'],
    tensors: [
      {
        name: 'x',
        kind: 'tensor',
        shape: '(1,)',
        dtype: 'float32',
        device: 'cpu',
        requires_grad: true,
        is_leaf: true,
        grad_fn: null,
        version: 0
      }
    ],
    error: { type: 'RuntimeError', message: 'element 0 of tensors does not require grad' },
    fix: {
      description: 'compute y outside torch.no_grad()',
      source: FIXED,
      edits: [],
      diff: [
        { sign: '@', text: '@@ -5,2 +5,1 @@' },
        { sign: '-', text: 'with torch.no_grad():' },
        { sign: '-', text: '    y = w * x' },
        { sign: '+', text: 'y = w * x' }
      ]
    },
    versions: { torch: '2.13.0', python: '3.11.2' },
    notes: [],
    labels: { ...LABELS },
    ...overrides
  };
}

/** Wait for promise callbacks (the clipboard) to settle. */
export function settle(): Promise<void> {
  return new Promise(resolve => setTimeout(resolve, 0));
}
