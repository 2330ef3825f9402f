"""Per-sample losses (reduction='none') weighted per example, then averaged with .mean() before backward().

source: https://pytorch.org/docs/stable/generated/torch.nn.CrossEntropyLoss.html (reduction='none' returns one
loss per sample) in the importance-weighting pattern `loss = (criterion(out, y) * w).mean()`
(https://discuss.pytorch.org/t/per-sample-weights-for-loss/45393); random data and weights, 30 steps.
"""
# %%
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(7, 16), nn.ReLU(), nn.Linear(16, 4))
criterion = nn.CrossEntropyLoss(reduction='none')
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
X, Y = torch.randn(50, 7), torch.randint(0, 4, (50,))
sample_weight = torch.rand(50) + 0.5
# %%
for step in range(30):
    i = (step * 10) % 50
    out = model(X[i:i + 10])
    per_sample = criterion(out, Y[i:i + 10])
    loss = (per_sample * sample_weight[i:i + 10]).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
