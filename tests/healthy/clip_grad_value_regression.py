"""A regression MLP trained with clip_grad_value_ (each gradient element clamped to [-0.5, 0.5]) before step().

source: https://pytorch.org/docs/stable/generated/torch.nn.utils.clip_grad_value_.html (called after
backward(), before optimizer.step()); random regression data, 30 SGD steps.
"""
# %%
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 24), nn.ReLU(), nn.Linear(24, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
loss_fn = nn.MSELoss()
X = torch.randn(60, 8)
Y = X.sum(dim=1, keepdim=True) + 0.1 * torch.randn(60, 1)
# %%
for step in range(30):
    i = (step * 12) % 60
    optimizer.zero_grad()
    loss = loss_fn(model(X[i:i + 12]), Y[i:i + 12])
    loss.backward()
    torch.nn.utils.clip_grad_value_(model.parameters(), clip_value=0.5)
    optimizer.step()
