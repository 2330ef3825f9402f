"""An explicit L2 penalty summed over the parameters, added to the loss each step.

source: https://discuss.pytorch.org/t/simple-l2-regularization/139 (the accepted answer's loop), with a tiny
synthetic classification set and 30 steps.
"""
# %%
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(64, 10), torch.randint(0, 3, (64,))
# %%
for step in range(30):
    optimizer.zero_grad()
    ce = F.cross_entropy(model(x), y)
    l2 = 0
    for p in model.parameters():
        l2 += p.norm()
    (ce + 1e-4 * l2).backward()
    optimizer.step()
