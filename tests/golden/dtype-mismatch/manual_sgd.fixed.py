%%gradcheck
# Manual gradient descent on a numpy dataset
import numpy as np
import torch

data = np.linspace(0, 1, 20).reshape(10, 2)
X = torch.tensor(data, dtype=torch.float32)
y = torch.ones(10, 1)
w = torch.zeros(2, 1, requires_grad=True)
for step in range(10):
    pred = X @ w
    loss = ((pred - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        w.grad.zero_()
