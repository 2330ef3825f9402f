"""Gradients dropped by hand with `p.grad = None` before each backward.

source: https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html ("Use parameter.grad = None instead of
model.zero_grad() or optimizer.zero_grad()"), 30 steps on random data.
"""
# %%
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
# %%
for step in range(30):
    for param in model.parameters():
        param.grad = None
    x = torch.randn(10, 4)
    loss = model(x).abs().mean()
    loss.backward()
    optimizer.step()
