"""optimizer.zero_grad(set_to_none=False): gradients zeroed in place rather than set to None, each step.

source: https://pytorch.org/docs/stable/generated/torch.optim.Optimizer.zero_grad.html (the set_to_none
argument) in the loop of https://pytorch.org/tutorials/recipes/recipes/zeroing_out_gradients.html
(`optimizer.zero_grad()` at the start of each mini-batch); a small MLP, 30 Adam steps.
"""
# %%
import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(12, 24), nn.ReLU(), nn.Linear(24, 2))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
X, Y = torch.randn(60, 12), torch.randint(0, 2, (60,))
# %%
for i in range(30):
    j = (i * 12) % 60
    inputs, labels = X[j:j + 12], Y[j:j + 12]
    optimizer.zero_grad(set_to_none=False)
    outputs = net(inputs)
    loss = criterion(outputs, labels)
    loss.backward()
    optimizer.step()
