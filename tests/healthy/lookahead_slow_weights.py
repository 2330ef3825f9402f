"""The Lookahead optimizer wrapper: an inner Adam takes k fast steps, then under torch.no_grad the slow
weights kept in the optimizer state move toward the fast ones (`slow.add_(fast_p - slow, alpha=alpha)`) and
are copied back into the parameters (`fast_p.copy_(slow)`).

source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/optim/lookahead.py (Lookahead kept:
update_slow, sync_lookahead, step; state_dict handling dropped) wrapping Adam, on a small MLP classifier with
random data, 30 steps with k = 5, then sync_lookahead() before evaluation.
"""
# %%
from collections import OrderedDict, defaultdict
from typing import Callable, Dict

import torch
import torch.nn as nn
from torch.optim.optimizer import Optimizer

torch.manual_seed(0)


class Lookahead(Optimizer):
    def __init__(self, base_optimizer, alpha=0.5, k=6):
        # NOTE super().__init__() not invoked
        if not 0.0 <= alpha <= 1.0:
            raise ValueError(f'Invalid slow update rate: {alpha}')
        if not 1 <= k:
            raise ValueError(f'Invalid lookahead steps: {k}')
        defaults = dict(lookahead_alpha=alpha, lookahead_k=k, lookahead_step=0)
        self._base_optimizer = base_optimizer
        self.param_groups = base_optimizer.param_groups
        self.defaults = base_optimizer.defaults
        self.defaults.update(defaults)
        self.state = defaultdict(dict)
        # manually add our defaults to the param groups
        for name, default in defaults.items():
            for group in self._base_optimizer.param_groups:
                group.setdefault(name, default)

        self._optimizer_step_pre_hooks: Dict[int, Callable] = OrderedDict()
        self._optimizer_step_post_hooks: Dict[int, Callable] = OrderedDict()

    @torch.no_grad()
    def update_slow(self, group):
        for fast_p in group["params"]:
            if fast_p.grad is None:
                continue
            param_state = self._base_optimizer.state[fast_p]
            if 'lookahead_slow_buff' not in param_state:
                param_state['lookahead_slow_buff'] = torch.empty_like(fast_p)
                param_state['lookahead_slow_buff'].copy_(fast_p)
            slow = param_state['lookahead_slow_buff']
            slow.add_(fast_p - slow, alpha=group['lookahead_alpha'])
            fast_p.copy_(slow)

    def sync_lookahead(self):
        for group in self._base_optimizer.param_groups:
            self.update_slow(group)

    @torch.no_grad()
    def step(self, closure=None):
        loss = self._base_optimizer.step(closure)
        for group in self._base_optimizer.param_groups:
            group['lookahead_step'] += 1
            if group['lookahead_step'] % group['lookahead_k'] == 0:
                self.update_slow(group)
        return loss


model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 3))
optimizer = Lookahead(torch.optim.Adam(model.parameters(), lr=1e-2), alpha=0.5, k=5)
loss_fn = nn.CrossEntropyLoss()
X = torch.randn(96, 8)
Y = X[:, :3].argmax(1)
# %%
model.train()
losses = []
for step in range(30):
    idx = torch.randint(0, 96, (16,))
    output = model(X[idx])
    loss = loss_fn(output, Y[idx])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())

optimizer.sync_lookahead()
model.eval()
with torch.no_grad():
    accuracy = (model(X).argmax(1) == Y).float().mean().item()
