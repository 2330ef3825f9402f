"""Gradients cleared with torch._foreach_zero_ instead of zero_grad (as fused / multi-tensor trainers do).

source: https://github.com/pytorch/pytorch/blob/main/torch/optim/optimizer.py (Optimizer.zero_grad with
set_to_none=False groups grads by device and calls torch._foreach_zero_), written out by hand; 30 steps.
"""
# %%
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
# %%
for step in range(30):
    x = torch.randn(16, 6)
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    torch._foreach_zero_(grads)
