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

/** Schema 2: the culprit in an earlier cell (In [3], the model class), the fix changes that cell only. */
export const MODEL =
  'class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 2)\n\n' +
  '    def forward(self, x):\n        noise = torch.randn(x.shape)\n        return self.fc(x + noise)';

export const MODEL_FIXED = MODEL.replace('torch.randn(x.shape)', 'torch.randn(x.shape, device=device)');

export const TRAIN =
  '%%gradcheck --no-nan-check\nfor step in range(2):\n    loss = model(x).sum()\n    optimizer.zero_grad()\n' +
  '    loss.backward()\n    optimizer.step()\n';

export const LABELS_2: { [key: string]: string } = {
  ...LABELS,
  this_cell: 'this cell',
  fixed_copy: 'Fixed copy of {place}',
  apply: 'Apply to {place}',
  applied: 'Applied to {place} (not run; undo restores it).',
  already_applied: '{place} holds the fix already.',
  changed: '{place} has changed since it ran: nothing was replaced.',
  gone: 'No cell ran as {place} any more: nothing was replaced.',
  rerun: 'Re-run {place} and this cell',
  rerunning: 'Running {place}, then this cell…',
  rerun_done: 'Ran {place} and this cell.',
  rerun_failed: 'An error stopped the run.',
  rerun_gone: '{place} no longer holds the fix: nothing was run.'
};

const IN_3 = { cell: 3, file: '', function: 'Net.forward', elsewhere: true, this: false };

export function sample2(overrides: Partial<IDiagnosis> = {}): IDiagnosis {
  return {
    schema_version: 2,
    kind: 'device-mismatch',
    severity: 'error',
    language: 'en',
    title: '`add` got tensors on two devices: `noise` on cpu, `x` on meta',
    summary: '`noise` must be moved to meta.',
    what: '`add` on line 8 of In [3] was given `x` on meta, `noise` on cpu.',
    why: '`noise` is created on line 7 of In [3] without `device=`.',
    where: 'In [3], line 8, in Net.forward (called from line 3 of this cell)',
    source: TRAIN,
    cell: 5,
    lines: [
      { lineno: 7, text: '        noise = torch.randn(x.shape)', ...IN_3 },
      { lineno: 8, text: '        return self.fc(x + noise)', ...IN_3 },
      { lineno: 3, text: '    loss = model(x).sum()', cell: 5, file: '', function: '', elsewhere: false, this: true }
    ],
    elsewhere: [{ cell: 3, file: '', source: MODEL }],
    names: ['x', 'noise'],
    tensors: [],
    error: { type: 'RuntimeError', message: 'Tensor on device cpu is not on the expected device meta!' },
    fix: {
      description: 'Create `noise` on meta: add `device=device` on line 7 of In [3]',
      cells: [
        {
          target: { execution_count: 3 },
          source: MODEL_FIXED,
          original: MODEL,
          edits: [{ start: 169, end: 169, text: ', device=device' }],
          diff: [
            { sign: '@', text: '@@ -7 +7 @@' },
            { sign: '-', text: '        noise = torch.randn(x.shape)' },
            { sign: '+', text: '        noise = torch.randn(x.shape, device=device)' }
          ]
        }
      ],
      source: null,
      edits: [],
      diff: []
    },
    versions: { torch: '2.13.0', python: '3.11.2' },
    notes: [],
    labels: { ...LABELS_2 },
    ...overrides
  };
}

/** Issue 20: a live card, displayed at step 2 while the training cell still runs. */
export const LIVE_LABELS: { [key: string]: string } = {
  ...LABELS,
  stop: 'Stop the cell',
  stop_sent: 'Interrupt sent.',
  stop_failed: "The interrupt did not reach the kernel: use the toolbar's stop button.",
  live: 'Found while the cell runs',
  interrupt: 'To stop the cell now, interrupt it: I, I (or the stop button) in a notebook, Ctrl-C in a terminal.'
};

export function sampleLive(overrides: Partial<IDiagnosis> = {}): IDiagnosis {
  return sample({
    kind: 'grads-not-zeroed',
    severity: 'warning',
    title: 'step 2: `optimizer` stepped with the gradients of step 1 still in `.grad`',
    error: null,
    live: {
      step: 2,
      found: 'Step 2: `optimizer` stepped with the gradients of step 1 still in `.grad`.',
      cost: 'Left running, each step adds the gradients of every step before it.'
    },
    labels: { ...LIVE_LABELS },
    ...overrides
  });
}
