%%gradcheck
# Fit a linear model on features that come from numpy
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(0)
features = rng.normal(size=(32, 3))
targets = features @ np.array([[1.0], [-2.0], [0.5]])
X = torch.from_numpy(features)
y = torch.from_numpy(targets).float()
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(5):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(X), y)
    loss.backward()
    optimizer.step()
