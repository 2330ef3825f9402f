"""A deep ensemble: models and their optimizers held in lists, trained in one loop with zip().

source: https://github.com/google/uncertainty-baselines (deep ensembles: M independently trained members), as
written in many notebooks: `models = [Net() for _ in range(M)]`, `opts = [Adam(m.parameters()) ...]`; 25 steps.
"""
# %%
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
models = [nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1)) for _ in range(3)]
opts = [torch.optim.Adam(m.parameters(), lr=1e-2) for m in models]
X, Y = torch.randn(40, 3), torch.randn(40, 1)
# %%
for step in range(25):
    for m, o in zip(models, opts):
        o.zero_grad()
        F.mse_loss(m(X), Y).backward()
        o.step()
