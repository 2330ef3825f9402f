"""An MLP regressor trained with RMSprop (alpha=0.99, momentum=0.9).

source: https://pytorch.org/docs/stable/generated/torch.optim.RMSprop.html, in the training loop of
https://pytorch.org/tutorials/beginner/basics/optimization_tutorial.html (zero_grad, forward, backward, step);
random regression data, 30 steps.
"""
# %%
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 1))
loss_fn = nn.MSELoss()
optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3, alpha=0.99, momentum=0.9)
X = torch.randn(64, 4)
Y = (X ** 2).sum(dim=1, keepdim=True)
# %%
for step in range(30):
    i = (step * 16) % 64
    pred = model(X[i:i + 16])
    loss = loss_fn(pred, Y[i:i + 16])
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
