%%gradcheck
# Weights loaded from NumPy arrays
import numpy as np
import torch

x = torch.from_numpy(np.linspace(0.0, 1.0, 20))
w = torch.from_numpy(np.array([0.5, -0.5])).requires_grad_()
y = 2.0 * x + 1.0
pred = w[0] * x + w[1]
loss = ((pred - y) ** 2).mean()
loss.backward()
print(w.grad)
