"""Weight normalisation through torch.nn.utils.parametrizations.weight_norm on the Linear layers (weight split
into original0 = g and original1 = v, both trained).

source: https://pytorch.org/docs/stable/generated/torch.nn.utils.parametrizations.weight_norm.html (`m =
weight_norm(nn.Linear(20, 40), name='weight')`), in an MLP trained with Adam; random data, 30 steps.
"""
# %%
import torch
import torch.nn as nn
from torch.nn.utils.parametrizations import weight_norm

torch.manual_seed(0)
model = nn.Sequential(weight_norm(nn.Linear(20, 40), name='weight'), nn.ReLU(),
                      weight_norm(nn.Linear(40, 3)))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.CrossEntropyLoss()
X, Y = torch.randn(48, 20), torch.randint(0, 3, (48,))
# %%
for step in range(30):
    i = (step * 12) % 48
    optimizer.zero_grad()
    loss = criterion(model(X[i:i + 12]), Y[i:i + 12])
    loss.backward()
    optimizer.step()
